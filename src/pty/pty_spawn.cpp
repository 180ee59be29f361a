#include "pty/pty_spawn.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>

#include "base/errno_message.hpp"

extern char** environ;

namespace agentty::pty {

namespace {

// Messages on the status pipe: fixed size, one write() each (atomic below PIPE_BUF).
enum class Stage : std::int32_t { program_pid, setsid, controlling_tty, chdir, fork, exec };
struct StatusMessage {
  Stage stage;
  std::int32_t value;  // the program's pid, or an errno
};

// Everything the forked children touch, allocated before fork.
struct ChildPlan {
  std::vector<std::string> environment;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<std::string> candidates;  // where argv[0] may be, in PATH order
  std::vector<char*> shell_argv;        // "/bin/sh <candidate> args...", for ENOEXEC
  const char* cwd = nullptr;
  int slave_fd = -1;
  int status_fd = -1;
};

// ---- child side: async-signal-safe calls only ----

void send_status(int fd, Stage stage, int value) {
  StatusMessage message{stage, value};
  ssize_t ignored = ::write(fd, &message, sizeof message);
  (void)ignored;
}

[[noreturn]] void fail(const ChildPlan& plan, Stage stage, int err) {
  send_status(plan.status_fd, stage, err);
  ::_exit(127);
}

void reset_signal_dispositions() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  for (int signo = 1; signo < NSIG; ++signo) ::sigaction(signo, &action, nullptr);
}

// Same search as execvp: EACCES is remembered while later entries are tried;
// a file without a #! line runs under /bin/sh.
[[noreturn]] void exec_program(ChildPlan& plan) {
  int reported = ENOENT;
  for (std::string& candidate : plan.candidates) {
    ::execve(candidate.c_str(), plan.argv.data(), plan.envp.data());
    int err = errno;
    if (err == ENOEXEC) {
      plan.shell_argv[1] = candidate.data();
      ::execve("/bin/sh", plan.shell_argv.data(), plan.envp.data());
      err = errno;
    }
    if (err == EACCES) {
      reported = EACCES;
    } else if (err != ENOENT && err != ENOTDIR && err != ELOOP && err != ENAMETOOLONG) {
      reported = err;
      break;
    }
  }
  fail(plan, Stage::exec, reported);
}

[[noreturn]] void run_program(ChildPlan& plan) {
  ::setpgid(0, 0);
  // SIGTTOU is still blocked, so a background group may take the terminal.
  ::tcsetpgrp(0, ::getpid());
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  exec_program(plan);
}

bool group_is_empty(pid_t group) {
  return ::kill(-group, 0) != 0 && errno == ESRCH;
}

[[noreturn]] void exit_like(int wait_status) {
  if (!WIFSIGNALED(wait_status)) ::_exit(WEXITSTATUS(wait_status));
  int signo = WTERMSIG(wait_status);
  struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::kill(::getpid(), signo);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::_exit(128 + signo);
}

// Reaps everything that ends up as our child (subreaper) until the program is
// gone and its process group is empty. A group member whose death we are not
// told about (its parent is another descendant) is noticed by the periodic
// re-check.
[[noreturn]] void supervise(pid_t program) {
  sigset_t child_signal;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  int program_status = 0;
  bool program_done = false;
  for (;;) {
    int status = 0;
    pid_t reaped;
    while ((reaped = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped == program) {
        program_status = status;
        program_done = true;
      }
    }
    bool no_children = reaped < 0 && errno == ECHILD;
    if (program_done && (no_children || group_is_empty(program))) exit_like(program_status);
    struct timespec recheck {
      1, 0
    };
    ::sigtimedwait(&child_signal, nullptr, &recheck);
  }
}

[[noreturn]] void run_supervisor(ChildPlan& plan) {
  reset_signal_dispositions();
  if (::setsid() < 0) fail(plan, Stage::setsid, errno);
  if (::ioctl(plan.slave_fd, TIOCSCTTY, 0) < 0) fail(plan, Stage::controlling_tty, errno);
  for (int fd = 0; fd <= 2; ++fd) ::dup2(plan.slave_fd, fd);
  // status_fd >= 3 (see ensure_above_stdio); the slave and the master go too.
  ::close_range(3, static_cast<unsigned>(plan.status_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(plan.status_fd) + 1, ~0U, 0);
  if (plan.cwd && ::chdir(plan.cwd) < 0) fail(plan, Stage::chdir, errno);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t program = ::fork();
  if (program < 0) fail(plan, Stage::fork, errno);
  if (program == 0) run_program(plan);
  ::setpgid(program, program);
  send_status(plan.status_fd, Stage::program_pid, program);
  ::close(plan.status_fd);
  supervise(program);
}

// ---- parent side ----

std::vector<std::string> path_candidates(const std::string& name,
                                         const std::vector<std::string>& environment) {
  if (name.find('/') != std::string::npos) return {name};
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& entry : environment)
    if (entry.starts_with("PATH=")) path = entry.substr(5);
  std::vector<std::string> candidates;
  std::string_view rest = path;
  for (;;) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    candidates.push_back((dir.empty() ? std::string(".") : dir) + "/" + name);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return candidates;
}

ChildPlan make_plan(const SpawnOptions& options, std::vector<std::string>& argv_storage) {
  ChildPlan plan;
  plan.environment = build_environment(options);
  for (auto& entry : plan.environment) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  for (auto& arg : argv_storage) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  plan.candidates = path_candidates(argv_storage[0], plan.environment);
  plan.shell_argv.push_back(const_cast<char*>("sh"));
  plan.shell_argv.push_back(nullptr);  // the candidate, filled in by the child
  for (std::size_t i = 1; i < argv_storage.size(); ++i)
    plan.shell_argv.push_back(argv_storage[i].data());
  plan.shell_argv.push_back(nullptr);
  if (!options.cwd.empty()) plan.cwd = options.cwd.c_str();
  return plan;
}

Expected<void> check_cwd(const std::string& cwd) {
  if (cwd.empty()) return {};
  struct stat st {};
  if (::stat(cwd.c_str(), &st) != 0)
    return make_error("cwd '" + cwd + "': " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return make_error("cwd '" + cwd + "': Not a directory");
  if (::access(cwd.c_str(), X_OK) != 0)
    return make_error("cwd '" + cwd + "': " + std::strerror(errno));
  return {};
}

// Keeps our fds out of 0..2, which the supervisor overwrites with the slave.
Expected<UniqueFd> ensure_above_stdio(UniqueFd fd, const char* what) {
  if (fd.get() > 2) return fd;
  UniqueFd moved(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
  if (!moved) return make_error(errno_message(what));
  return moved;
}

struct Terminal {
  UniqueFd master;
  UniqueFd slave;
  dev_t slave_device = 0;
};

Expected<Terminal> open_terminal(TerminalSize size) {
  Terminal terminal;
  terminal.master.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!terminal.master) return make_error(errno_message("posix_openpt"));
  if (::grantpt(terminal.master.get()) != 0) return make_error(errno_message("grantpt"));
  if (::unlockpt(terminal.master.get()) != 0) return make_error(errno_message("unlockpt"));
  char name[128];
  if (::ptsname_r(terminal.master.get(), name, sizeof name) != 0)
    return make_error(errno_message("ptsname_r"));
  struct winsize window {};
  window.ws_col = size.cols;
  window.ws_row = size.rows;
  if (::ioctl(terminal.master.get(), TIOCSWINSZ, &window) != 0)
    return make_error(errno_message("ioctl(TIOCSWINSZ)"));
  auto slave =
      ensure_above_stdio(UniqueFd(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)), "open pty slave");
  if (!slave) return make_error(slave.error());
  terminal.slave = std::move(slave.value());
  struct stat st {};
  if (::fstat(terminal.slave.get(), &st) != 0) return make_error(errno_message("fstat"));
  terminal.slave_device = st.st_rdev;
  // Line editing in cooked mode should erase whole UTF-8 characters.
  termios modes{};
  if (::tcgetattr(terminal.slave.get(), &modes) == 0) {
    modes.c_iflag |= IUTF8;
    ::tcsetattr(terminal.slave.get(), TCSANOW, &modes);
  }
  return terminal;
}

std::string describe_failure(const StatusMessage& message, const SpawnOptions& options) {
  int err = message.value;
  switch (message.stage) {
    case Stage::exec:
      return "cannot run '" + options.argv[0] + "': " + std::strerror(err) + " (execvp)";
    case Stage::chdir:
      return "cwd '" + options.cwd + "': " + std::strerror(err);
    case Stage::setsid:
      return errno_message("setsid", err);
    case Stage::controlling_tty:
      return errno_message("ioctl(TIOCSCTTY)", err);
    case Stage::fork:
      return errno_message("fork", err);
    case Stage::program_pid:
      break;
  }
  return "unexpected status from the PTY supervisor";
}

void reap_blocking(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

pid_t fork_with_signals_blocked(ChildPlan& plan) {
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t pid = ::fork();
  if (pid == 0) run_supervisor(plan);
  int saved = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = saved;
  return pid;
}

}  // namespace

std::vector<std::string> build_environment(const SpawnOptions& options) {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    variables.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  variables.erase("COLUMNS");
  variables.erase("LINES");
  variables["TERM"] = "xterm-256color";
  if (options.agent_defaults) {
    variables["PAGER"] = "cat";
    variables["GIT_PAGER"] = "cat";
  }
  for (const auto& [key, value] : options.env) variables[key] = value;
  std::vector<std::string> environment;
  for (const auto& [key, value] : variables) environment.push_back(key + "=" + value);
  return environment;
}

Expected<SpawnedPty> spawn_supervised(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) return make_error("no program to run");
  if (auto cwd = check_cwd(options.cwd); !cwd) return make_error(cwd.error());
  auto terminal = open_terminal(options.size);
  if (!terminal) return make_error(terminal.error());

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return make_error(errno_message("pipe2"));
  UniqueFd status_read(pipe_fds[0]);
  auto status_write = ensure_above_stdio(UniqueFd(pipe_fds[1]), "fcntl(F_DUPFD_CLOEXEC)");
  if (!status_write) return make_error(status_write.error());

  std::vector<std::string> argv_storage = options.argv;
  ChildPlan plan = make_plan(options, argv_storage);
  plan.slave_fd = terminal->slave.get();
  plan.status_fd = status_write->get();

  pid_t supervisor = fork_with_signals_blocked(plan);
  if (supervisor < 0) return make_error(errno_message("fork"));
  terminal->slave.reset();
  status_write->reset();

  // Until EOF: the supervisor closes its end after sending the pid; the
  // program's end closes on exec (O_CLOEXEC) or after an exec error message.
  SpawnedPty spawned;
  std::optional<StatusMessage> failure;
  StatusMessage message{};
  for (;;) {
    ssize_t n = ::read(status_read.get(), &message, sizeof message);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof message)) break;
    if (message.stage == Stage::program_pid) {
      spawned.program = message.value;
    } else if (!failure) {
      failure = message;
    }
  }
  if (failure || spawned.program <= 0) {
    // The supervisor ends by itself once the failed program is reaped.
    reap_blocking(supervisor);
    return make_error(failure
                          ? describe_failure(*failure, options)
                          : std::string("the PTY supervisor ended before starting the program"));
  }
  int flags = ::fcntl(terminal->master.get(), F_GETFL);
  ::fcntl(terminal->master.get(), F_SETFL, flags | O_NONBLOCK);
  spawned.master = std::move(terminal->master);
  spawned.supervisor = supervisor;
  spawned.slave_device = terminal->slave_device;
  return spawned;
}

}  // namespace agentty::pty
