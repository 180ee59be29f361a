// LineOutbox: message lines waiting to be written to stdout, each followed
// by a newline, written with one writev (sendmsg for a socket) per batch.
//
// The lines are kept as they were handed over: a 1 MiB read page's answer
// is a ~2.5 MB line, and appending it (and its newline) to one buffer, then
// dropping what was written from its front, copied it twice more and made
// the allocator fault in fresh pages each time: on this VM that was a third
// of what such an answer cost the loop.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

namespace agentty::mcp {

class LineOutbox {
 public:
  enum class WriteResult {
    kEmpty,       // everything was written
    kWouldBlock,  // the descriptor is full: wait until it is writable
    kClosed,      // the reader is gone (EPIPE, ...): nothing more can be written
  };

  void push(std::string line);
  bool empty() const { return lines_.empty(); }
  // Bytes not yet written, newlines included.
  std::size_t bytes() const { return bytes_; }

  // Writes what `fd` takes. `is_socket`: sent with MSG_DONTWAIT (the
  // descriptor is shared, its flags are not ours to change); otherwise it
  // blocks or not as `fd` was opened.
  WriteResult write_to(int fd, bool is_socket);
  // Drops everything queued and gives the memory back.
  void clear();

 private:
  void consume(std::size_t written);

  std::deque<std::string> lines_;
  std::size_t front_sent_ = 0;  // of lines_.front() and its newline
  std::size_t bytes_ = 0;
};

}  // namespace agentty::mcp
