// ShellIntegration: exact command boundaries in an interactive shell session.
// (Filled in by the sessions issue.) The execution forwards every output
// chunk and every input to it.
#pragma once

#include <cstdint>
#include <string_view>

namespace agentty::session {

enum class InputSource;

class ShellIntegration {
 public:
  virtual ~ShellIntegration() = default;
  virtual void on_output(std::string_view bytes, std::uint64_t start_seq) = 0;
  virtual void on_input(std::string_view bytes, InputSource source) = 0;
  virtual void on_exit() = 0;
};

}  // namespace agentty::session
