// StdioTransport: MCP's stdio framing. A reader thread splits stdin into
// lines and posts each to the I/O loop (so the loop never blocks on stdin);
// writes go to stdout from the loop, one line per message, nothing else ever
// written there. A line over `max_line_bytes` is discarded and refused; its
// first and last bytes are kept so the refusal can carry the request's id.
//
// Backpressure: lines posted but not yet taken by the loop are bounded
// (kMaxQueuedLines, and max(max_line_bytes, kMaxQueuedBytes) bytes): while the
// loop is behind (busy, or blocked writing to a client that does not read its
// answers) the reader stops reading stdin, so the pipe fills and the client's
// writes wait. No line is dropped; memory stays bounded however fast a client
// writes.
//
// Answers a client has not read yet wait in an outbox (up to
// kMaxQueuedAnswerBytes, a few of the largest) while the loop goes on: a
// blocking write of a 1 MiB page's answer (~3.5 MB of JSON) to a client that
// read slowly, or not for a while, stopped every PTY read, web viewer and
// other call until it had read it all. Past the bound send() blocks as
// before (the backpressure above). Writing without blocking: setting
// O_NONBLOCK on stdout itself would change it for whoever shares it, so a
// pipe is opened again (/proc/self/fd/1, a description of our own) and a
// socket (what node's child_process gives) is sent to with MSG_DONTWAIT.
// Stdout that is neither (a file, a terminal) is written blocking, as
// before. What is still queued at exit is written by the destructor, for at
// most kExitDrainTimeout.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "mcp/line_outbox.hpp"

namespace agentty::mcp {

class StdioTransport {
 public:
  struct Handlers {
    std::function<void(std::string line)> on_line;
    // A line over the cap: its size, and its first and last (up to) 512 bytes.
    std::function<void(std::size_t size, std::string head, std::string tail)> on_oversized;
    std::function<void()> on_closed;  // stdin reached EOF
  };

  static constexpr std::size_t kMaxQueuedLines = 64;
  static constexpr std::size_t kMaxQueuedBytes = 8 << 20;
  static constexpr std::size_t kMaxQueuedAnswerBytes = 16 << 20;
  static constexpr std::chrono::milliseconds kExitDrainTimeout{5000};

  StdioTransport(boost::asio::io_context& io, std::size_t max_line_bytes, Handlers handlers);
  ~StdioTransport();

  void start();
  // Writes one message line (a newline is appended), on the loop; queued
  // when the client is not reading (see above).
  void send(std::string line);

 private:
  struct Backlog;
  static void read_loop(std::shared_ptr<Backlog> backlog, std::size_t max_line_bytes,
                        StdioTransport* transport);
  // Writes what the pipe takes now; the rest waits for it to be writable.
  void write_outbox();
  void wait_writable();
  // Blocking (poll) until the outbox holds at most `bytes`, or `timeout`
  // has passed (none: no limit).
  void drain_outbox_to(std::size_t bytes,
                       std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  boost::asio::io_context& io_;
  std::size_t max_line_bytes_;
  Handlers handlers_;
  std::shared_ptr<Backlog> backlog_;
  std::thread reader_;
  std::unique_ptr<boost::asio::posix::stream_descriptor> stdout_pipe_;  // null: blocking writes
  LineOutbox outbox_;
  bool waiting_writable_ = false;
  bool stdout_closed_ = false;
  bool stdout_is_socket_ = false;
  std::shared_ptr<const char> alive_ = std::make_shared<const char>('\0');  // for late handlers
};

}  // namespace agentty::mcp
