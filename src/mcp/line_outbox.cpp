#include "mcp/line_outbox.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>

namespace agentty::mcp {
namespace {

constexpr int kMaxIovecs = 64;  // 32 lines and their newlines per call
char newline[] = "\n";

}  // namespace

void LineOutbox::push(std::string line) {
  bytes_ += line.size() + 1;
  lines_.push_back(std::move(line));
}

void LineOutbox::clear() {
  std::deque<std::string>().swap(lines_);
  front_sent_ = 0;
  bytes_ = 0;
}

LineOutbox::WriteResult LineOutbox::write_to(int fd, bool is_socket) {
  while (!lines_.empty()) {
    iovec parts[kMaxIovecs];
    int count = 0;
    std::size_t skip = front_sent_;
    for (auto it = lines_.begin(); it != lines_.end() && count + 2 <= kMaxIovecs; ++it) {
      if (skip < it->size()) parts[count++] = {it->data() + skip, it->size() - skip};
      parts[count++] = {newline, 1};
      skip = 0;
    }
    ssize_t written;
    if (is_socket) {
      msghdr message{};
      message.msg_iov = parts;
      message.msg_iovlen = static_cast<std::size_t>(count);
      written = ::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
      written = ::writev(fd, parts, count);
    }
    if (written > 0) {
      consume(static_cast<std::size_t>(written));
    } else if (written < 0 && errno == EINTR) {
      continue;
    } else if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return WriteResult::kWouldBlock;
    } else {
      return WriteResult::kClosed;
    }
  }
  return WriteResult::kEmpty;
}

void LineOutbox::consume(std::size_t written) {
  bytes_ -= written;
  while (written > 0) {
    const std::size_t left = lines_.front().size() + 1 - front_sent_;
    if (written < left) {
      front_sent_ += written;
      return;
    }
    written -= left;
    lines_.pop_front();
    front_sent_ = 0;
  }
}

}  // namespace agentty::mcp
