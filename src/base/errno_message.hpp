// Formats an environment failure as "<syscall>: <strerror> (errno N)".
#pragma once

#include <cerrno>
#include <cstring>
#include <string>

namespace agentty {

inline std::string errno_message(const char* syscall, int err = errno) {
  return std::string(syscall) + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")";
}

}  // namespace agentty
