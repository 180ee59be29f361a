#include "pty/input_probe.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/proc_stat.hpp"
#include "base/unique_fd.hpp"

namespace agentty::pty {

namespace {

constexpr std::size_t kMaxProcesses = 256;
constexpr std::size_t kMaxThreads = 64;

// Syscall numbers as /proc/<tid>/syscall reports them.
#if defined(__x86_64__)
constexpr long kReadCalls[] = {0 /*read*/, 19 /*readv*/};
constexpr long kPollCalls[] = {7 /*poll*/,
                               23 /*select*/,
                               270 /*pselect6*/,
                               271 /*ppoll*/,
                               232 /*epoll_wait*/,
                               281 /*epoll_pwait*/,
                               441 /*epoll_pwait2*/};
constexpr bool kKnownArch = true;
#elif defined(__aarch64__)
constexpr long kReadCalls[] = {63 /*read*/, 65 /*readv*/};
constexpr long kPollCalls[] = {72 /*pselect6*/, 73 /*ppoll*/, 22 /*epoll_pwait*/,
                               441 /*epoll_pwait2*/};
constexpr bool kKnownArch = true;
#else
constexpr long kReadCalls[] = {-2};
constexpr long kPollCalls[] = {-2};
constexpr bool kKnownArch = false;
#endif

template <std::size_t N>
bool contains(const long (&calls)[N], long nr) {
  return std::find(std::begin(calls), std::end(calls), nr) != std::end(calls);
}

// /proc files are small and generated on read: one read() gets them whole.
// nullopt when the file cannot be opened.
std::optional<std::string> read_proc_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  char buffer[1024];
  ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

std::vector<std::string> list_dir(const std::string& path, std::size_t limit) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return names;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    names.emplace_back(entry->d_name);
    if (names.size() >= limit) break;
  }
  ::closedir(dir);
  return names;
}

// Every descendant of `root`, breadth first, bounded; false when the
// children files are unavailable (no CONFIG_PROC_CHILDREN, or root is gone).
bool collect_descendants(pid_t root, std::vector<pid_t>& out) {
  std::vector<pid_t> queue{root};
  for (std::size_t i = 0; i < queue.size() && queue.size() < kMaxProcesses; ++i) {
    std::string task_dir = "/proc/" + std::to_string(queue[i]) + "/task";
    auto tasks = list_dir(task_dir, kMaxThreads);
    if (tasks.empty() && i == 0) return false;
    for (const auto& tid : tasks) {
      auto children = read_proc_file(task_dir + "/" + tid + "/children");
      if (!children && i == 0) return false;
      if (!children) continue;
      const char* cursor = children->c_str();
      char* end = nullptr;
      for (long pid = std::strtol(cursor, &end, 10); end != cursor;
           cursor = end, pid = std::strtol(cursor, &end, 10))
        queue.push_back(static_cast<pid_t>(pid));
    }
  }
  out.assign(queue.begin() + 1, queue.end());
  return true;
}

std::vector<pid_t> all_processes() {
  std::vector<pid_t> pids;
  for (const auto& name : list_dir("/proc", 1 << 20)) pids.push_back(std::atoi(name.c_str()));
  return pids;
}

// /dev/tty (5,0) is the process's controlling terminal. Password prompts
// (getpass, sudo, ssh) read it rather than fd 0. The processes probed are in
// the slave's foreground group, so in the slave's session: it is the slave.
bool fd_is_slave(pid_t pid, long fd, dev_t slave) {
  struct stat st {};
  std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  if (::stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return false;
  return st.st_rdev == slave || st.st_rdev == makedev(5, 0);
}

// /proc/<tid>/syscall: "nr arg0 arg1 ... sp pc" while blocked in a syscall;
// "running" or "-1 sp pc" otherwise.
bool thread_reads_terminal(pid_t pid, const std::string& task_dir, dev_t slave) {
  auto stat = read_proc_stat(task_dir);
  if (!stat || stat->state != 'S') return false;
  std::string text = read_proc_file(task_dir + "/syscall").value_or("");
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  char* end = nullptr;
  long nr = std::strtol(text.c_str(), &end, 10);
  if (contains(kReadCalls, nr)) return fd_is_slave(pid, std::strtol(end, nullptr, 16), slave);
  if (contains(kPollCalls, nr)) {
    for (long fd = 0; fd <= 2; ++fd)
      if (fd_is_slave(pid, fd, slave)) return true;
  }
  return false;
}

bool process_reads_terminal(pid_t pid, dev_t slave) {
  std::string task_root = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& tid : list_dir(task_root, kMaxThreads))
    if (thread_reads_terminal(pid, task_root + "/" + tid, slave)) return true;
  return false;
}

}  // namespace

std::optional<pid_t> probe_foreground_group(int master_fd) {
  pid_t group = ::tcgetpgrp(master_fd);
  if (group <= 0) return std::nullopt;
  return group;
}

std::optional<bool> probe_echo_enabled(int master_fd) {
  termios modes{};
  if (::tcgetattr(master_fd, &modes) != 0) return std::nullopt;
  return (modes.c_lflag & ECHO) != 0;
}

InputState probe_input_state(const InputProbeTarget& target) {
  if (!kKnownArch || ::access("/proc/self/syscall", R_OK) != 0) return InputState::unknown;
  auto group = probe_foreground_group(target.master_fd);
  if (!group) return InputState::busy;

  std::vector<pid_t> candidates;
  if (!collect_descendants(target.supervisor, candidates)) candidates = all_processes();
  std::size_t checked = 0;
  for (pid_t pid : candidates) {
    auto stat = read_proc_stat(pid);
    if (!stat || stat->pgrp != *group) continue;
    if (process_reads_terminal(pid, target.slave_device)) return InputState::reading_input;
    if (++checked >= kMaxProcesses) break;
  }
  return InputState::busy;
}

}  // namespace agentty::pty
