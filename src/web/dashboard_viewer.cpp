#include "web/dashboard_viewer.hpp"

#include <utility>

#include "web/web_context.hpp"

namespace agentty::web {

DashboardViewer::DashboardViewer(boost::asio::ip::tcp::socket&& socket,
                                 std::shared_ptr<WebContext> context, std::string peer)
    : ViewerSocket(std::move(socket), std::move(context), std::move(peer)) {}

DashboardViewer::~DashboardViewer() {
  finish();
}

void DashboardViewer::on_open() {
  context_->add_dashboard(std::static_pointer_cast<DashboardViewer>(shared_from_this()));
  send(context_->dashboard_message());
}

void DashboardViewer::send(std::shared_ptr<const std::string> message) {
  if (!open()) return;
  pending_ = std::move(message);
  if (!writing()) write_pending();
}

void DashboardViewer::write_pending() {
  if (pending_) write({std::exchange(pending_, nullptr)}, false);
}

void DashboardViewer::on_finish() {
  context_->remove_dashboard(this);
}

}  // namespace agentty::web
