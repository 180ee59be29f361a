// Execution: the screen model's pace. A catch-up that output starts feeds
// libvterm for at most ScreenFeeder::kCatchUpBudget; what is left goes on in
// later turns of the loop, so the other executions and tool calls are served
// in between, and while the queue would take longer than
// ScreenFeeder::kMaxLag the program's output waits (the program blocks
// writing to its terminal, as on a slow one; over SSH its channel's window
// stays shut). A program printing full-screen clears as fast as it could
// held the loop for seconds per megabyte. What is still queued when the
// program ends is caught up at the same pace (settle_screen).
#include <algorithm>

#include "session/execution.hpp"

namespace agentty::session {

// Replies to the terminal queries fed so far go to the program.
void Execution::write_screen_replies() {
  std::string replies = feeder_.take_replies();
  if (!replies.empty() && channel_ && !channel_->finished()) channel_->write(replies);
}

void Execution::pace_screen() {
  if (!feeder_.wants_turn()) return;
  if (feeder_.lagging() && !output_paused_ && channel_ && !channel_->finished()) {
    if (!channel_->pause_output(true)) {
      // A backend that cannot pause would let the queue grow without
      // bound: keep up now, as before pacing.
      feeder_.catch_up();
      return write_screen_replies();
    }
    output_paused_ = true;
  }
  schedule_screen_pace();
}

void Execution::schedule_screen_pace() {
  if (screen_pace_scheduled_) return;
  screen_pace_scheduled_ = true;
  screen_pace_timer_.expires_after(std::chrono::steady_clock::duration::zero());
  screen_pace_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the execution ended or is being destroyed
    screen_pace_scheduled_ = false;
    feeder_.catch_up_for(ScreenFeeder::kCatchUpBudget);
    if (screen_settling_) {
      if (feeder_.cut_short()) return schedule_screen_pace();
      return end_screen_settling();
    }
    write_screen_replies();
    if (output_paused_ && !feeder_.lagging()) resume_output();
    follow_screen_lag();
    pace_screen();
  });
}

// The output calls shrink as the queue nears lagging(), so a pause stops
// within a small overshoot; cheap output comes in whole reads.
void Execution::follow_screen_lag() {
  if (!channel_ || channel_->finished()) return;
  const std::size_t slice = std::min(feeder_.bytes_before_lag(), pty::PtyChannel::kMaxOutputSlice);
  if (slice == output_slice_) return;
  output_slice_ = slice;
  channel_->set_output_slice(slice);
}

// The program has ended with more queued for the screen than a look should
// catch up at once (the window of remote output that came at once after a
// hang-up: seconds of libvterm work for a flood of clears). The catch-up
// goes on in paced turns and the screen is frozen after it; screen_settling()
// tells a look to wait for that.
void Execution::settle_screen() {
  screen_settling_ = true;
  schedule_screen_pace();
}

void Execution::end_screen_settling() {
  screen_settling_ = false;
  feeder_.finish();
  changed_.notify();
}

void Execution::resume_output() {
  output_paused_ = false;
  if (channel_ && !channel_->finished()) channel_->pause_output(false);
}

}  // namespace agentty::session
