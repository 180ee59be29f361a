// WebContext: what the web server and every connection it accepted share:
// the registry, the options, the guard, the live connections, the execution
// feeds (one per execution that has viewers) and the dashboards.
//
// Owned by shared_ptr: the server holds one, and so does every connection,
// so a handler that completes after stop() still finds it. Registry observer
// callbacks and a one-second tick (waiting_for_input and idle time change
// without a registry event) push state to viewers and dashboards; the tick
// also closes the viewers of records the registry removed. It runs only
// while someone watches: an idle server does not wake up. A dashboard's
// list holds every record, so it is sent at most every 100 ms (longer when
// making it takes long), not at every change: at two per execute, a
// dashboard left open made each execute cost time in proportion to the
// server's history.
//
// Threading: used only on the one I/O event loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "session/registry.hpp"
#include "web/connection.hpp"
#include "web/request_guard.hpp"
#include "web/web_options.hpp"

namespace agentty::web {

class ExecutionFeed;
class DashboardViewer;

class WebContext : public std::enable_shared_from_this<WebContext> {
 public:
  WebContext(boost::asio::io_context& io, session::Registry& registry, WebOptions options,
             std::string secret, std::uint16_t port, std::string url_host);
  ~WebContext();
  WebContext(const WebContext&) = delete;
  WebContext& operator=(const WebContext&) = delete;

  // Subscribes to the registry; stop() undoes it, stops the tick and
  // closes every connection.
  void start();
  void stop();
  bool stopped() const { return stopped_; }

  boost::asio::io_context& io() { return io_; }
  session::Registry& registry() { return registry_; }
  const WebOptions& options() const { return options_; }
  const RequestGuard& guard() const { return guard_; }
  std::uint16_t port() const { return port_; }
  // "http://127.0.0.1:PORT"; the secret goes in the fragment, added by callers.
  std::string base_url() const;
  const std::string& secret() const { return secret_; }

  // Whether a new connection fits under max_connections, after closing the
  // one that has waited longest for a request if it had to: connections that
  // never send a request (a slowloris client, any local user: no secret is
  // needed to connect) once took every place and locked the person out of
  // watching and taking over. Viewers are never closed for it.
  bool make_room();
  void add_connection(const std::shared_ptr<Connection>& connection);
  void remove_connection(Connection* connection);
  // A connection there is no room for is answered 503 (HttpSession's
  // at_capacity), at most kMaxRefusing at a time; false: close it unanswered.
  static constexpr std::size_t kMaxRefusing = 16;
  bool begin_refusing();
  void end_refusing() { --refusing_; }

  // The feed of an execution, made on first use; lives while viewers hold it.
  std::shared_ptr<ExecutionFeed> feed_for(const std::shared_ptr<session::Execution>& execution);

  void add_dashboard(const std::shared_ptr<DashboardViewer>& dashboard);
  void remove_dashboard(DashboardViewer* dashboard);
  // Every execution as the dashboard and /api/executions list it.
  nlohmann::json execution_list() const;
  // The `executions` message a dashboard shows.
  std::shared_ptr<const std::string> dashboard_message() const;

  // One audit record (takeover, release, takeover_refused).
  void audit(const std::string& event, const session::Execution& execution, const std::string& who,
             const std::string& detail = {});

 private:
  void on_execution_changed(session::Execution& execution);
  void schedule_dashboard_push();
  void push_dashboards(bool only_if_changed);
  void arm_tick();
  void on_tick();

  boost::asio::io_context& io_;
  session::Registry& registry_;
  WebOptions options_;
  std::string secret_;
  std::uint16_t port_;
  std::string url_host_;
  RequestGuard guard_;
  boost::asio::steady_timer tick_timer_;
  boost::asio::steady_timer dashboard_push_timer_;
  int observer_token_ = 0;
  bool stopped_ = false;
  bool dashboard_push_armed_ = false;
  bool tick_armed_ = false;
  std::chrono::steady_clock::time_point next_dashboard_push_;  // not sooner than this
  std::size_t refusing_ = 0;                                   // connections being answered 503
  std::string last_dashboard_view_;
  std::map<Connection*, std::weak_ptr<Connection>> connections_;
  std::map<std::string, std::weak_ptr<ExecutionFeed>> feeds_;
  std::map<DashboardViewer*, std::weak_ptr<DashboardViewer>> dashboards_;
};

}  // namespace agentty::web
