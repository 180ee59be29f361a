// TerminalViewer: one WebSocket watching one execution (the browser terminal
// page or `agentty attach`).
//
// On accept it gets the state, a snapshot of the screen and then live output
// from the ExecutionFeed. Read-only unless it takes the execution over: only
// the holder's keystrokes and resizes reach the PTY; anything else is refused
// here, whatever the page does. When the holder disconnects the execution is
// released, so a closed tab never leaves the agent locked out.
//
// Writes: one in flight at a time (ViewerSocket); queued output is bounded
// (ViewerQueue) and a viewer that falls behind, or paused (client flow
// control) long enough to overflow, is resynced from a fresh snapshot.
// Snapshots carry the history (styled, so it keeps its colours): a full one
// resets the client and brings the newest scrolled-off lines; during a flood
// the next ones keep the client's history and add the lines scrolled off
// since, so a person can scroll back while it lasts.
//
// Threading: the one I/O event loop, like ViewerSocket.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "web/viewer_queue.hpp"
#include "web/viewer_socket.hpp"
#include "web/wire_protocol.hpp"

namespace agentty::web {

class ExecutionFeed;

class TerminalViewer : public ViewerSocket {
 public:
  TerminalViewer(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<WebContext> context,
                 std::shared_ptr<ExecutionFeed> feed, std::string peer);
  ~TerminalViewer() override;

  // From the feed.
  void send_output(const std::shared_ptr<const std::string>& chunk, std::uint64_t start_seq);
  void send_state();
  // Drops queued output and sends a fresh snapshot as soon as the socket is free.
  void request_resync();
  // The execution's record is gone from the registry: ends the connection
  // with a close frame that says so.
  void execution_removed();

 private:
  void on_open() override;
  void on_message(std::string message, bool text) override;
  void on_write_done() override { pump(); }
  void on_finish() override;
  void handle_control(std::string_view text);
  void handle_input(std::string_view bytes);
  void take_over(const wire::TakeOver& message);
  void release();
  void resize(pty::TerminalSize size);
  void refuse(std::string action, std::string message);
  void queue_snapshot();
  void pump();

  std::shared_ptr<ExecutionFeed> feed_;
  std::string who_;  // "<client> <address>", the holder name the agent sees
  ViewerQueue queue_;
  std::uint64_t next_seq_ = 1;  // output position this viewer has up to
  bool joined_ = false;
  // The last snapshot showed the alternate screen: the main screen under it
  // is not in this viewer's terminal, so leaving the alternate screen needs a
  // fresh snapshot.
  bool snapshot_in_alt_screen_ = false;
  // The client's terminal shows our last snapshot and no output since: the
  // next snapshot may keep its history (wire::Snapshot::keeps_history).
  bool client_has_last_frame_ = false;
  pty::TerminalSize frame_size_{};
  std::uint64_t history_seen_ = 0;  // Screen::scrolled_off_lines() at the last snapshot
  bool history_skipped_ = false;    // the client's history lacks lines since its last full one
  bool paused_ = false;
  bool resync_posted_ = false;
  std::chrono::steady_clock::time_point last_input_refusal_{};
};

}  // namespace agentty::web
