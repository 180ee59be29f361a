#include "pty/terminal_session.hpp"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/proc_stat.hpp"
#include "base/unique_fd.hpp"

namespace agentty::pty {

namespace {

std::optional<pid_t> session_of(pid_t pid) {
  auto stat = read_proc_stat(pid);
  return stat ? std::optional(stat->session) : std::nullopt;
}

std::optional<pid_t> group_of(pid_t pid) {
  auto stat = read_proc_stat(pid);
  return stat ? std::optional(stat->pgrp) : std::nullopt;
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

int signal_session_members(pid_t session_id, int signo, pid_t except_group) {
  int signalled = 0;
  for (pid_t pid : session_members(session_id)) {
    if (except_group > 0 && group_of(pid) == except_group) continue;
    // Pinned, then checked again: the pid cannot be reused while the pidfd is open.
    UniqueFd pinned(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pinned || session_of(pid) != session_id) continue;
    if (::syscall(SYS_pidfd_send_signal, pinned.get(), signo, nullptr, 0) == 0) ++signalled;
  }
  return signalled;
}

void continue_stopped_members(pid_t session_id, pid_t only_group) {
  for (pid_t pid : session_members(session_id)) {
    UniqueFd pinned(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pinned) continue;
    auto stat = read_proc_stat(pid);
    if (!stat || stat->session != session_id || stat->state != 'T') continue;
    if (only_group > 0 && stat->pgrp != only_group) continue;
    ::syscall(SYS_pidfd_send_signal, pinned.get(), SIGCONT, nullptr, 0);
  }
}

}  // namespace agentty::pty
