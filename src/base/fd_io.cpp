#include "base/fd_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/errno_message.hpp"

namespace agentty {

namespace {

// `transfer(data, size, done)` moves bytes from `done` on; the loop every
// whole write shares.
template <class Transfer>
Expected<void> write_whole(std::string_view bytes, std::size_t* written, const char* syscall,
                           Transfer transfer) {
  std::size_t done = 0;
  Expected<void> result;
  while (done < bytes.size()) {
    const ssize_t n = transfer(bytes.data() + done, bytes.size() - done, done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      result = make_error(errno_message(syscall));
      break;
    }
    if (n == 0) {  // not an error by errno, but nothing will go further
      result = make_error(std::string(syscall) + ": no byte was written");
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (written) *written = done;
  return result;
}

}  // namespace

Expected<void> write_all(int fd, std::string_view bytes, std::size_t* written) {
  return write_whole(
      bytes, written, "write",
      [fd](const char* data, std::size_t size, std::size_t) { return ::write(fd, data, size); });
}

Expected<void> pwrite_all(int fd, std::string_view bytes, off_t offset, std::size_t* written) {
  return write_whole(bytes, written, "pwrite",
                     [fd, offset](const char* data, std::size_t size, std::size_t done) {
                       return ::pwrite(fd, data, size, offset + static_cast<off_t>(done));
                     });
}

std::size_t pread_all(int fd, char* into, std::size_t size, off_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, into + done, size - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

}  // namespace agentty
