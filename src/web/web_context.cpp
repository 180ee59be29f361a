#include "web/web_context.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <vector>

#include "web/dashboard_viewer.hpp"
#include "web/execution_feed.hpp"
#include "web/execution_summary.hpp"
#include "web/wire_protocol.hpp"

namespace agentty::web {

namespace {
constexpr auto kTickInterval = std::chrono::seconds(1);
// Dashboard lists: at most one per interval, and making them takes at most a
// tenth of the loop's time (with thousands of records one takes tens of ms).
constexpr auto kDashboardPushInterval = std::chrono::milliseconds(100);
constexpr int kDashboardPushCostFactor = 9;

std::string now_iso() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return text;
}
std::shared_ptr<const std::string> encode_executions(nlohmann::json list) {
  nlohmann::json message{{"type", wire::kMessageExecutions}, {"executions", std::move(list)}};
  return std::make_shared<const std::string>(
      message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

WebContext::WebContext(boost::asio::io_context& io, session::Registry& registry, WebOptions options,
                       std::string secret, std::uint16_t port, std::string url_host)
    : io_(io),
      registry_(registry),
      options_(std::move(options)),
      secret_(std::move(secret)),
      port_(port),
      url_host_(std::move(url_host)),
      guard_(secret_, port_, options_.host),
      tick_timer_(io),
      dashboard_push_timer_(io) {}

WebContext::~WebContext() {
  if (observer_token_ != 0) registry_.remove_observer(observer_token_);
}

void WebContext::start() {
  observer_token_ =
      registry_.add_observer([weak = weak_from_this()](session::Execution& execution) {
        if (auto self = weak.lock()) self->on_execution_changed(execution);
      });
}

void WebContext::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (observer_token_ != 0) registry_.remove_observer(observer_token_);
  observer_token_ = 0;
  tick_timer_.cancel();
  dashboard_push_timer_.cancel();
  // shutdown() may remove entries: close a copy.
  auto connections = connections_;
  for (auto& [raw, weak] : connections) {
    if (auto connection = weak.lock()) connection->shutdown();
  }
}

std::string WebContext::base_url() const {
  return "http://" + url_host_ + ":" + std::to_string(port_);
}

bool WebContext::make_room() {
  if (connections_.size() < options_.max_connections) return true;
  std::shared_ptr<Connection> longest_waiting;
  std::chrono::steady_clock::time_point since;
  for (auto& [raw, weak] : connections_) {
    auto connection = weak.lock();
    auto waiting = connection ? connection->waiting_since() : std::nullopt;
    if (waiting && (!longest_waiting || *waiting < since)) {
      longest_waiting = std::move(connection);
      since = *waiting;
    }
  }
  if (!longest_waiting) return false;
  spdlog::debug("web: closed a connection that sent no request, to make room for a new one");
  longest_waiting->shutdown();  // removes it
  return connections_.size() < options_.max_connections;
}

bool WebContext::begin_refusing() {
  if (refusing_ >= kMaxRefusing) return false;
  ++refusing_;
  return true;
}

void WebContext::add_connection(const std::shared_ptr<Connection>& connection) {
  connections_[connection.get()] = connection;
}

void WebContext::remove_connection(Connection* connection) {
  connections_.erase(connection);
}

std::shared_ptr<ExecutionFeed> WebContext::feed_for(
    const std::shared_ptr<session::Execution>& execution) {
  auto& slot = feeds_[execution->id()];
  if (auto feed = slot.lock()) return feed;
  auto feed = std::make_shared<ExecutionFeed>(io_, execution, options_);
  slot = feed;
  arm_tick();
  return feed;
}

void WebContext::add_dashboard(const std::shared_ptr<DashboardViewer>& dashboard) {
  dashboards_[dashboard.get()] = dashboard;
  arm_tick();
}

void WebContext::remove_dashboard(DashboardViewer* dashboard) {
  dashboards_.erase(dashboard);
}

nlohmann::json WebContext::execution_list() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& execution : registry_.list()) list.push_back(execution_summary(*execution));
  return list;
}

std::shared_ptr<const std::string> WebContext::dashboard_message() const {
  return encode_executions(execution_list());
}

void WebContext::audit(const std::string& event, const session::Execution& execution,
                       const std::string& who, const std::string& detail) {
  spdlog::info("web: {} of {} by {}{}{}", event, execution.id(), who, detail.empty() ? "" : ": ",
               detail);
  if (!options_.audit) return;
  nlohmann::json record{
      {"time", now_iso()}, {"event", event}, {"execution_id", execution.id()}, {"who", who}};
  if (!detail.empty()) record["detail"] = detail;
  options_.audit(record);
}

void WebContext::on_execution_changed(session::Execution& execution) {
  if (stopped_) return;
  if (auto it = feeds_.find(execution.id()); it != feeds_.end()) {
    if (auto feed = it->second.lock()) {
      feed->broadcast_state();
    } else {
      feeds_.erase(it);
    }
  }
  schedule_dashboard_push();
}

// Changes until the next push is due (exit, then held cleared; a burst of
// executes) make one push; after a quiet spell it goes out at once.
void WebContext::schedule_dashboard_push() {
  if (dashboard_push_armed_ || dashboards_.empty()) return;
  dashboard_push_armed_ = true;
  dashboard_push_timer_.expires_at(
      std::max(next_dashboard_push_, std::chrono::steady_clock::now()));
  dashboard_push_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self) return;  // stopped
    self->dashboard_push_armed_ = false;
    if (!self->stopped_) self->push_dashboards(false);
  });
}

void WebContext::push_dashboards(bool only_if_changed) {
  if (dashboards_.empty()) return;
  const auto began = std::chrono::steady_clock::now();
  auto list = execution_list();
  auto view = stable_view(list).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const auto took = std::chrono::steady_clock::now() - began;
  next_dashboard_push_ = began + std::max<std::chrono::steady_clock::duration>(
                                     kDashboardPushInterval, kDashboardPushCostFactor * took);
  if (only_if_changed && view == last_dashboard_view_) return;
  last_dashboard_view_ = std::move(view);
  auto message = encode_executions(std::move(list));
  std::vector<std::shared_ptr<DashboardViewer>> live;
  for (auto& [raw, weak] : dashboards_) {
    if (auto dashboard = weak.lock()) live.push_back(std::move(dashboard));
  }
  for (auto& dashboard : live) dashboard->send(message);
}

void WebContext::arm_tick() {
  if (tick_armed_ || stopped_) return;
  tick_armed_ = true;
  tick_timer_.expires_after(kTickInterval);
  tick_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    auto self = weak.lock();
    if (!self) return;
    self->tick_armed_ = false;
    if (ec || self->stopped_) return;
    self->on_tick();
    // Viewers that went away leave expired feeds, dropped by on_tick.
    if (!self->feeds_.empty() || !self->dashboards_.empty()) self->arm_tick();
  });
}

void WebContext::on_tick() {
  for (auto it = feeds_.begin(); it != feeds_.end();) {
    auto feed = it->second.lock();
    // Removing a record (cleanup, retention) is no registry event: a viewer
    // of it would otherwise stay open, holding the record's output, forever.
    if (feed && registry_.find(it->first).get() != &feed->execution()) {
      feed->execution_removed();
      feed.reset();
    }
    if (feed) {
      feed->refresh_state();
      ++it;
    } else {
      it = feeds_.erase(it);
    }
  }
  // A change's push is coming, or one went out a moment ago.
  if (!dashboard_push_armed_ && std::chrono::steady_clock::now() >= next_dashboard_push_)
    push_dashboards(true);
}

}  // namespace agentty::web
