// ExitStatus: how a program ended, as a value that prints itself.
#pragma once

#include <optional>
#include <string>

namespace agentty::pty {

struct ExitStatus {
  std::optional<int> code;    // set when the program called exit()
  std::optional<int> signal;  // set when a signal ended it

  static ExitStatus from_wait_status(int wstatus);
  static ExitStatus exited(int code) { return ExitStatus{code, std::nullopt}; }
  static ExitStatus killed(int signo) { return ExitStatus{std::nullopt, signo}; }

  // Shell convention: the exit code, or 128+signal.
  int shell_code() const { return code ? *code : 128 + signal.value_or(0); }
  // "exited with code 0", "killed by signal 9 (SIGKILL)".
  std::string describe() const;
};

// "SIGTERM" for 15; "signal 42" when unnamed.
std::string signal_name(int signo);
// 15 for "SIGTERM" or "TERM"; nullopt when unknown.
std::optional<int> signal_number(const std::string& name);

}  // namespace agentty::pty
