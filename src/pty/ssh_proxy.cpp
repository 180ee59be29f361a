#include "pty/ssh_proxy.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>

#include "base/errno_message.hpp"
#include "pty/ssh_connection.hpp"

extern char** environ;

namespace agentty::pty {

namespace {

constexpr std::size_t kKeptErrorBytes = 2048;

void keep(std::string& printed, const char* bytes, std::size_t n) {
  printed.append(bytes, n);
  if (printed.size() > kKeptErrorBytes) printed.erase(0, printed.size() - kKeptErrorBytes);
}

// posix_spawn's settings: a session of its own, default signal actions (an
// ignored SIGPIPE would otherwise reach ssh through exec), nothing blocked.
struct SpawnSettings {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  SpawnSettings(int socket, int errors) {
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, socket, 0);
    posix_spawn_file_actions_adddup2(&actions, socket, 1);
    posix_spawn_file_actions_adddup2(&actions, errors, 2);
    posix_spawnattr_init(&attributes);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes,
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  ~SpawnSettings() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSettings(const SpawnSettings&) = delete;
  SpawnSettings& operator=(const SpawnSettings&) = delete;
};

}  // namespace

struct ProxyProcess::Errors {
  explicit Errors(boost::asio::io_context& io, int fd) : pipe(io, fd) {}
  boost::asio::posix::stream_descriptor pipe;
  std::string printed;

  // Reads what the pipe holds now into `printed`; false once it has ended.
  bool read_now() {
    char buffer[1024];
    for (;;) {
      const ssize_t n = ::read(pipe.native_handle(), buffer, sizeof buffer);
      if (n > 0) {
        keep(printed, buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
  }
};

namespace {

// Waits for the pipe to be readable and reads it in the handler, not with
// async_read_some: started where the pipe already holds bytes (the next read
// after a handler, or the first after a preempted start), that read takes
// them at once and only queues its handler, so a connection failure handled
// in between found the proxy's reason neither in the pipe nor kept ("it
// printed nothing on stderr" for a bastion that had said why).
void read_errors(std::shared_ptr<ProxyProcess::Errors> errors) {
  auto& pipe = errors->pipe;  // taken before the handler moves `errors`
  pipe.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                  [errors = std::move(errors)](boost::system::error_code ec) {
                    if (ec || !errors->pipe.is_open()) return;  // closed with the process
                    if (errors->read_now()) read_errors(errors);
                  });
}

}  // namespace

Expected<std::string> expand_proxy_command(std::string_view command, const ProxyTokens& tokens) {
  std::string out;
  for (std::size_t i = 0; i < command.size(); ++i) {
    if (command[i] != '%') {
      out += command[i];
      continue;
    }
    const char token = i + 1 < command.size() ? command[++i] : '\0';
    switch (token) {
      case 'h':
        out += tokens.host;
        break;
      case 'p':
        out += std::to_string(tokens.port);
        break;
      case 'r':
        out += tokens.user;
        break;
      case 'u':
        out += tokens.local_user;
        break;
      case 'd':
        out += tokens.home;
        break;
      case '%':
        out += '%';
        break;
      default:
        return make_error("the ProxyCommand `" + std::string(command) +
                          "` of the ssh config has %" + std::string(token ? 1 : 0, token) +
                          ", which agentty does not fill in (it knows %h, %p, %r, %u, %d and %%)");
    }
  }
  return out;
}

Expected<ProxyProcess> ProxyProcess::start(boost::asio::io_context& io,
                                           const std::string& command) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return make_error(errno_message("socketpair"));
  UniqueFd ours(pair[0]), theirs(pair[1]);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return make_error(errno_message("pipe2"));
  UniqueFd errors_read(pipe_fds[0]), errors_write(pipe_fds[1]);
  ::fcntl(ours.get(), F_SETFL, ::fcntl(ours.get(), F_GETFL) | O_NONBLOCK);
  ::fcntl(errors_read.get(), F_SETFL, ::fcntl(errors_read.get(), F_GETFL) | O_NONBLOCK);
  // As libssh and OpenSSH run it: the shell replaces itself with the command.
  const std::string line = "exec " + command;
  const char* argv[] = {"/bin/sh", "-c", line.c_str(), nullptr};
  SpawnSettings settings(theirs.get(), errors_write.get());
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, "/bin/sh", &settings.actions, &settings.attributes,
                               const_cast<char**>(argv), environ);
  if (rc != 0)
    return make_error(process_start_message("posix_spawn /bin/sh for the ProxyCommand", rc));
  auto errors = std::make_shared<Errors>(io, errors_read.release());
  read_errors(errors);
  return ProxyProcess(pid, std::move(ours), std::move(errors), line);
}

ProxyProcess::ProxyProcess(pid_t pid, UniqueFd socket, std::shared_ptr<Errors> errors,
                           std::string command)
    : pid_(pid),
      socket_(std::move(socket)),
      errors_(std::move(errors)),
      command_(std::move(command)) {}

ProxyProcess::ProxyProcess(ProxyProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, 0)),
      socket_(std::move(other.socket_)),
      errors_(std::move(other.errors_)),
      command_(std::move(other.command_)) {}

ProxyProcess::~ProxyProcess() {
  if (errors_) {
    boost::system::error_code ignored;
    errors_->pipe.close(ignored);  // the pending read ends with operation_aborted
  }
  if (pid_ <= 0) return;
  // Its connection is closed or never made; a proxy that outlived it (or a
  // child it left in its session) has nothing more to carry.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

std::string ProxyProcess::error_output() {
  if (!errors_) return "";
  // A reason printed just before the proxy ended may not have been read yet.
  if (errors_->pipe.is_open()) errors_->read_now();
  std::string text = errors_->printed;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  return text;
}

}  // namespace agentty::pty

// ---- SshConnection's part -----------------------------------------------------

namespace agentty::pty {

SshExpected<bool> SshConnection::start_proxy() {
  const auto configured = libssh_option(session_, SSH_OPTIONS_PROXYCOMMAND);
  if (configured.empty()) return true;
  ProxyTokens tokens;
  tokens.host = libssh_option(session_, SSH_OPTIONS_HOST);
  ssh_options_get_port(session_, &tokens.port);
  tokens.user = libssh_option(session_, SSH_OPTIONS_USER);
  if (const passwd* entry = ::getpwuid(::getuid())) {
    tokens.local_user = entry->pw_name;
    tokens.home = entry->pw_dir;
  }
  if (tokens.user.empty()) tokens.user = tokens.local_user;
  auto command = expand_proxy_command(configured, tokens);
  if (!command) return SshError{SshErrorKind::bad_target, command.error()};
  auto started = ProxyProcess::start(io_, *command);
  if (!started)
    return SshError{SshErrorKind::connect_failed, "cannot run the ProxyCommand `" + *command +
                                                      "` of the ssh config for " + description_ +
                                                      ": " + started.error()};
  proxy_.emplace(std::move(started.value()));
  int fd = proxy_->take_socket();
  if (ssh_options_set(session_, SSH_OPTIONS_FD, &fd) != SSH_OK) {
    ::close(fd);
    return SshError{SshErrorKind::connect_failed, "libssh refused the ProxyCommand's socket"};
  }
  return true;  // libssh owns the fd now and closes it
}

std::string SshConnection::proxy_hint() {
  if (!proxy_) return "";
  const auto said = proxy_->error_output();
  return " (it goes through the ProxyCommand `" + proxy_->command() +
         "` of the ssh config; a ProxyJump runs as such a command. " +
         (said.empty() ? "It printed nothing on stderr: run it by hand on this machine, or "
                         "`ssh -v` to the host, to see why)"
                       : "It said on stderr: " + said + ")");
}

}  // namespace agentty::pty
