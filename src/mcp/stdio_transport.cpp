#include "mcp/stdio_transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>

namespace agentty::mcp {

// Lines posted to the loop and not yet handled. Shared with the reader
// thread, which may outlive the transport (it is detached at exit): the
// reader touches only this, never the transport, and posts under the mutex,
// so once the destructor has set `closing` nothing reaches the loop (which
// may be gone by then) nor the transport.
struct StdioTransport::Backlog : std::enable_shared_from_this<Backlog> {
  explicit Backlog(boost::asio::io_context& loop) : io(loop) {}
  boost::asio::io_context& io;
  std::mutex mutex;
  std::condition_variable room;
  std::size_t lines = 0;
  std::size_t bytes = 0;
  bool closing = false;

  // Posts `deliver` to the loop once there is room for `size` more bytes
  // (at most `max_bytes` queued); false when the transport is closing
  // (nothing posted).
  bool post_when_room(std::size_t size, std::size_t max_bytes, std::function<void()> deliver);

  void taken(std::size_t size) {
    {
      std::lock_guard lock(mutex);
      --lines;
      bytes -= size;
    }
    room.notify_one();
  }
};

namespace {

// A descriptor to wait on stdout becoming writable and how to write it
// without blocking, or -1 (written blocking). A pipe is opened again with
// O_NONBLOCK (a description of our own); a socket (node's child_process
// stdio) is a dup written with MSG_DONTWAIT, which changes nothing for
// whoever shares it.
int open_stdout_for_queueing(bool& is_socket) {
  struct stat st {};
  if (::fstat(STDOUT_FILENO, &st) != 0) return -1;
  is_socket = S_ISSOCK(st.st_mode);
  if (is_socket) return ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (!S_ISFIFO(st.st_mode)) return -1;
  return ::open("/proc/self/fd/1", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
}

}  // namespace

StdioTransport::StdioTransport(boost::asio::io_context& io, std::size_t max_line_bytes,
                               Handlers handlers)
    : io_(io),
      max_line_bytes_(max_line_bytes),
      handlers_(std::move(handlers)),
      backlog_(std::make_shared<Backlog>(io)) {
  if (const int fd = open_stdout_for_queueing(stdout_is_socket_); fd >= 0)
    stdout_pipe_ = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd);
}

StdioTransport::~StdioTransport() {
  // Answers still queued (the loop has stopped): a client that neither reads
  // nor closes its end must not keep agentty from exiting.
  drain_outbox_to(0, kExitDrainTimeout);
  {
    std::lock_guard lock(backlog_->mutex);
    backlog_->closing = true;
  }
  backlog_->room.notify_all();
  // The reader blocks in read(2) on stdin; it cannot be interrupted portably.
  // It posts nothing once closing is set, so detaching at exit is safe.
  if (reader_.joinable()) reader_.detach();
}

bool StdioTransport::Backlog::post_when_room(std::size_t size, std::size_t max_bytes,
                                             std::function<void()> deliver) {
  std::unique_lock lock(mutex);
  // One line always fits, however long: it was read within max_line_bytes.
  room.wait(lock, [&] {
    return closing || lines == 0 || (lines < kMaxQueuedLines && bytes + size <= max_bytes);
  });
  if (closing) return false;
  ++lines;
  bytes += size;
  boost::asio::post(io, [backlog = shared_from_this(), size, deliver = std::move(deliver)] {
    deliver();
    backlog->taken(size);
  });
  return true;
}

void StdioTransport::start() {
  reader_ = std::thread(read_loop, backlog_, max_line_bytes_, this);
}

void StdioTransport::send(std::string line) {
  if (stdout_closed_) return;
  outbox_.push(std::move(line));
  write_outbox();
  if (stdout_pipe_) drain_outbox_to(kMaxQueuedAnswerBytes);
}

void StdioTransport::write_outbox() {
  if (stdout_closed_) return;
  // Without a descriptor of our own (stdout is a file or a terminal) the
  // write blocks until all of it is written.
  const int fd = stdout_pipe_ ? stdout_pipe_->native_handle() : STDOUT_FILENO;
  auto result = outbox_.write_to(fd, stdout_pipe_ && stdout_is_socket_);
  // A file or terminal someone left O_NONBLOCK: still written to the end.
  while (!stdout_pipe_ && result == LineOutbox::WriteResult::kWouldBlock) {
    pollfd writable{STDOUT_FILENO, POLLOUT, 0};
    ::poll(&writable, 1, -1);
    result = outbox_.write_to(fd, false);
  }
  switch (result) {
    case LineOutbox::WriteResult::kEmpty:
      break;
    case LineOutbox::WriteResult::kWouldBlock:
      wait_writable();
      break;
    case LineOutbox::WriteResult::kClosed:
      spdlog::debug("stdout closed: {}", std::strerror(errno));
      stdout_closed_ = true;
      outbox_.clear();
      break;
  }
}

void StdioTransport::wait_writable() {
  if (waiting_writable_) return;
  waiting_writable_ = true;
  // The handler may be run (aborted) after the transport is gone.
  stdout_pipe_->async_wait(
      boost::asio::posix::stream_descriptor::wait_write,
      [this, alive = std::weak_ptr<const char>(alive_)](boost::system::error_code ec) {
        if (ec == boost::asio::error::operation_aborted || alive.expired()) return;
        waiting_writable_ = false;
        write_outbox();
      });
}

void StdioTransport::drain_outbox_to(std::size_t bytes,
                                     std::optional<std::chrono::milliseconds> timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout.value_or(kExitDrainTimeout);
  while (stdout_pipe_ && !stdout_closed_ && outbox_.bytes() > bytes) {
    int wait_ms = -1;
    if (timeout) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd writable{stdout_pipe_->native_handle(), POLLOUT, 0};
    const int ready = ::poll(&writable, 1, wait_ms);
    if (ready < 0 && errno != EINTR) return;
    if (ready > 0) write_outbox();
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

// On the reader thread: `transport` is only named in what is posted (run
// on the loop, while the transport exists), never used here.
void StdioTransport::read_loop(std::shared_ptr<Backlog> backlog, std::size_t max_line_bytes,
                               StdioTransport* transport) {
  const std::size_t max_bytes = std::max(max_line_bytes, kMaxQueuedBytes);
  std::string line;
  bool oversized = false;
  std::size_t dropped = 0;
  std::string head, tail;  // of an oversized line
  auto refuse = [&] {
    const std::size_t kept = head.size() + tail.size();
    const bool open = backlog->post_when_room(
        kept, max_bytes, [transport, dropped, h = std::move(head), t = std::move(tail)]() mutable {
          transport->handlers_.on_oversized(dropped, std::move(h), std::move(t));
        });
    oversized = false;
    head.clear();
    tail.clear();
    return open;
  };
  auto deliver = [&] {
    const std::size_t size = line.size();
    return backlog->post_when_room(size, max_bytes, [transport, l = std::move(line)]() mutable {
      transport->handlers_.on_line(std::move(l));
    });
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
      } else if (line.size() + piece.size() > max_line_bytes) {
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
      const bool open = oversized ? refuse() : deliver();
      if (!open) return;
      line = std::string();
    }
  }
  if (oversized) {
    if (!refuse()) return;
  } else if (!line.empty()) {
    if (!deliver()) return;
  }
  backlog->post_when_room(0, max_bytes, [transport] { transport->handlers_.on_closed(); });
}

}  // namespace agentty::mcp
