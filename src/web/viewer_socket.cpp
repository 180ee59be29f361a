#include "web/viewer_socket.hpp"

#include <spdlog/spdlog.h>

#include "web/web_context.hpp"
#include "web/wire_protocol.hpp"

namespace agentty::web {
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace http = boost::beast::http;

namespace {
// How long close() waits for its close frame to go out and be answered.
constexpr auto kCloseTimeout = std::chrono::seconds(5);

// Normal ends (the peer closed, stop() closed the socket) stay quiet.
bool quiet_end(beast::error_code ec) {
  return ec == websocket::error::closed || ec == boost::asio::error::operation_aborted ||
         ec == boost::asio::error::bad_descriptor;
}
}  // namespace

ViewerSocket::ViewerSocket(boost::asio::ip::tcp::socket&& socket,
                           std::shared_ptr<WebContext> context, std::string peer)
    : context_(std::move(context)),
      peer_(std::move(peer)),
      ws_(std::move(socket)),
      close_timer_(ws_.get_executor()) {}

void ViewerSocket::start(HttpRequest request) {
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
  ws_.async_accept(request,
                   [self = shared_from_this(), this](beast::error_code ec) { on_accept(ec); });
}

void ViewerSocket::shutdown() {
  finish();
}

void ViewerSocket::close(std::uint16_t code, const std::string& reason) {
  if (finished_ || closing_) return;
  closing_ = true;
  if (!open_) return finish();
  // Beast sends the frame once a write in flight is done: a peer that reads
  // nothing never lets it go out.
  close_timer_.expires_after(kCloseTimeout);
  close_timer_.async_wait([self = shared_from_this(), this](beast::error_code ec) {
    if (!ec) finish();
  });
  websocket::close_reason frame;
  frame.code = code;  // any code, not only close_code's names (4404)
  frame.reason = reason.substr(0, frame.reason.max_size());
  ws_.async_close(frame, [self = shared_from_this(), this](beast::error_code ec) {
    if (ec && !quiet_end(ec)) {
      spdlog::debug("web: viewer {}: close: {}", peer_, ec.message());
    }
    finish();
  });
}

void ViewerSocket::on_accept(beast::error_code ec) {
  if (ec || context_->stopped()) {
    if (ec) spdlog::debug("web: viewer {}: handshake failed: {}", peer_, ec.message());
    return finish();
  }
  open_ = true;
  on_open();
  if (!finished_) do_read();
}

void ViewerSocket::do_read() {
  ws_.async_read(buffer_, [self = shared_from_this(), this](beast::error_code ec, std::size_t) {
    on_read(ec);
  });
}

void ViewerSocket::on_read(beast::error_code ec) {
  if (ec) {
    if (!quiet_end(ec)) spdlog::debug("web: viewer {}: {}", peer_, ec.message());
    return finish();
  }
  std::string message = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  on_message(std::move(message), ws_.got_text());
  if (!finished_) do_read();
}

void ViewerSocket::write(std::vector<Frame> frames, bool binary) {
  if (finished_ || closing_ || writing() || frames.empty()) return;
  writing_ = std::move(frames);
  std::vector<boost::asio::const_buffer> buffers;
  buffers.reserve(writing_.size());
  for (const auto& frame : writing_) buffers.push_back(boost::asio::buffer(*frame));
  ws_.binary(binary);
  ws_.async_write(buffers, [self = shared_from_this(), this](beast::error_code ec, std::size_t) {
    on_write(ec);
  });
}

void ViewerSocket::on_write(beast::error_code ec) {
  writing_.clear();
  if (ec) {
    if (!quiet_end(ec)) spdlog::debug("web: viewer {}: write: {}", peer_, ec.message());
    return finish();
  }
  if (!finished_) on_write_done();
}

void ViewerSocket::finish() {
  if (finished_) return;
  finished_ = true;
  close_timer_.cancel();
  on_finish();
  context_->remove_connection(this);
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
}

}  // namespace agentty::web
