#include "web/terminal_viewer.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "web/execution_feed.hpp"
#include "web/execution_summary.hpp"
#include "web/web_context.hpp"

namespace agentty::web {
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace http = boost::beast::http;

namespace {
// Output frames queued back to back go out as one WebSocket message of at
// most this many bytes: fewer syscalls for bulk output, no copies.
constexpr std::size_t kMaxCoalescedBytes = 256 * 1024;
constexpr auto kInputRefusalInterval = std::chrono::seconds(1);

// Whether output switches back from the alternate screen (a sequence split
// across two chunks is missed; the next snapshot repairs that).
bool leaves_alt_screen(std::string_view bytes) {
  for (std::string_view sequence : {"\x1b[?1049l", "\x1b[?1047l", "\x1b[?47l"}) {
    if (bytes.find(sequence) != std::string_view::npos) return true;
  }
  return false;
}

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
}  // namespace

TerminalViewer::TerminalViewer(boost::asio::ip::tcp::socket&& socket,
                               std::shared_ptr<WebContext> context,
                               std::shared_ptr<ExecutionFeed> feed, std::string peer)
    : ws_(std::move(socket)),
      context_(std::move(context)),
      feed_(std::move(feed)),
      peer_(std::move(peer)),
      who_(std::string(wire::kClientBrowser) + " " + peer_),
      queue_(context_->options().viewer_queue_bytes) {}

TerminalViewer::~TerminalViewer() {
  finish();
}

void TerminalViewer::start(HttpRequest request) {
  context_->add_connection(shared_from_this());
  beast::get_lowest_layer(ws_).expires_never();
  auto timeouts = websocket::stream_base::timeout::suggested(beast::role_type::server);
  timeouts.idle_timeout = std::chrono::seconds(120);
  timeouts.keep_alive_pings = true;
  ws_.set_option(timeouts);
  ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& response) {
    response.set(http::field::sec_websocket_protocol, wire::kSubprotocol);
    response.set(http::field::server, "agentty");
  }));
  ws_.read_message_max(wire::kMaxMessageBytes);
  ws_.auto_fragment(false);
  ws_.async_accept(request, [self = self()](beast::error_code ec) { self->on_accept(ec); });
}

void TerminalViewer::shutdown() {
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
  finish();
}

void TerminalViewer::on_accept(beast::error_code ec) {
  if (ec || context_->stopped()) {
    if (ec) spdlog::debug("web: terminal viewer {}: handshake failed: {}", peer_, ec.message());
    return finish();
  }
  spdlog::info("web: viewer {} watches {}", peer_, feed_->execution().id());
  send_state();
  queue_snapshot();
  feed_->join(this);
  joined_ = true;
  pump();
  do_read();
}

void TerminalViewer::do_read() {
  ws_.async_read(buffer_, [self = self()](beast::error_code ec, std::size_t bytes) {
    self->on_read(ec, bytes);
  });
}

void TerminalViewer::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    if (ec != websocket::error::closed && ec != boost::asio::error::operation_aborted) {
      spdlog::debug("web: viewer {}: {}", peer_, ec.message());
    }
    return finish();
  }
  std::string message = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  if (ws_.got_text()) {
    handle_control(message);
  } else {
    handle_input(message);
  }
  if (!finished_) do_read();
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
  if (finished_) return;
  queue_.push_control(wire::encode(viewer_state(feed_->execution(), who_)));
  if (queue_.control_overflow()) {
    spdlog::warn("web: viewer {} does not read its messages; closing it", peer_);
    return shutdown();
  }
  pump();
}

void TerminalViewer::send_output(const std::shared_ptr<const std::string>& chunk,
                                 std::uint64_t start_seq) {
  if (finished_) return;
  std::uint64_t end_seq = start_seq + chunk->size();
  if (end_seq <= next_seq_) return;  // already covered by the snapshot
  if (start_seq != next_seq_) {
    queue_.drop_output();  // a gap: only a snapshot can repair it
  } else {
    queue_.push_output(chunk);
  }
  next_seq_ = end_seq;
  if (snapshot_in_alt_screen_ && leaves_alt_screen(*chunk)) {
    snapshot_in_alt_screen_ = false;
    return request_resync();
  }
  pump();
}

void TerminalViewer::request_resync() {
  if (finished_) return;
  queue_.drop_output();
  pump();
}

void TerminalViewer::queue_snapshot() {
  auto& execution = feed_->execution();
  const auto& screen = execution.screen();
  wire::Snapshot snapshot{screen.size(), execution.log().latest_seq()};
  queue_.push_snapshot(wire::encode(snapshot), screen.render_ansi());
  next_seq_ = snapshot.seq;
  snapshot_in_alt_screen_ = screen.modes().alt_screen;
}

void TerminalViewer::pump() {
  if (finished_ || !writing_.empty()) return;
  if (queue_.empty()) {
    // Snapshots are taken from a posted handler, never from inside the
    // execution's output pipeline (this may run in its listener).
    if (queue_.resync_needed() && !paused_ && !resync_posted_) {
      resync_posted_ = true;
      boost::asio::post(ws_.get_executor(), [self = self()] {
        self->resync_posted_ = false;
        if (self->finished_ || !self->queue_.resync_needed()) return;
        self->queue_snapshot();
        self->pump();
      });
    }
    return;
  }
  if (paused_ && queue_.front().binary) return;
  ViewerFrame frame = queue_.pop();
  std::vector<boost::asio::const_buffer> buffers{boost::asio::buffer(*frame.bytes)};
  std::size_t total = frame.bytes->size();
  writing_.push_back(std::move(frame.bytes));
  while (frame.output && !queue_.empty() && queue_.front().output &&
         total + queue_.front().bytes->size() <= kMaxCoalescedBytes) {
    ViewerFrame next = queue_.pop();
    buffers.push_back(boost::asio::buffer(*next.bytes));
    total += next.bytes->size();
    writing_.push_back(std::move(next.bytes));
  }
  ws_.binary(frame.binary);
  ws_.async_write(buffers, [self = self()](beast::error_code ec, std::size_t bytes) {
    self->on_write(ec, bytes);
  });
}

void TerminalViewer::on_write(beast::error_code ec, std::size_t) {
  writing_.clear();
  if (ec) {
    if (ec != boost::asio::error::operation_aborted) {
      spdlog::debug("web: viewer {}: write: {}", peer_, ec.message());
    }
    return finish();
  }
  pump();
}

void TerminalViewer::finish() {
  if (finished_) return;
  finished_ = true;
  auto& execution = feed_->execution();
  if (execution.held_by() && *execution.held_by() == who_) {
    if (execution.release(who_)) context_->audit("release", execution, who_, "viewer disconnected");
  }
  if (joined_) feed_->leave(this);
  joined_ = false;
  context_->remove_connection(this);
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
}

}  // namespace agentty::web
