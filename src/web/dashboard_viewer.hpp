// DashboardViewer: one WebSocket showing the list of executions. The server
// pushes a whole `executions` message on every change; only the newest
// unsent one is kept, so a slow dashboard costs one message, not a backlog.
//
// The socket plumbing (upgrade, reads, one write in flight) is ViewerSocket's;
// the one I/O event loop.
#pragma once

#include <memory>
#include <string>

#include "web/viewer_socket.hpp"

namespace agentty::web {

class DashboardViewer : public ViewerSocket {
 public:
  DashboardViewer(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<WebContext> context,
                  std::string peer);
  ~DashboardViewer() override;

  void send(std::shared_ptr<const std::string> message);

 private:
  void on_open() override;
  void on_message(std::string, bool) override {}  // dashboards send nothing we act on
  void on_write_done() override { write_pending(); }
  void on_finish() override;
  void write_pending();

  std::shared_ptr<const std::string> pending_;
};

}  // namespace agentty::web
