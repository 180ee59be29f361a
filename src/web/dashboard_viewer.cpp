#include "web/dashboard_viewer.hpp"

#include <spdlog/spdlog.h>

#include "web/web_context.hpp"
#include "web/wire_protocol.hpp"

namespace agentty::web {
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace http = boost::beast::http;

DashboardViewer::DashboardViewer(boost::asio::ip::tcp::socket&& socket,
                                 std::shared_ptr<WebContext> context, std::string peer)
    : ws_(std::move(socket)), context_(std::move(context)), peer_(std::move(peer)) {}

DashboardViewer::~DashboardViewer() {
  finish();
}

void DashboardViewer::start(HttpRequest request) {
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
  ws_.async_accept(request, [self = self()](beast::error_code ec) { self->on_accept(ec); });
}

void DashboardViewer::shutdown() {
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
  finish();
}

void DashboardViewer::on_accept(beast::error_code ec) {
  if (ec || context_->stopped()) return finish();
  accepted_ = true;
  context_->add_dashboard(self());
  send(context_->dashboard_message());
  do_read();
}

// Dashboards send nothing we act on; the pending read keeps control frames flowing.
void DashboardViewer::do_read() {
  ws_.async_read(buffer_, [self = self()](beast::error_code ec, std::size_t) {
    if (ec) return self->finish();
    self->buffer_.consume(self->buffer_.size());
    self->do_read();
  });
}

void DashboardViewer::send(std::shared_ptr<const std::string> message) {
  if (finished_ || !accepted_) return;
  pending_ = std::move(message);
  if (!writing_) do_write();
}

void DashboardViewer::do_write() {
  writing_ = std::move(pending_);
  pending_.reset();
  ws_.text(true);
  ws_.async_write(boost::asio::buffer(*writing_),
                  [self = self()](beast::error_code ec, std::size_t) {
                    self->writing_.reset();
                    if (ec) return self->finish();
                    if (self->pending_ && !self->finished_) self->do_write();
                  });
}

void DashboardViewer::finish() {
  if (finished_) return;
  finished_ = true;
  context_->remove_dashboard(this);
  context_->remove_connection(this);
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
}

}  // namespace agentty::web
