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
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>
#include <memory>
#include <string>
#include <thread>

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

  StdioTransport(boost::asio::io_context& io, std::size_t max_line_bytes, Handlers handlers);
  ~StdioTransport();

  void start();
  // Writes one message line (a newline is appended). Blocking, on the loop.
  void send(const std::string& line);

 private:
  struct Backlog;
  void read_loop();
  // Posts `deliver` to the loop once the backlog has room for `bytes` more;
  // false when the transport is closing (nothing posted).
  bool post_when_room(std::size_t bytes, std::function<void()> deliver);

  boost::asio::io_context& io_;
  std::size_t max_line_bytes_;
  Handlers handlers_;
  std::shared_ptr<Backlog> backlog_;
  std::thread reader_;
};

}  // namespace agentty::mcp
