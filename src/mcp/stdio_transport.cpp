#include "mcp/stdio_transport.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>
#include <boost/asio/post.hpp>

#include <cerrno>

namespace agentty::mcp {

StdioTransport::StdioTransport(boost::asio::io_context& io, std::size_t max_line_bytes,
                               Handlers handlers)
    : io_(io), max_line_bytes_(max_line_bytes), handlers_(std::move(handlers)) {}

StdioTransport::~StdioTransport() {
  // The reader blocks in read(2) on stdin; it cannot be interrupted portably.
  // It only ever posts to the loop, so detaching at exit is safe.
  if (reader_.joinable()) reader_.detach();
}

void StdioTransport::start() {
  reader_ = std::thread([this] { read_loop(); });
}

void StdioTransport::send(const std::string& line) {
  std::string framed = line + "\n";
  std::size_t done = 0;
  while (done < framed.size()) {
    ssize_t n = ::write(STDOUT_FILENO, framed.data() + done, framed.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      spdlog::debug("stdout closed: {}", std::strerror(errno));
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

namespace {

constexpr std::size_t kEdgeBytes = 512;  // kept of a refused line, for its id

// Keeps the last kEdgeBytes of what `tail` and `more` hold together.
void keep_tail(std::string& tail, std::string_view more) {
  if (more.size() >= kEdgeBytes) {
    tail.assign(more.substr(more.size() - kEdgeBytes));
    return;
  }
  tail.append(more);
  if (tail.size() > kEdgeBytes) tail.erase(0, tail.size() - kEdgeBytes);
}

}  // namespace

void StdioTransport::read_loop() {
  std::string line;
  bool oversized = false;
  std::size_t dropped = 0;
  std::string head, tail;  // of an oversized line
  auto refuse = [&] {
    boost::asio::post(io_, [this, dropped, h = std::move(head), t = std::move(tail)]() mutable {
      handlers_.on_oversized(dropped, std::move(h), std::move(t));
    });
    oversized = false;
    head.clear();
    tail.clear();
  };
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::string_view chunk(buffer, static_cast<std::size_t>(n));
    while (!chunk.empty()) {
      auto newline = chunk.find('\n');
      auto piece = chunk.substr(0, newline);
      if (oversized) {
        dropped += piece.size();
        keep_tail(tail, piece);
      } else if (line.size() + piece.size() > max_line_bytes_) {
        oversized = true;
        dropped = line.size() + piece.size();
        head = line.substr(0, kEdgeBytes);
        head.append(piece.substr(0, kEdgeBytes - head.size()));
        keep_tail(tail, line);
        keep_tail(tail, piece);
        line.clear();
        line.shrink_to_fit();
      } else {
        line.append(piece);
      }
      if (newline == std::string_view::npos) break;
      chunk.remove_prefix(newline + 1);
      if (oversized) {
        refuse();
      } else {
        boost::asio::post(
            io_, [this, l = std::move(line)]() mutable { handlers_.on_line(std::move(l)); });
        line = std::string();
      }
    }
  }
  if (oversized) {
    refuse();
  } else if (!line.empty()) {
    boost::asio::post(io_,
                      [this, l = std::move(line)]() mutable { handlers_.on_line(std::move(l)); });
  }
  boost::asio::post(io_, [this] { handlers_.on_closed(); });
}

}  // namespace agentty::mcp
