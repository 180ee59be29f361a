// agentty-supervisor: the session leader and controlling process of one PTY,
// started by agentty for every local program (see supervisor_protocol.hpp).
//
// Why a process of its own: the program gets its own process group that is
// the terminal's foreground group, so a shell that exits leaves its
// background members running on the terminal (no hangup from a dying session
// leader), and agentty learns the program has ended only once the program
// and every other process of the terminal's session (its group, and jobs
// that job control moved to groups of their own) are gone, with the
// program's own wait status.
//
// Why a small program instead of a fork of agentty: fork copies the page
// tables of the whole parent, and agentty's grow with every retained
// execution; exec'ing this static binary costs the same at the 1st and the
// 1000th execution.
//
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sched.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pty/supervisor_protocol.hpp"
#include "pty/terminal_session.hpp"

namespace {

using agentty::pty::supervisor::Instruction;
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

// Whether a failed candidate ends the PATH search (as execvp decides).
bool ends_search(int err) {
  return err != ENOENT && err != ENOTDIR && err != ELOOP && err != ENAMETOOLONG && err != EACCES;
}

// Runs the program in this process, searching PATH as execvp does: EACCES is
// remembered while later entries are tried; a file without a #! line runs
// under /bin/sh. Returns only on failure, with the errno to report.
int exec_program(ProgramPlan& plan) {
  int reported = ENOENT;
  for (std::string& candidate : plan.candidates) {
    ::execve(candidate.c_str(), plan.argv.data(), environ);
    int err = errno;
    if (err == ENOEXEC) {
      plan.shell_argv[1] = candidate.data();
      ::execve("/bin/sh", plan.shell_argv.data(), environ);
      err = errno;
    }
    if (err == EACCES) reported = EACCES;
    if (ends_search(err)) return err;
  }
  return reported;
}

bool group_is_empty(pid_t group) {
  return ::kill(-group, 0) != 0 && errno == ESRCH;
}

// Whether a process of this terminal's session is left besides this one: the
// program's group, or a job that job control moved to a group of its own
// (`set -m; server &`, `bash -i`, GNU timeout's own group). Each descends
// from this subreaper through children in the session (a process that left
// it with setsid cannot come back), so the children tell. One that ignores
// the hang-up is left to outlive the terminal, as it asked. nullopt: the
// children cannot be listed (no CONFIG_PROC_CHILDREN).
std::optional<bool> session_has_members() {
  pid_t self = ::getpid();
  std::string path = "/proc/self/task/" + std::to_string(self) + "/children";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  const char* cursor = text.c_str();
  char* end = nullptr;
  for (long pid = std::strtol(cursor, &end, 10); end != cursor;
       cursor = end, pid = std::strtol(cursor, &end, 10)) {
    auto child = static_cast<pid_t>(pid);
    if (::getsid(child) == self && !agentty::pty::ignores_hangup(child)) return true;
  }
  return false;
}

// Nothing is left of the program once it has ended: its group is empty (a
// background job in it may ignore the hang-up: it still counts, as before),
// and so is the rest of its session.
bool program_left_nothing(pid_t program) {
  if (!group_is_empty(program)) return false;
  return !session_has_members().value_or(false);
}

// The master side of our terminal was closed while we ran: agentty is gone
// (killed, crashed) without stopping the program.
bool terminal_hung_up() {
  struct pollfd terminal {
    0, 0, 0
  };
  return ::poll(&terminal, 1, 0) == 1 && (terminal.revents & POLLHUP);
}

long long monotonic_ns() {
  struct timespec now {};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

// What happens to a session whose terminal hangs up: every process of it gets
// SIGHUP (the kernel sends it only to us, the session leader, and we block
// it), and, after a grace, SIGKILL unless it ignores SIGHUP (nohup: it asked
// to outlive its terminal). Without this, everything agentty started ran on
// as orphans after agentty was killed.
class HangUp {
 public:
  void start() {
    if (started_) return;
    started_ = true;
    agentty::pty::signal_session_members(::getpid(), SIGHUP);
    agentty::pty::continue_stopped_members(::getpid());
    kill_at_ns_ = monotonic_ns() + kGraceNs;
  }
  bool started() const { return started_; }
  // Kills what is left once the grace is over; returns how long until then
  // (0: over, or no hang-up), so the caller wakes up in time.
  long long after_grace() {
    if (!started_ || killed_) return 0;
    long long left = kill_at_ns_ - monotonic_ns();
    if (left > 0) return left;
    agentty::pty::kill_session_members_but_nohup(::getpid());
    killed_ = true;
    return 0;
  }

 private:
  static constexpr long long kGraceNs = 2'000'000'000;  // as agentty's own shutdown
  bool started_ = false;
  bool killed_ = false;
  long long kill_at_ns_ = 0;
};

[[noreturn]] void exit_like(int wait_status) {
  if (!WIFSIGNALED(wait_status)) ::_exit(WEXITSTATUS(wait_status));
  int signo = WTERMSIG(wait_status);
  struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);
  // Default action, whatever this process set up: a sanitizer build's
  // runtime catches SIGSEGV, SIGBUS and SIGFPE, and reported a program's
  // SIGSEGV as its own abort (SIGABRT).
  ::signal(signo, SIG_DFL);
  ::kill(::getpid(), signo);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::_exit(128 + signo);
}

// Reaps everything that ends up as our child (subreaper) until the program is
// gone and no other process is left in the terminal's session (a job in
// another group counts: it is ours to stop, not an orphan). A process that
// leaves the session (setsid) or whose death we are not told about (its
// parent is another descendant) sends us no signal, so the session is
// re-checked on a timer: every second while the program runs, and from 1 ms doubling up to a
// second once it has ended (`daemon & exit` must not wait a whole second for
// the daemon's setsid, nor a long-lived background job cost many wake-ups).
// A hang-up of the terminal (SIGHUP with the master closed) ends the
// session (HangUp), and so does the program's end once agentty asked for
// that (kEndWithProgramSignal: a session's shell, as a terminal window
// closes with its shell).
[[noreturn]] void supervise(pid_t program) {
  sigset_t awaited;
  sigemptyset(&awaited);
  sigaddset(&awaited, SIGCHLD);
  sigaddset(&awaited, SIGHUP);
  sigaddset(&awaited, agentty::pty::supervisor::kEndWithProgramSignal);
  int program_status = 0;
  bool program_done = false;
  bool end_with_program = false;
  long recheck_ns = 1'000'000;
  HangUp hang_up;
  for (;;) {
    long long until_kill_ns = hang_up.after_grace();
    int status = 0;
    pid_t reaped;
    while ((reaped = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped == program) {
        program_status = status;
        program_done = true;
      }
    }
    if (program_done && end_with_program) hang_up.start();
    bool no_children = reaped < 0 && errno == ECHILD;
    // After a hang-up, what ignores it (nohup) no longer holds us, in the
    // program's group either: nobody is left to read the terminal.
    bool nothing_left = no_children || (hang_up.started() ? !session_has_members().value_or(false)
                                                          : program_left_nothing(program));
    if (program_done && nothing_left) exit_like(program_status);
    struct timespec recheck {
      1, 0
    };
    if (program_done && recheck_ns < 1'000'000'000) {
      recheck = {0, recheck_ns};
      recheck_ns *= 2;
    }
    if (until_kill_ns > 0 && until_kill_ns < recheck.tv_sec * 1'000'000'000LL + recheck.tv_nsec)
      recheck = {static_cast<time_t>(until_kill_ns / 1'000'000'000),
                 static_cast<long>(until_kill_ns % 1'000'000'000)};
    int signo = ::sigtimedwait(&awaited, nullptr, &recheck);
    if (signo == SIGHUP && terminal_hung_up()) hang_up.start();
    if (signo == agentty::pty::supervisor::kEndWithProgramSignal) end_with_program = true;
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
  plan.shell_argv.push_back(nullptr);  // the candidate, filled in by exec_program
  for (int i = 1; i < argc; ++i) plan.shell_argv.push_back(argv[i]);
  plan.shell_argv.push_back(nullptr);
  return plan;
}

bool read_exactly(char* into, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::read(kStatusFd, into, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    into += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// A spare's instruction's length prefix, and the fd that came with it
// (SCM_RIGHTS), if any, in `attached`.
bool read_length(std::uint32_t& length, int& attached) {
  agentty::pty::supervisor::FdMessage<1> first(&length, sizeof length);
  ssize_t n;
  while ((n = ::recvmsg(kStatusFd, &first.header, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return false;
  int fds[1];
  if (first.attached(fds)) attached = fds[0];
  return read_exactly(reinterpret_cast<char*>(&length) + n, sizeof length - n);
}

// A spare's instruction, read from kStatusFd, with the program's stdin file
// in `stdin_fd` if one came with it; nullopt at end of file (agentty no
// longer needs this spare) or on a malformed message.
std::optional<Instruction> read_instruction(int& stdin_fd) {
  std::uint32_t length = 0;
  if (!read_length(length, stdin_fd)) return std::nullopt;
  if (length > agentty::pty::supervisor::kMaxInstructionBytes) return std::nullopt;
  std::string payload(length, '\0');
  if (!read_exactly(payload.data(), length)) return std::nullopt;
  return agentty::pty::supervisor::decode(payload);
}

// The stdin file (if fd >= 0) in place of the terminal on fd 0, once the
// terminal was made ours (tcsetpgrp uses fd 0).
void take_stdin_file(int fd) {
  if (fd < 0) return;
  if (::dup2(fd, 0) < 0) fail(Stage::stdin_file, errno);
  ::close(fd);
}

// NULL-terminated char* views of `strings`, which must outlive them.
std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// A spare maker's request: one message with the new spare's PTY slave and
// its end of the control socket (SCM_RIGHTS). False at end of file (agentty
// is done with us) or on a malformed message.
bool receive_request(int (&fds)[2]) {
  agentty::pty::supervisor::SpareRequest request;
  ssize_t n;
  while ((n = ::recvmsg(kStatusFd, &request.header, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  return n > 0 && request.attached(fds);
}

// The spare maker (see supervisor_protocol.hpp): forks a spare per request
// and sends its pid, or -errno if it cannot fork, on the spare's socket (so
// agentty learns the pid, and reaps the spare, even if it is killed at once). Forking this small
// process costs a fraction of exec'ing a new one (no image to load, no start-up), and the work
// happens here rather than on agentty's event loop. CLONE_PARENT makes each spare agentty's own
// child, so agentty reaps it and reads its exit status exactly as for a spare it spawned itself.
// Returns only in a new spare, with its fds and session set up as posix_spawn sets up --spare.
void make_spares() {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // not outlive agentty
  for (;;) {
    int fds[2];
    if (!receive_request(fds)) ::_exit(0);
    // Like fork(): the child continues on a copy of this stack.
    long pid = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0);
    if (pid == 0) {
      for (int fd = 0; fd <= 2; ++fd) ::dup2(fds[0], fd);
      ::dup2(fds[1], kStatusFd);  // in place of the maker's socket
      ::close_range(kStatusFd + 1, ~0U, 0);
      ::setsid();
      return;
    }
    std::int32_t announced = pid > 0 ? static_cast<std::int32_t>(pid) : -errno;
    ssize_t ignored = ::send(fds[1], &announced, sizeof announced, MSG_NOSIGNAL);
    (void)ignored;
    ::close(fds[0]);
    ::close(fds[1]);
  }
}

// ---- the program's side of the fork ----

// In the program's own process group, made the terminal's foreground group
// (every signal is still blocked, so no SIGTTOU): announces its pid, then
// execs. The status socket closes on exec; a failure is sent on it first.
[[noreturn]] void become_program(ProgramPlan plan) {
  send_status(Stage::program_pid, ::getpid());
  ::prctl(PR_SET_PDEATHSIG, 0);  // a spare's, not the program's
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  fail(Stage::exec, exec_program(plan));
}

void join_own_foreground_group() {
  ::setpgid(0, 0);
  ::tcsetpgrp(0, ::getpid());
}

// A spare's program-to-be: it waits for the instruction (program,
// environment, directory) itself, dying with the supervisor if that is
// killed first (agentty then sees the socket close and starts another way).
// End of file: agentty no longer needs this spare.
[[noreturn]] void become_spare_program(pid_t supervisor) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != supervisor) ::_exit(0);
  int stdin_fd = -1;
  std::optional<Instruction> instruction = read_instruction(stdin_fd);
  if (!instruction) ::_exit(0);
  take_stdin_file(stdin_fd);
  if (!instruction->cwd.empty() && ::chdir(instruction->cwd.c_str()) != 0)
    fail(Stage::chdir, errno);
  // Locals of a function that never returns: they live until exec.
  std::vector<char*> program_env = pointers_to(instruction->env);
  environ = program_env.data();  // PATH lookup and the program's environment
  std::vector<char*> program_argv = pointers_to(instruction->argv);
  become_program(make_plan(static_cast<int>(program_argv.size()) - 1, program_argv.data()));
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "%s is started by agentty for each program it runs on a terminal; "
               "it is not a command to run by hand.\n",
               agentty::pty::supervisor::kProgramName);
  ::_exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  using agentty::pty::supervisor::kModeFlag;
  using agentty::pty::supervisor::kSpareFlag;
  using agentty::pty::supervisor::kSpareMakerFlag;
  bool maker = argc == 2 && std::strcmp(argv[1], kSpareMakerFlag) == 0;
  bool spare = maker || (argc == 2 && std::strcmp(argv[1], kSpareFlag) == 0);
  bool direct = argc >= 3 && std::strcmp(argv[1], kModeFlag) == 0;
  if ((!spare && !direct) || ::fcntl(kStatusFd, F_GETFD) < 0) usage();
  if (maker) {
    make_spares();  // returns in a spare, its pid already sent
    // Shown as a spare in ps (/proc/PID/cmdline), not as a second maker.
    std::memset(argv[1], 0, std::strlen(argv[1]));
    std::memcpy(argv[1], kSpareFlag, std::strlen(kSpareFlag));
  }
  // The program's copy closes on exec, which is how agentty learns it ran.
  ::fcntl(kStatusFd, F_SETFD, FD_CLOEXEC);
  if (::getsid(0) != ::getpid()) fail(Stage::setsid, EPERM);
  if (::ioctl(0, TIOCSCTTY, 0) < 0) fail(Stage::controlling_tty, errno);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  if (spare && !maker) {
    // First word: our pid.
    std::int32_t self = ::getpid();
    if (::write(kStatusFd, &self, sizeof self) != sizeof self) ::_exit(0);
  }
  // Only --supervise is given a stdin file this way (a spare's comes with its
  // instruction); posix_spawn closed every fd above it.
  const int stdin_file =
      direct && ::fcntl(agentty::pty::supervisor::kStdinFd, F_SETFD, FD_CLOEXEC) == 0
          ? agentty::pty::supervisor::kStdinFd
          : -1;
  // The program's process is forked now, before a spare's instruction comes,
  // so that running it costs only its exec.
  pid_t supervisor = ::getpid();
  pid_t program = ::fork();
  if (program < 0) fail(Stage::fork, errno);
  if (program == 0) {
    join_own_foreground_group();
    if (spare) become_spare_program(supervisor);
    take_stdin_file(stdin_file);
    become_program(make_plan(argc - 2, argv + 2));
  }
  // The program's copy is the last: end of file tells agentty it exec'd.
  ::close(kStatusFd);
  if (stdin_file >= 0) ::close(stdin_file);
  supervise(program);
}
