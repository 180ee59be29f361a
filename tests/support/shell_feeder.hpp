// Feeding a ShellIntegration the bytes a marked shell prints, as the
// session's PTY reader does: marks with this test nonce, log positions from 1.
#pragma once

#include <cstdint>
#include <string>

#include "session/shell_integration.hpp"

namespace agentty::test_util {

inline const std::string kNonce = "abc123";

// `body` is the mark's kind and fields ("D;0;p=9").
inline std::string mark(const std::string& body) {
  return "\x1b]133;" + body + ";n=" + kNonce + "\a";
}

struct Feeder {
  session::ShellIntegration shell{session::ShellKind::bash, kNonce};
  std::uint64_t seq = 1;
  void out(const std::string& bytes) {
    shell.on_output(bytes, seq);
    seq += bytes.size();
  }
};

}  // namespace agentty::test_util
