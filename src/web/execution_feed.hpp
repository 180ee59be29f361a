// ExecutionFeed: fans one execution's output out to its terminal viewers.
//
// One output listener per execution, whatever the number of viewers: each
// chunk becomes one shared_ptr<const std::string> that every viewer queues
// (bounded per viewer, see ViewerQueue). A viewer joins by taking a snapshot
// of the screen at output position S and subscribing in the same turn of the
// event loop, so the live chunks it gets start exactly at S: no gap, no
// duplicate.
//
// Owned by its viewers (shared_ptr); the listener is removed when the last
// one leaves. Keeps the execution alive while it is watched.
// Threading: used only on the one I/O event loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "session/execution.hpp"

namespace agentty::web {

class TerminalViewer;

class ExecutionFeed {
 public:
  explicit ExecutionFeed(std::shared_ptr<session::Execution> execution);
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

 private:
  void on_output(std::string_view bytes, std::uint64_t start_seq);
  std::string state_key();

  std::shared_ptr<session::Execution> execution_;
  std::vector<TerminalViewer*> viewers_;
  int listener_token_ = 0;
  std::string last_state_key_;
};

}  // namespace agentty::web
