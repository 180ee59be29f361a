// ExecutionFeed: fans one execution's output out to its terminal viewers.
//
// One output listener per execution, whatever the number of viewers: each
// chunk becomes one shared_ptr<const std::string> that every viewer queues
// (bounded per viewer, see ViewerQueue). A viewer joins by taking a snapshot
// of the screen at output position S and subscribing in the same turn of the
// event loop, so the live chunks it gets start exactly at S: no gap, no
// duplicate.
//
// Bulk output: a token bucket (WebOptions::stream_rate_bytes and
// stream_burst_bytes) decides whether chunks are streamed. Past it the
// execution is flooding: chunks are not forwarded at all and every viewer is
// resynced from a snapshot every flood_snapshot_interval until the rate drops,
// so fan-out costs one small redraw per viewer per interval, whatever the
// output rate (mosh's frame-rate idea). The first chunk after a flood reaches
// each viewer as a gap, which resyncs it once more before streaming resumes.
//
// Owned by its viewers (shared_ptr); the listener is removed when the last
// one leaves. Keeps the execution alive while it is watched.
// Threading: used only on the one I/O event loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "session/execution.hpp"
#include "web/web_options.hpp"

namespace agentty::web {

class TerminalViewer;

class ExecutionFeed {
 public:
  ExecutionFeed(boost::asio::io_context& io, std::shared_ptr<session::Execution> execution,
                const WebOptions& options);
  ~ExecutionFeed();
  ExecutionFeed(const ExecutionFeed&) = delete;
  ExecutionFeed& operator=(const ExecutionFeed&) = delete;

  session::Execution& execution() { return *execution_; }

  void join(TerminalViewer* viewer);
  void leave(TerminalViewer* viewer);
  std::size_t viewer_count() const { return viewers_.size(); }

  // Every viewer gets its own state message (held_by_you differs).
  void broadcast_state();
  // Called on a tick: broadcasts only when something viewers see changed
  // (waiting_for_input, size) without a registry event.
  void refresh_state();
  // The registry no longer has the execution: every viewer is told and
  // closed, so no tab keeps a removed record's output alive.
  void execution_removed();
  bool flooding() const { return flooding_; }

 private:
  void on_output(std::string_view bytes, std::uint64_t start_seq);
  std::string state_key();
  void refill_budget();
  void arm_flood_timer();
  void on_flood_tick();

  std::shared_ptr<session::Execution> execution_;
  std::vector<TerminalViewer*> viewers_;
  int listener_token_ = 0;
  std::string last_state_key_;

  double stream_rate_;   // bytes per second
  double stream_burst_;  // bytes
  std::chrono::milliseconds flood_interval_;
  double budget_;
  std::chrono::steady_clock::time_point budget_at_;
  bool flooding_ = false;
  std::uint64_t bytes_this_interval_ = 0;
  boost::asio::steady_timer flood_timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace agentty::web
