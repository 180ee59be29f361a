// Execution: who holds it. A person's takeover and release (the agent's
// writes are refused meanwhile, and the timeout is paused), the agent's
// handoff request, and the hold of an SSH login a person completes.
#include <algorithm>
#include <utility>

#include "session/execution.hpp"
#include "session/recorder.hpp"

namespace agentty::session {

Expected<void> Execution::take_over(const std::string& who, std::optional<pty::TerminalSize> size) {
  if (finished()) return make_error("execution " + id_ + " has ended; nothing to take over.");
  if (held_by_ && *held_by_ != who) {
    return make_error("already held by " + *held_by_ + "; ask them to release it first.");
  }
  if (!held_by_ && spec_.timeout.count() > 0 && !timed_out_) {
    timeout_left_ = std::max<std::chrono::steady_clock::duration>(
        timeout_timer_.expiry() - std::chrono::steady_clock::now(), {});
    timeout_timer_.cancel();
  }
  held_by_ = who;
  handoff_reason_.reset();
  if (recorder_) recorder_->marker("takeover by " + who);
  if (size) resize(*size, InputSource::human);
  state_changed();
  return {};
}

Expected<void> Execution::release(const std::string& who) {
  if (!held_by_) return {};
  if (*held_by_ != who) return make_error("held by " + *held_by_ + ", not by " + who + ".");
  held_by_.reset();
  if (auto left = std::exchange(timeout_left_, std::nullopt); left && !finished()) {
    arm_timeout(*left);
  }
  if (recorder_) recorder_->marker("released by " + who);
  if (!finished() && !(size() == agent_size_)) resize(agent_size_, InputSource::human);
  state_changed();
  return {};
}

void Execution::request_handoff(std::string reason) {
  handoff_reason_ = std::move(reason);
  if (recorder_) recorder_->marker("handoff requested: " + redacted(*handoff_reason_));
  state_changed();
}

bool Execution::withdraw_handoff() {
  if (held_by_ || login_hold_) return false;
  if (!handoff_reason_) return true;
  handoff_reason_.reset();
  if (recorder_) recorder_->marker("handoff withdrawn");
  state_changed();
  return true;
}

void Execution::hold_for_login(std::string reason) {
  login_hold_ = true;
  handoff_reason_ = std::move(reason);
  if (recorder_) recorder_->marker("handoff: " + redacted(*handoff_reason_));
  state_changed();
}

void Execution::end_login_hold() {
  if (!login_hold_) return;
  login_hold_ = false;
  handoff_reason_.reset();
  if (recorder_) recorder_->marker("logged in");
  if (held_by_) {
    // A copy: release() resets held_by_, then names who released it.
    (void)release(std::string(*held_by_));  // notifies
    return;
  }
  state_changed();
}

}  // namespace agentty::session
