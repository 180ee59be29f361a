// StdioTransport: MCP's stdio framing. A reader thread splits stdin into
// lines and posts each to the I/O loop (so the loop never blocks on stdin);
// writes go to stdout from the loop, one line per message, nothing else ever
// written there. A line over `max_line_bytes` is discarded and refused; its
// first and last bytes are kept so the refusal can carry the request's id.
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>
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

  StdioTransport(boost::asio::io_context& io, std::size_t max_line_bytes, Handlers handlers);
  ~StdioTransport();

  void start();
  // Writes one message line (a newline is appended). Blocking, on the loop.
  void send(const std::string& line);

 private:
  void read_loop();

  boost::asio::io_context& io_;
  std::size_t max_line_bytes_;
  Handlers handlers_;
  std::thread reader_;
};

}  // namespace agentty::mcp
