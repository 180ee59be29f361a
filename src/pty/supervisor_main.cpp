// agentty-supervisor: the session leader and controlling process of one PTY,
// started by agentty for every local program (see supervisor_protocol.hpp).
//
// Why a process of its own: the program gets its own process group that is
// the terminal's foreground group, so a shell that exits leaves its
// background members running on the terminal (no hangup from a dying session
// leader), and agentty learns the program has ended only once the program
// and its whole group are gone, with the program's own wait status.
//
// Why a small program instead of a fork of agentty: fork copies the page
// tables of the whole parent, and agentty's grow with every retained
// execution; exec'ing this static binary costs the same at the 1st and the
// 1000th execution.
//
// Everything the forked program side needs is prepared before fork; between
// fork and exec it makes only async-signal-safe calls.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "pty/supervisor_protocol.hpp"

namespace {

using agentty::pty::supervisor::kStatusFd;
using agentty::pty::supervisor::Stage;
using agentty::pty::supervisor::StatusMessage;

struct ProgramPlan {
  std::vector<char*> argv;
  std::vector<std::string> candidates;  // where argv[0] may be, in PATH order
  std::vector<char*> shell_argv;        // "sh <candidate> args...", for ENOEXEC
};

void send_status(Stage stage, int value) {
  StatusMessage message{stage, value};
  ssize_t ignored = ::write(kStatusFd, &message, sizeof message);
  (void)ignored;
}

[[noreturn]] void fail(Stage stage, int err) {
  send_status(stage, err);
  ::_exit(127);
}

// Same search as execvp: EACCES is remembered while later entries are tried;
// a file without a #! line runs under /bin/sh.
[[noreturn]] void exec_program(ProgramPlan& plan) {
  int reported = ENOENT;
  for (std::string& candidate : plan.candidates) {
    ::execve(candidate.c_str(), plan.argv.data(), environ);
    int err = errno;
    if (err == ENOEXEC) {
      plan.shell_argv[1] = candidate.data();
      ::execve("/bin/sh", plan.shell_argv.data(), environ);
      err = errno;
    }
    if (err == EACCES) {
      reported = EACCES;
    } else if (err != ENOENT && err != ENOTDIR && err != ELOOP && err != ENAMETOOLONG) {
      reported = err;
      break;
    }
  }
  fail(Stage::exec, reported);
}

[[noreturn]] void run_program(ProgramPlan& plan) {
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

std::vector<std::string> path_candidates(const char* name) {
  if (std::strchr(name, '/')) return {name};
  const char* path_variable = std::getenv("PATH");
  std::string_view rest = path_variable ? path_variable : "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> candidates;
  for (;;) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    candidates.push_back((dir.empty() ? std::string(".") : dir) + "/" + name);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return candidates;
}

ProgramPlan make_plan(int argc, char** argv) {
  ProgramPlan plan;
  plan.argv.assign(argv, argv + argc);
  plan.argv.push_back(nullptr);
  plan.candidates = path_candidates(argv[0]);
  plan.shell_argv.push_back(const_cast<char*>("sh"));
  plan.shell_argv.push_back(nullptr);  // the candidate, filled in by the child
  for (int i = 1; i < argc; ++i) plan.shell_argv.push_back(argv[i]);
  plan.shell_argv.push_back(nullptr);
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], agentty::pty::supervisor::kModeFlag) != 0 ||
      ::fcntl(kStatusFd, F_GETFD) < 0) {
    std::fprintf(stderr,
                 "%s is started by agentty for each program it runs on a terminal; "
                 "it is not a command to run by hand.\n",
                 agentty::pty::supervisor::kProgramName);
    return 2;
  }
  // The program's copy closes on exec, which is how agentty learns it ran.
  ::fcntl(kStatusFd, F_SETFD, FD_CLOEXEC);
  if (::getsid(0) != ::getpid()) fail(Stage::setsid, EPERM);
  if (::ioctl(0, TIOCSCTTY, 0) < 0) fail(Stage::controlling_tty, errno);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ProgramPlan plan = make_plan(argc - 2, argv + 2);
  pid_t program = ::fork();
  if (program < 0) fail(Stage::fork, errno);
  if (program == 0) run_program(plan);
  ::setpgid(program, program);
  send_status(Stage::program_pid, program);
  ::close(kStatusFd);
  supervise(program);
}
