#include "pty/terminal_session.hpp"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "base/unique_fd.hpp"

namespace agentty::pty {

namespace {

// Field 6 of /proc/PID/stat. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted from the last ')'.
std::optional<pid_t> session_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return std::nullopt;
  auto name_end = line.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(name_end + 1));
  std::string state, parent, group, session;
  if (!(fields >> state >> parent >> group >> session)) return std::nullopt;
  return static_cast<pid_t>(std::strtol(session.c_str(), nullptr, 10));
}

}  // namespace

std::vector<pid_t> session_members(pid_t session_id) {
  std::vector<pid_t> members;
  DIR* proc = ::opendir("/proc");
  if (!proc) return members;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == session_id) continue;
    if (session_of(static_cast<pid_t>(pid)) == session_id)
      members.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return members;
}

int signal_session_members(pid_t session_id, int signo) {
  int signalled = 0;
  for (pid_t pid : session_members(session_id)) {
    // Pinned, then checked again: the pid cannot be reused while the pidfd is open.
    UniqueFd pinned(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pinned || session_of(pid) != session_id) continue;
    if (::syscall(SYS_pidfd_send_signal, pinned.get(), signo, nullptr, 0) == 0) ++signalled;
  }
  return signalled;
}

}  // namespace agentty::pty
