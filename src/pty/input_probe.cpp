#include "pty/input_probe.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/proc_stat.hpp"
#include "base/unique_fd.hpp"
#include "pty/wait_syscalls.hpp"

namespace agentty::pty {

namespace {

constexpr std::size_t kMaxProcesses = 256;
constexpr std::size_t kMaxThreads = 64;

constexpr std::size_t kMaxPolledFds = 4096;
constexpr std::size_t kMaxFdinfoBytes = 256 * 1024;

WaitCall wait_call(long nr) {
  return classify_wait_call(local_arch(), nr).value_or(WaitCall::other);
}

// /proc files are small and generated on read: one read() gets them whole.
// nullopt when the file cannot be opened or read (errno says why: a file of
// another user's process fails to open, one that ptrace rules such as Yama's
// hide fails to read).
std::optional<std::string> read_proc_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  char buffer[1024];
  ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n < 0) return std::nullopt;
  return std::string(buffer, static_cast<std::size_t>(n));
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

// Which terminal device counts as the slave for a probed process.
struct SlaveDevice {
  dev_t device = 0;
  // /dev/tty (5,0) is the process's controlling terminal. Password prompts
  // (getpass, sudo, ssh) read it rather than fd 0. A process of the
  // slave's session has the slave as that terminal; one that left the
  // session (setsid) does not.
  bool dev_tty_is_slave = true;
};

bool fd_is_slave(pid_t pid, long fd, SlaveDevice slave) {
  struct stat st {};
  std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  if (::stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return false;
  return st.st_rdev == slave.device || (slave.dev_tty_is_slave && st.st_rdev == makedev(5, 0));
}

// Up to `size` bytes of another process's memory (a descendant: ptrace
// rules allow it); nullopt when it cannot be read.
std::optional<std::string> read_memory(pid_t pid, unsigned long address, std::size_t size) {
  std::string bytes(size, '\0');
  iovec local{bytes.data(), size};
  iovec remote{reinterpret_cast<void*>(address), size};
  if (size == 0) return bytes;
  if (::process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(size))
    return std::nullopt;
  return bytes;
}

// A /proc file of any size up to `limit` (an epoll fdinfo lists every fd).
std::optional<std::string> read_whole_proc_file(const std::string& path, std::size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string text;
  char buffer[4096];
  while (text.size() < limit) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

// The fds a thread blocked in poll/select/epoll_wait waits to read, from
// the call's arguments; nullopt when they cannot be read.
std::optional<std::vector<long>> polled_for_reading(pid_t pid, WaitCall call,
                                                    const std::vector<unsigned long>& args) {
  std::vector<long> fds;
  if (args.size() < 2) return std::nullopt;
  if (call == WaitCall::poll) {
    std::size_t count = std::min<std::size_t>(args[1], kMaxPolledFds);
    auto bytes = read_memory(pid, args[0], count * sizeof(pollfd));
    if (!bytes) return std::nullopt;
    for (std::size_t i = 0; i < count; ++i) {
      pollfd entry{};
      std::memcpy(&entry, bytes->data() + i * sizeof(pollfd), sizeof(pollfd));
      if (entry.fd >= 0 && (entry.events & (POLLIN | POLLPRI | POLLRDNORM)))
        fds.push_back(entry.fd);
    }
  } else if (call == WaitCall::select) {
    if (args[1] == 0) return fds;  // no read set
    std::size_t count = std::min<std::size_t>(args[0], kMaxPolledFds);
    auto bytes = read_memory(pid, args[1], (count + 7) / 8);
    if (!bytes) return std::nullopt;
    for (std::size_t fd = 0; fd < count; ++fd)  // fd_set: bit fd%8 of byte fd/8 (little-endian)
      if ((*bytes)[fd / 8] & (1 << (fd % 8))) fds.push_back(static_cast<long>(fd));
  } else if (call == WaitCall::epoll) {
    // "tfd:        5 events:       19 data: ..." per registered fd.
    auto info = read_whole_proc_file(
        "/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(args[0]), kMaxFdinfoBytes);
    if (!info) return std::nullopt;
    for (std::size_t at = info->find("tfd:"); at != std::string::npos;
         at = info->find("tfd:", at + 4)) {
      char* end = nullptr;
      long fd = std::strtol(info->c_str() + at + 4, &end, 10);
      auto events_at = info->find("events:", at);
      if (events_at == std::string::npos) break;
      unsigned long events = std::strtoul(info->c_str() + events_at + 7, nullptr, 16);
      if (events & (EPOLLIN | EPOLLPRI | EPOLLRDNORM)) fds.push_back(fd);
    }
  }
  return fds;
}

// What a look at a sleeping process found.
enum class Reading {
  no,
  yes,
  hidden,  // its /proc/<tid>/syscall may not be read: another user's process
};

// /proc/<tid>/syscall: "nr arg0 arg1 ... sp pc" while blocked in a syscall;
// "running" or "-1 sp pc" otherwise. It needs ptrace access, which a user
// other than root lacks for a set-user-ID program (su, sudo, passwd), another
// user's process, or (Yama's ptrace_scope 2) any process.
Reading thread_reads_terminal(pid_t pid, const std::string& task_dir, SlaveDevice slave) {
  auto stat = read_proc_stat(task_dir);
  if (!stat || stat->state != 'S') return Reading::no;
  auto syscall = read_proc_file(task_dir + "/syscall");
  if (!syscall) return errno == EACCES || errno == EPERM ? Reading::hidden : Reading::no;
  const std::string& text = *syscall;
  if (text.empty() || text[0] < '0' || text[0] > '9') return Reading::no;
  char* end = nullptr;
  long nr = std::strtol(text.c_str(), &end, 10);
  const WaitCall call = wait_call(nr);
  auto reading = [](bool yes) { return yes ? Reading::yes : Reading::no; };
  if (call == WaitCall::read)
    return reading(fd_is_slave(pid, std::strtol(end, nullptr, 16), slave));
  if (call == WaitCall::other) return Reading::no;
  std::vector<unsigned long> args;
  for (const char* cursor = end; args.size() < 6; cursor = end) {
    unsigned long value = std::strtoul(cursor, &end, 16);
    if (end == cursor) break;
    args.push_back(value);
  }
  if (auto fds = polled_for_reading(pid, call, args)) {
    return reading(std::any_of(fds->begin(), fds->end(),
                               [&](long fd) { return fd_is_slave(pid, fd, slave); }));
  }
  // The fds cannot be read: holding the terminal on 0-2 is the best guess.
  for (long fd = 0; fd <= 2; ++fd)
    if (fd_is_slave(pid, fd, slave)) return Reading::yes;
  return Reading::no;
}

// yes if any thread reads the terminal, else hidden if any could not be seen.
Reading process_reads_terminal(pid_t pid, SlaveDevice slave) {
  std::string task_root = "/proc/" + std::to_string(pid) + "/task";
  Reading found = Reading::no;
  for (const auto& tid : list_dir(task_root, kMaxThreads)) {
    const Reading thread = thread_reads_terminal(pid, task_root + "/" + tid, slave);
    if (thread == Reading::yes) return thread;
    if (thread == Reading::hidden) found = thread;
  }
  return found;
}

InputState found_reader(pid_t pid, pid_t* reader) {
  if (reader) *reader = pid;
  return InputState::reading_input;
}

std::optional<std::string> comm_of(pid_t pid) {
  auto comm = read_proc_file("/proc/" + std::to_string(pid) + "/comm");
  if (!comm || comm->empty()) return std::nullopt;
  if (comm->back() == '\n') comm->pop_back();
  // Debian's alternatives (git runs /usr/bin/editor and /usr/bin/pager)
  // name no program: the executable does (vim.basic, less), when readable.
  if (*comm == "editor" || *comm == "pager") {
    char exe[4096];
    const auto proc_exe = "/proc/" + std::to_string(pid) + "/exe";
    const auto n = ::readlink(proc_exe.c_str(), exe, sizeof exe - 1);
    if (n > 0) {
      const std::string_view path(exe, static_cast<std::size_t>(n));
      const auto name = path.substr(path.rfind('/') + 1);
      if (!name.empty()) return std::string(name);
    }
  }
  return comm;
}

}  // namespace

std::optional<pid_t> probe_foreground_group(int master_fd) {
  pid_t group = ::tcgetpgrp(master_fd);
  if (group <= 0) return std::nullopt;
  return group;
}

std::optional<std::string> probe_foreground_program(int master_fd) {
  auto group = probe_foreground_group(master_fd);
  if (!group) return std::nullopt;
  return comm_of(*group);
}

std::optional<std::string> probe_reading_program(const InputProbeTarget& target) {
  pid_t reader = -1;
  if (probe_input_state(target, &reader) != InputState::reading_input) return std::nullopt;
  return comm_of(reader);
}

std::optional<LineModes> probe_line_modes(int master_fd) {
  termios modes{};
  if (::tcgetattr(master_fd, &modes) != 0) return std::nullopt;
  return LineModes{(modes.c_lflag & ICANON) != 0, (modes.c_lflag & ECHO) != 0,
                   (modes.c_lflag & ISIG) != 0};
}

InputState probe_input_state(const InputProbeTarget& target, pid_t* reader) {
  if (local_arch().empty() || ::access("/proc/self/syscall", R_OK) != 0) return InputState::unknown;
  auto group = probe_foreground_group(target.master_fd);
  if (!group) return InputState::busy;

  // A process that left the terminal's session (setsid) but still holds the
  // slave reads it too, with no job control to stop it: `su user -c CMD`
  // runs CMD so, and its password prompt or REPL waits while su itself, the
  // foreground, only waits for it.
  const pid_t terminal_session = ::tcgetsid(target.master_fd);
  std::vector<pid_t> candidates;
  const bool descendants = collect_descendants(target.supervisor, candidates);
  if (!descendants) candidates = all_processes();
  std::size_t checked = 0;
  bool all_stopped = true;
  bool hidden = false;  // a process that may read it could not be seen
  for (pid_t pid : candidates) {
    auto stat = read_proc_stat(pid);
    if (!stat) continue;
    if (stat->pgrp != *group) {
      if (descendants && terminal_session > 0 && stat->session != terminal_session) {
        const Reading reading = process_reads_terminal(pid, {target.slave_device, false});
        if (reading == Reading::yes) return found_reader(pid, reader);
        hidden = hidden || reading == Reading::hidden;
      }
      continue;
    }
    const Reading reading = process_reads_terminal(pid, {target.slave_device});
    if (reading == Reading::yes) return found_reader(pid, reader);
    hidden = hidden || reading == Reading::hidden;
    all_stopped = all_stopped && stat->state == 'T';
    if (++checked >= kMaxProcesses) break;
  }
  if (checked > 0 && all_stopped) return InputState::suspended;
  return hidden ? InputState::unknown : InputState::busy;
}

}  // namespace agentty::pty
