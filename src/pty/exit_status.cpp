#include "pty/exit_status.hpp"

#include <sys/wait.h>

#include <csignal>
#include <string_view>
#include <utility>

namespace agentty::pty {

namespace {
constexpr std::pair<int, std::string_view> kSignals[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},     {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},   {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},   {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},   {SIGTERM, "SIGTERM"}, {SIGCHLD, "SIGCHLD"},
    {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"},   {SIGTSTP, "SIGTSTP"}, {SIGTTIN, "SIGTTIN"},
    {SIGTTOU, "SIGTTOU"}, {SIGWINCH, "SIGWINCH"},
};
}  // namespace

ExitStatus ExitStatus::from_wait_status(int wstatus) {
  if (WIFSIGNALED(wstatus)) return killed(WTERMSIG(wstatus));
  return exited(WEXITSTATUS(wstatus));
}

std::string ExitStatus::describe() const {
  if (signal)
    return "killed by signal " + std::to_string(*signal) + " (" + signal_name(*signal) + ")";
  return "exited with code " + std::to_string(code.value_or(-1));
}

std::string signal_name(int signo) {
  for (auto [n, name] : kSignals)
    if (n == signo) return std::string(name);
  return "signal " + std::to_string(signo);
}

std::optional<int> signal_number(const std::string& name) {
  std::string_view wanted = name;
  for (auto [n, full] : kSignals)
    if (full == wanted || full.substr(3) == wanted) return n;
  return std::nullopt;
}

}  // namespace agentty::pty
