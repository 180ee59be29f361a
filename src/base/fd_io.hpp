// Whole transfers on a file descriptor: a short write or read is continued
// and EINTR retried, so a caller sees all-or-error. Every file agentty writes
// (spools, text caches, recordings, the audit log, private files, a
// program's stdin file) goes through these, so that rule lives in one place.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string_view>

#include "base/expected.hpp"

namespace agentty {

// Writes all of `bytes` at the file position. On failure the error names
// the syscall and errno. `written` (if given) is set to how many bytes went
// out, all of them or those before the failure, so a caller can undo or
// account for a partial line.
Expected<void> write_all(int fd, std::string_view bytes, std::size_t* written = nullptr);

// The same with pwrite at `offset`; the file position is left alone.
Expected<void> pwrite_all(int fd, std::string_view bytes, off_t offset,
                          std::size_t* written = nullptr);

// Reads up to `size` bytes at `offset` into `into`; how many were read:
// `size` unless end of file or an error came first (errno tells which).
std::size_t pread_all(int fd, char* into, std::size_t size, off_t offset);

}  // namespace agentty
