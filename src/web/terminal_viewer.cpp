#include "web/terminal_viewer.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "web/execution_feed.hpp"
#include "web/execution_summary.hpp"
#include "web/web_context.hpp"

namespace agentty::web {

namespace {
// Output frames queued back to back go out as one WebSocket message of at
// most this many bytes: fewer syscalls for bulk output, no copies.
constexpr std::size_t kMaxCoalescedBytes = 256 * 1024;
constexpr auto kInputRefusalInterval = std::chrono::seconds(1);
// History sent with a snapshot (the page keeps 5000 lines): enough to scroll
// back through what a flood or a reconnect skipped, bounded per viewer.
constexpr std::size_t kSnapshotScrollbackLines = 2000;
constexpr std::size_t kSnapshotScrollbackBytes = 256 * 1024;
// History added by a `keeps_history` snapshot (ten a second in a flood): the
// newest lines that scrolled off since the last one, at most this much; a
// line in the history says how many more scrolled by.
constexpr std::size_t kFloodFrameLines = 1000;
constexpr std::size_t kFloodFrameBytes = 64 * 1024;

// Whether output switches back from the alternate screen (a sequence split
// across two chunks is missed; the next snapshot repairs that).
bool leaves_alt_screen(std::string_view bytes) {
  for (std::string_view sequence : {"\x1b[?1049l", "\x1b[?1047l", "\x1b[?47l"}) {
    if (bytes.find(sequence) != std::string_view::npos) return true;
  }
  return false;
}

// The screen's newest scrolled-off lines (styled: the history keeps the
// program's colours), at most `max_lines` and `max_bytes`.
std::vector<std::string> scrollback_tail(const session::Screen& screen, std::size_t max_lines,
                                         std::size_t max_bytes) {
  auto lines = screen.styled_scrollback(max_lines);
  std::size_t first = lines.size();
  std::size_t bytes = 0;
  while (first > 0 && bytes + lines[first - 1].size() + 2 <= max_bytes) {
    bytes += lines[--first].size() + 2;
  }
  lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(first));
  return lines;
}

std::string skipped_lines_notice(std::uint64_t skipped) {
  return "\x1b[0;2;3m[agentty: " + std::to_string(skipped) +
         " more lines scrolled by here, too fast to show]\x1b[0m";
}

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
}  // namespace

TerminalViewer::TerminalViewer(boost::asio::ip::tcp::socket&& socket,
                               std::shared_ptr<WebContext> context,
                               std::shared_ptr<ExecutionFeed> feed, std::string peer)
    : ViewerSocket(std::move(socket), std::move(context), std::move(peer)),
      feed_(std::move(feed)),
      who_(std::string(wire::kClientBrowser) + " " + peer_),
      queue_(context_->options().viewer_queue_bytes) {}

TerminalViewer::~TerminalViewer() {
  finish();
}

void TerminalViewer::on_open() {
  spdlog::info("web: viewer {} watches {}", peer_, feed_->execution().id());
  // Removed during the handshake: the tick that closes its viewers has passed.
  if (context_->registry().find(feed_->execution().id()).get() != &feed_->execution()) {
    return execution_removed();
  }
  send_state();
  queue_snapshot();
  feed_->join(this);
  joined_ = true;
  pump();
}

void TerminalViewer::on_message(std::string message, bool text) {
  if (text) {
    handle_control(message);
  } else {
    handle_input(message);
  }
}

void TerminalViewer::handle_control(std::string_view text) {
  auto message = wire::decode_client_message(text);
  if (!message) return refuse("message", message.error());
  std::visit(Overloaded{
                 [&](const wire::TakeOver& m) { take_over(m); },
                 [&](const wire::Release&) { release(); },
                 [&](const wire::Resize& m) { resize(m.size); },
                 [&](const wire::Pause&) { paused_ = true; },
                 [&](const wire::Resume&) {
                   paused_ = false;
                   pump();
                 },
             },
             *message);
}

void TerminalViewer::handle_input(std::string_view bytes) {
  auto& execution = feed_->execution();
  if (!(execution.held_by() && *execution.held_by() == who_)) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_input_refusal_ < kInputRefusalInterval) return;
    last_input_refusal_ = now;
    // Taking over cannot help once the program has ended.
    if (execution.finished()) {
      return refuse("input", "execution " + execution.id() + " has ended (" +
                                 session::to_string(execution.status()) +
                                 "); nothing was typed into it.");
    }
    return refuse("input", "read-only: take over to type into this terminal");
  }
  if (auto written = execution.write(bytes, session::InputSource::human); !written) {
    refuse("input", written.error());
  }
}

void TerminalViewer::take_over(const wire::TakeOver& message) {
  auto& execution = feed_->execution();
  bool holding = execution.held_by() && *execution.held_by() == who_;
  if (!holding) who_ = message.client + " " + peer_;
  auto taken = execution.take_over(who_, message.size);
  if (!taken) {
    context_->audit("takeover_refused", execution, who_, taken.error());
    return refuse(std::string(wire::kMessageTakeOver), taken.error());
  }
  if (!holding) context_->audit("takeover", execution, who_);
  send_state();  // take_over notifies only when the state changed
}

void TerminalViewer::release() {
  auto& execution = feed_->execution();
  if (!(execution.held_by() && *execution.held_by() == who_)) {
    return refuse(std::string(wire::kMessageRelease), "you do not hold this execution");
  }
  if (auto released = execution.release(who_); !released) {
    return refuse(std::string(wire::kMessageRelease), released.error());
  }
  context_->audit("release", execution, who_);
}

void TerminalViewer::resize(pty::TerminalSize size) {
  auto& execution = feed_->execution();
  if (!(execution.held_by() && *execution.held_by() == who_)) {
    return refuse(std::string(wire::kMessageResize), "only the viewer holding it sets the size");
  }
  if (execution.finished() || execution.size() == size) return;
  execution.resize(size, session::InputSource::human);
  // Resizing is not a registry event: tell every viewer the new size.
  feed_->broadcast_state();
}

void TerminalViewer::refuse(std::string action, std::string message) {
  queue_.push_control(wire::encode(wire::Refused{std::move(action), std::move(message)}));
  if (queue_.control_overflow()) {
    spdlog::warn("web: viewer {} does not read its messages; closing it", peer_);
    return shutdown();
  }
  pump();
}

void TerminalViewer::send_state() {
  if (finished()) return;
  queue_.push_control(wire::encode(viewer_state(feed_->execution(), who_)));
  if (queue_.control_overflow()) {
    spdlog::warn("web: viewer {} does not read its messages; closing it", peer_);
    return shutdown();
  }
  pump();
}

void TerminalViewer::send_output(const std::shared_ptr<const std::string>& chunk,
                                 std::uint64_t start_seq) {
  if (finished()) return;
  std::uint64_t end_seq = start_seq + chunk->size();
  if (end_seq <= next_seq_) return;  // already covered by the snapshot
  if (start_seq != next_seq_) {
    queue_.drop_output();  // a gap: only a snapshot can repair it
  } else if (queue_.push_output(chunk)) {
    client_has_last_frame_ = false;
  }
  next_seq_ = end_seq;
  if (snapshot_in_alt_screen_ && leaves_alt_screen(*chunk)) {
    snapshot_in_alt_screen_ = false;
    return request_resync();
  }
  pump();
}

void TerminalViewer::request_resync() {
  if (finished()) return;
  queue_.drop_output();
  pump();
}

void TerminalViewer::execution_removed() {
  // At most 123 bytes (a close frame's reason); an id is 12.
  close(wire::kCloseExecutionRemoved, "execution " + feed_->execution().id() +
                                          " was removed (cleanup or record retention); "
                                          "nothing more to show");
}

void TerminalViewer::queue_snapshot() {
  auto& execution = feed_->execution();
  const auto& screen = execution.screen();
  wire::Snapshot snapshot{screen.size(), execution.log().latest_seq()};
  std::string redraw = screen.render_ansi();
  bool alt_screen = screen.modes().alt_screen;
  std::uint64_t scrolled_off = screen.scrolled_off_lines();
  int rows = screen.size().rows;
  // A client showing our last redraw, on the main screen, at the same size,
  // is only told what changed: its history and scroll position stay. After
  // a flood whose frames skipped lines, a full snapshot brings the newest
  // history back whole.
  bool continues = client_has_last_frame_ && !snapshot_in_alt_screen_ && !alt_screen &&
                   frame_size_ == screen.size() && scrolled_off >= history_seen_ &&
                   (feed_->flooding() || !history_skipped_);
  if (continues) {
    std::uint64_t fresh = scrolled_off - history_seen_;
    auto lines =
        scrollback_tail(screen, std::min<std::uint64_t>(fresh, kFloodFrameLines), kFloodFrameBytes);
    if (lines.size() < fresh) {
      lines.insert(lines.begin(), skipped_lines_notice(fresh - lines.size()));
      history_skipped_ = true;
    }
    snapshot.keeps_history = true;
    snapshot.scrollback_bytes = wire::continue_history(redraw, lines, rows);
  } else if (feed_->flooding() && client_has_last_frame_) {
    // Ten of these a second (the alternate screen, a resize): no history;
    // the first snapshot after the flood brings it.
    history_skipped_ = true;
  } else {
    auto lines = scrollback_tail(screen, kSnapshotScrollbackLines, kSnapshotScrollbackBytes);
    snapshot.scrollback_bytes = wire::insert_scrollback(redraw, lines, rows);
    history_skipped_ = false;
  }
  queue_.push_snapshot(wire::encode(snapshot), std::move(redraw));
  next_seq_ = snapshot.seq;
  snapshot_in_alt_screen_ = alt_screen;
  client_has_last_frame_ = true;
  frame_size_ = screen.size();
  history_seen_ = scrolled_off;
}

void TerminalViewer::pump() {
  if (finished() || writing()) return;
  if (queue_.empty()) {
    // Snapshots are taken from a posted handler, never from inside the
    // execution's output pipeline (this may run in its listener).
    if (queue_.resync_needed() && !paused_ && !resync_posted_) {
      resync_posted_ = true;
      auto self = std::static_pointer_cast<TerminalViewer>(shared_from_this());
      boost::asio::post(executor(), [self] {
        self->resync_posted_ = false;
        if (self->finished() || !self->queue_.resync_needed()) return;
        self->queue_snapshot();
        self->pump();
      });
    }
    return;
  }
  if (paused_ && queue_.front().binary) {
    // A pause holds output back, not answers: refusals and state still go.
    auto control = queue_.pop_control_behind_output();
    if (control) write({std::move(control->bytes)}, false);
    return;
  }
  ViewerFrame frame = queue_.pop();
  std::size_t total = frame.bytes->size();
  std::vector<Frame> frames{std::move(frame.bytes)};
  while (frame.output && !queue_.empty() && queue_.front().output &&
         total + queue_.front().bytes->size() <= kMaxCoalescedBytes) {
    total += queue_.front().bytes->size();
    frames.push_back(queue_.pop().bytes);
  }
  write(std::move(frames), frame.binary);
}

void TerminalViewer::on_finish() {
  auto& execution = feed_->execution();
  if (execution.held_by() && *execution.held_by() == who_) {
    if (execution.release(who_)) context_->audit("release", execution, who_, "viewer disconnected");
  }
  if (joined_) feed_->leave(this);
  joined_ = false;
}

}  // namespace agentty::web
