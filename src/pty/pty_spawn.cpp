#include "pty/pty_spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>
#include <utility>

#include "base/errno_message.hpp"
#include "base/fd_io.hpp"
#include "base/log.hpp"
#include "pty/supervisor_protocol.hpp"

extern char** environ;

namespace agentty::pty {

namespace {

// How long a destroyed spare waits for its pid from the maker (normally
// there already, or a fork away).
constexpr int kForkedPidWaitMs = 1000;

// ---- parent side ----

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

// Keeps our fds out of 0..kStdinFd, the numbers the supervisor's fds take
// (so that no dup2 onto them clobbers another source fd first, and none is a
// dup2 onto itself, which would leave it close-on-exec).
// `fd` is what the call named `what` returned: -1 is its failure, with errno
// still set (a dup of -1 said "Bad file descriptor" where the open had run
// out of fds).
Expected<UniqueFd> ensure_above_stdio(UniqueFd fd, const char* what) {
  if (!fd) return make_error(errno_message(what));
  if (fd.get() > supervisor::kStdinFd) return fd;
  UniqueFd moved(::fcntl(fd.get(), F_DUPFD_CLOEXEC, supervisor::kStdinFd + 1));
  if (!moved) return make_error(errno_message(what));
  return moved;
}

// The checks every start makes before anything runs.
Expected<void> check_options(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) return make_error("no program to run");
  return check_cwd(options.cwd);
}

// The program's standard input when it is given as data: a read-only file
// (a memfd reopened O_RDONLY, as `prog < file` opens one), so that the
// program reads exactly these bytes and then end of file, seekable, never
// echoed and never cut into lines as typing them into the terminal would be.
// No data: no file (the program reads the terminal).
Expected<UniqueFd> make_stdin_file(const std::optional<std::string>& stdin_data) {
  if (!stdin_data) return UniqueFd();
  const std::string& data = *stdin_data;
  UniqueFd writable(::memfd_create("agentty-stdin", MFD_CLOEXEC));
  if (!writable) return make_error(errno_message("stdin: making its file (memfd_create)"));
  if (auto written = write_all(writable.get(), data); !written)
    return make_error("stdin: writing its file: " + written.error());
  auto path = "/proc/self/fd/" + std::to_string(writable.get());
  return ensure_above_stdio(UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)),
                            "stdin: reopening its file read-only");
}

// Sends all of `message` on a spare's control socket, with `fd` (if >= 0)
// attached to its first bytes. False if the spare has gone.
bool send_instruction(int control, std::string& message, int fd) {
  std::size_t sent = 0;
  if (fd >= 0) {
    supervisor::FdMessage<1> first(message.data(), message.size());
    first.attach({fd});
    ssize_t n;
    while ((n = ::sendmsg(control, &first.header, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (n <= 0) return false;
    sent = static_cast<std::size_t>(n);
  }
  while (sent < message.size()) {
    ssize_t n = ::send(control, message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

Expected<void> set_window_size(int master, TerminalSize size) {
  struct winsize window {};
  window.ws_col = size.cols;
  window.ws_row = size.rows;
  if (::ioctl(master, TIOCSWINSZ, &window) != 0)
    return make_error(errno_message("ioctl(TIOCSWINSZ)"));
  return {};
}

// A connected pair: ours, and theirs above the fds a supervisor's take.
struct SocketPair {
  UniqueFd ours;
  UniqueFd theirs;
};

Expected<SocketPair> socket_pair(int type) {
  int sockets[2];
  if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sockets) != 0)
    return make_error(errno_message("socketpair"));
  UniqueFd ours(sockets[0]);
  auto theirs = ensure_above_stdio(UniqueFd(sockets[1]), "fcntl(F_DUPFD_CLOEXEC)");
  if (!theirs) return make_error(theirs.error());
  return SocketPair{std::move(ours), std::move(theirs.value())};
}

struct Terminal {
  UniqueFd master;
  UniqueFd slave;
  dev_t slave_device = 0;
};

// A number the kernel shows under /proc/sys/kernel/pty/, or "?".
std::string pty_setting(const char* name) {
  UniqueFd fd(::open((std::string("/proc/sys/kernel/pty/") + name).c_str(), O_RDONLY | O_CLOEXEC));
  char text[32] = {};
  if (!fd || ::read(fd.get(), text, sizeof text - 1) <= 0) return "?";
  std::string value(text);
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  return value;
}

// ENOSPC from posix_openpt is not a full disk: every pseudo-terminal the
// system allows is taken (a program that opens terminals without end), and
// "No space left on device" alone sent people to df.
std::string terminal_open_message(int err) {
  std::string message = errno_message("posix_openpt", err);
  if (err != ENOSPC) return message;
  return message + "; every pseudo-terminal the system allows is in use (" + pty_setting("nr") +
         " open, kernel.pty.max " + pty_setting("max") + ", of which kernel.pty.reserve " +
         pty_setting("reserve") +
         " are for root; a container's devpts may set a lower max=): end the programs that "
         "hold terminals (sessions, editors, ssh, a program opening them without end), or "
         "raise /proc/sys/kernel/pty/max";
}

Expected<Terminal> open_terminal(TerminalSize size) {
  Terminal terminal;
  terminal.master.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!terminal.master) return make_error(terminal_open_message(errno));
  if (::grantpt(terminal.master.get()) != 0) return make_error(errno_message("grantpt"));
  if (::unlockpt(terminal.master.get()) != 0) return make_error(errno_message("unlockpt"));
  char name[128];
  if (::ptsname_r(terminal.master.get(), name, sizeof name) != 0)
    return make_error(errno_message("ptsname_r"));
  if (auto sized = set_window_size(terminal.master.get(), size); !sized)
    return make_error(sized.error());
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

// Where agentty-supervisor is: beside this executable (an installed agentty,
// or build/agentty), else where the build put it (test and bench binaries).
const std::string& supervisor_path() {
  static const std::string path = [] {
    std::error_code ignored;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ignored);
    auto beside = self.parent_path() / supervisor::kProgramName;
    if (!self.empty() && ::access(beside.c_str(), X_OK) == 0) return beside.string();
    return std::string(AGENTTY_SUPERVISOR_PATH);
  }();
  return path;
}

// posix_spawn's attribute and file-action objects, destroyed on every path.
struct SpawnRequest {
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
  SpawnRequest() {
    ::posix_spawnattr_init(&attributes);
    ::posix_spawn_file_actions_init(&actions);
  }
  ~SpawnRequest() {
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
  }
  SpawnRequest(const SpawnRequest&) = delete;
  SpawnRequest& operator=(const SpawnRequest&) = delete;
};

// Starts agentty-supervisor (see supervisor_protocol.hpp) in a new session with
// the slave as its stdio, `status_fd` on kStatusFd, `stdin_fd` (if >= 0) on
// kStdinFd, every signal blocked and at its default, in `cwd` (empty: ours)
// with `environment` (empty: ours) and `mode_arguments` after its name. posix_spawn uses vfork
// semantics, so the cost does not grow with agentty's memory.
Expected<pid_t> spawn_supervisor(const std::vector<std::string>& mode_arguments,
                                 const std::string& cwd, std::vector<std::string> environment,
                                 int slave_fd, int status_fd, int stdin_fd = -1) {
  SpawnRequest request;
  for (int fd = 0; fd <= 2; ++fd)
    ::posix_spawn_file_actions_adddup2(&request.actions, slave_fd, fd);
  ::posix_spawn_file_actions_adddup2(&request.actions, status_fd, supervisor::kStatusFd);
  int last_kept = supervisor::kStatusFd;
  if (stdin_fd >= 0) {
    ::posix_spawn_file_actions_adddup2(&request.actions, stdin_fd, supervisor::kStdinFd);
    last_kept = supervisor::kStdinFd;
  }
  ::posix_spawn_file_actions_addclosefrom_np(&request.actions, last_kept + 1);
  if (!cwd.empty()) ::posix_spawn_file_actions_addchdir_np(&request.actions, cwd.c_str());
  sigset_t all;
  sigfillset(&all);
  ::posix_spawnattr_setsigdefault(&request.attributes, &all);
  ::posix_spawnattr_setsigmask(&request.attributes, &all);
  ::posix_spawnattr_setflags(&request.attributes,
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arguments{supervisor_path()};
  arguments.insert(arguments.end(), mode_arguments.begin(), mode_arguments.end());
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  int err = ::posix_spawn(&pid, argv[0], &request.actions, &request.attributes, argv.data(),
                          environment.empty() ? environ : envp.data());
  if (err == 0) return pid;
  if (auto checked = check_cwd(cwd); !checked) return make_error(checked.error());
  if (err == E2BIG) return make_error(arguments_too_long_message("posix_spawn"));
  // Only these mean the program file itself: a process or memory limit sent
  // people to rebuild agentty.
  if (err == ENOENT || err == EACCES || err == ENOEXEC || err == ENOTDIR)
    return make_error("cannot start " + supervisor_path() + ": " + std::strerror(err) +
                      " (agentty runs every program under it; `make build` builds it beside "
                      "the agentty binary)");
  return make_error(
      "cannot start " + supervisor_path() +
      " (agentty runs every program under it): " + process_start_message("posix_spawn", err));
}

// Whether the spare is still waiting for its instruction: after its pid it
// writes nothing before one, so anything readable (end of file, a failure)
// means it has gone.
bool spare_is_waiting(int control) {
  struct pollfd check {
    control, POLLIN, 0
  };
  return ::poll(&check, 1, 0) == 0;
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
    for (const char* name : kAgentPagerVariables) variables[name] = "cat";
  }
  for (const auto& [key, value] : options.env) variables[key] = value;
  std::vector<std::string> environment;
  for (const auto& [key, value] : variables) environment.push_back(key + "=" + value);
  return environment;
}

Expected<StartingProgram> start_supervised(const SpawnOptions& options) {
  if (auto checked = check_options(options); !checked) return make_error(checked.error());
  auto terminal = open_terminal(options.size);
  if (!terminal) return make_error(terminal.error());

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return make_error(errno_message("pipe2"));
  UniqueFd status_read(pipe_fds[0]);
  auto status_write = ensure_above_stdio(UniqueFd(pipe_fds[1]), "fcntl(F_DUPFD_CLOEXEC)");
  if (!status_write) return make_error(status_write.error());

  auto stdin_file = make_stdin_file(options.stdin_data);
  if (!stdin_file) return make_error(stdin_file.error());

  std::vector<std::string> mode{supervisor::kModeFlag};
  mode.insert(mode.end(), options.argv.begin(), options.argv.end());
  auto started = spawn_supervisor(mode, options.cwd, build_environment(options),
                                  terminal->slave.get(), status_write->get(), stdin_file->get());
  if (!started) return make_error(started.error());
  return StartingProgram(std::move(terminal->master), terminal->slave_device, started.value(),
                         std::move(status_read), options, /*from_spare=*/false);
}

Expected<SpawnedPty> spawn_supervised(const SpawnOptions& options) {
  auto starting = start_supervised(options);
  if (!starting) return make_error(starting.error());
  starting->wait_blocking();
  auto finished = std::move(starting.value()).finish();
  // Only a spare can end having run nothing.
  if (!finished) return make_error(kSupervisorEndedEarly);
  return std::move(*finished);
}

SpareSupervisor::SpareSupervisor(UniqueFd master, UniqueFd control, pid_t pid, dev_t slave_device)
    : master_(std::move(master)),
      control_(std::move(control)),
      pid_(pid),
      slave_device_(slave_device) {}

SpareSupervisor::SpareSupervisor(SpareSupervisor&& other) noexcept
    : master_(std::move(other.master_)),
      control_(std::move(other.control_)),
      pid_(std::exchange(other.pid_, -1)),
      announced_(other.announced_),
      slave_device_(other.slave_device_) {}

bool SpareSupervisor::await_pid() {
  if (announced_) return true;
  std::int32_t pid = 0;
  ssize_t n;
  while ((n = ::recv(control_.get(), &pid, sizeof pid, MSG_WAITALL)) < 0 && errno == EINTR) {
  }
  if (n != sizeof pid || pid <= 0) return false;  // it ended first, or was never forked
  if (pid_ <= 0) pid_ = pid;
  announced_ = true;
  return true;
}

pid_t SpareSupervisor::pid() {
  await_pid();
  return pid_;
}

SpareSupervisor::~SpareSupervisor() {
  // A forked spare's pid, to reap it. Its maker sends it right after the
  // fork; a maker killed in between never will, while the spare waits on
  // this very socket for an instruction (no end of file): do not wait for
  // ever. Closing the socket then ends the spare, left unreaped.
  if (control_ && pid_ <= 0) {
    struct pollfd said {
      control_.get(), POLLIN, 0
    };
    if (::poll(&said, 1, kForkedPidWaitMs) == 1) {
      await_pid();
    } else {
      spdlog::warn(
          "a spare PTY supervisor's maker ended before saying its pid; it is left as a "
          "zombie until agentty exits");
    }
  }
  // Unused: it may be blocked reading, so end it rather than wait for it.
  if (pid_ > 0) kill_and_reap(pid_);
}

Expected<SpareSupervisor> SpareSupervisor::start(SpareMaker* maker) {
  auto terminal = open_terminal(TerminalSize{});
  if (!terminal) return make_error(terminal.error());
  auto control = socket_pair(SOCK_STREAM);
  if (!control) return make_error(control.error());
  pid_t pid = -1;  // a forked spare's is known once it says it
  if (maker) {
    if (auto asked = maker->make(terminal->slave.get(), control->theirs.get()); !asked)
      return make_error(asked.error());
  } else {
    auto started = spawn_supervisor({supervisor::kSpareFlag}, "", {}, terminal->slave.get(),
                                    control->theirs.get());
    if (!started) return make_error(started.error());
    pid = started.value();
  }
  return SpareSupervisor(std::move(terminal->master), std::move(control->ours), pid,
                         terminal->slave_device);
}

std::optional<Expected<StartingProgram>> SpareSupervisor::start_program(
    const SpawnOptions& options) && {
  if (auto checked = check_options(options); !checked) return make_error(checked.error());
  if (!await_pid() || !spare_is_waiting(control_.get())) return std::nullopt;
  if (auto sized = set_window_size(master_.get(), options.size); !sized)
    return make_error(sized.error());
  auto stdin_file = make_stdin_file(options.stdin_data);
  if (!stdin_file) return make_error(stdin_file.error());
  std::string message = supervisor::encode({options.cwd, options.argv, build_environment(options)});
  // Nothing ran if this fails: the spare had ended.
  if (!send_instruction(control_.get(), message, stdin_file->get())) return std::nullopt;
  return StartingProgram(std::move(master_), slave_device_, std::exchange(pid_, -1),
                         std::move(control_), options, /*from_spare=*/true);
}

SpareMaker::SpareMaker(UniqueFd socket, pid_t pid) : socket_(std::move(socket)), pid_(pid) {}

SpareMaker::SpareMaker(SpareMaker&& other) noexcept
    : socket_(std::move(other.socket_)),
      pid_(std::exchange(other.pid_, -1)),
      ended_(other.ended_) {}

SpareMaker::~SpareMaker() {
  if (pid_ > 0) kill_and_reap(pid_);
}

Expected<SpareMaker> SpareMaker::start() {
  auto requests = socket_pair(SOCK_SEQPACKET);
  if (!requests) return make_error(requests.error());
  auto null =
      ensure_above_stdio(UniqueFd(::open("/dev/null", O_RDWR | O_CLOEXEC)), "open /dev/null");
  if (!null) return make_error(null.error());
  auto started =
      spawn_supervisor({supervisor::kSpareMakerFlag}, "", {}, null->get(), requests->theirs.get());
  if (!started) return make_error(started.error());
  return SpareMaker(std::move(requests->ours), started.value());
}

Expected<void> SpareMaker::make(int slave, int control) {
  supervisor::SpareRequest request;
  request.attach({slave, control});
  ssize_t n;
  while ((n = ::sendmsg(socket_.get(), &request.header, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (n != 1) {
    ended_ = true;
    return make_error(errno_message("the spare maker: sendmsg"));
  }
  return {};
}

}  // namespace agentty::pty
