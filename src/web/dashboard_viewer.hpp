// DashboardViewer: one WebSocket showing the list of executions. The server
// pushes a whole `executions` message on every change; only the newest
// unsent one is kept, so a slow dashboard costs one message, not a backlog.
//
// Beast-style do_x/on_x callbacks; the one I/O event loop.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <memory>
#include <string>

#include "web/connection.hpp"
#include "web/request_guard.hpp"

namespace agentty::web {

class WebContext;

class DashboardViewer : public Connection {
 public:
  DashboardViewer(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<WebContext> context,
                  std::string peer);
  ~DashboardViewer() override;

  void start(HttpRequest request);
  void shutdown() override;
  void send(std::shared_ptr<const std::string> message);

 private:
  std::shared_ptr<DashboardViewer> self() {
    return std::static_pointer_cast<DashboardViewer>(shared_from_this());
  }
  void on_accept(boost::beast::error_code ec);
  void do_read();
  void do_write();
  void finish();

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  boost::beast::flat_buffer buffer_;
  std::shared_ptr<WebContext> context_;
  std::string peer_;
  std::shared_ptr<const std::string> pending_;
  std::shared_ptr<const std::string> writing_;
  bool accepted_ = false;
  bool finished_ = false;
};

}  // namespace agentty::web
