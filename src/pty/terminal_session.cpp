#include "pty/terminal_session.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
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

namespace {

// Calls `each` with the pid, a pidfd and the stat of every member of the
// session still in it: pinned, then read, so the pid cannot be reused in
// between.
template <class Each>
void for_each_pinned_member(pid_t session_id, Each each) {
  for (pid_t pid : session_members(session_id)) {
    UniqueFd pinned(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pinned) continue;
    auto stat = read_proc_stat(pid);
    if (stat && stat->session == session_id) each(pid, pinned.get(), *stat);
  }
}

bool send_signal(int pidfd, int signo) {
  return ::syscall(SYS_pidfd_send_signal, pidfd, signo, nullptr, 0) == 0;
}

}  // namespace

int signal_session_members(pid_t session_id, int signo, pid_t except_group) {
  int signalled = 0;
  for_each_pinned_member(session_id, [&](pid_t, int pidfd, const ProcStat& stat) {
    if (except_group > 0 && stat.pgrp == except_group) return;
    if (send_signal(pidfd, signo)) ++signalled;
  });
  return signalled;
}

bool ignores_hangup(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/status";
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return false;
  char buffer[4096];
  ssize_t n = ::read(file.get(), buffer, sizeof buffer - 1);
  if (n <= 0) return false;
  buffer[n] = '\0';
  const char* ignored = std::strstr(buffer, "\nSigIgn:");
  return ignored && (std::strtoull(ignored + 8, nullptr, 16) & (1ULL << (SIGHUP - 1)));
}

int kill_session_members_but_nohup(pid_t session_id) {
  int signalled = 0;
  for_each_pinned_member(session_id, [&](pid_t pid, int pidfd, const ProcStat&) {
    if (!ignores_hangup(pid) && send_signal(pidfd, SIGKILL)) ++signalled;
  });
  return signalled;
}

std::vector<std::string> left_running_after(pid_t session_id, pid_t program, std::size_t max) {
  std::vector<std::string> left;
  if (session_id <= 0 || program <= 0) return left;
  // Still running (a zombie has ended; a pid outside the session was reused).
  if (auto stat = read_proc_stat(program);
      stat && stat->session == session_id && stat->state != 'Z')
    return left;
  for (pid_t pid : session_members(session_id)) {
    if (left.size() == max) break;
    auto stat = read_proc_stat(pid);
    if (!stat || stat->session != session_id || stat->state == 'Z') continue;
    std::string name = "?";
    UniqueFd comm(::open(("/proc/" + std::to_string(pid) + "/comm").c_str(), O_RDONLY | O_CLOEXEC));
    char buffer[64];
    if (ssize_t n = comm ? ::read(comm.get(), buffer, sizeof buffer) : -1; n > 0) {
      name.assign(buffer, static_cast<std::size_t>(n));
      if (name.back() == '\n') name.pop_back();
    }
    left.push_back(name + " (pid " + std::to_string(pid) + ")");
  }
  return left;
}

int continue_stopped_members(pid_t session_id, pid_t only_group) {
  int continued = 0;
  for_each_pinned_member(session_id, [&](pid_t, int pidfd, const ProcStat& stat) {
    if (stat.state != 'T' || (only_group > 0 && stat.pgrp != only_group)) return;
    if (send_signal(pidfd, SIGCONT)) ++continued;
  });
  return continued;
}

}  // namespace agentty::pty
