// A ProxyCommand of the ssh config (a ProxyJump becomes one), run by agentty
// instead of libssh: libssh forks it with its error output on /dev/null, so
// a bastion that refused ("Permission denied (publickey)", "Could not resolve
// hostname") left only "Connection reset by peer". Here its stderr is kept
// for the connection's error, and the process is agentty's to end and reap.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "base/expected.hpp"
#include "base/unique_fd.hpp"

namespace agentty::pty {

// What a ProxyCommand's %-tokens stand for.
struct ProxyTokens {
  std::string host;        // %h: the HostName connected to
  unsigned port = 22;      // %p
  std::string user;        // %r: the remote user
  std::string local_user;  // %u
  std::string home;        // %d
};

// `command` with %h, %p, %r, %u, %d and %% filled in (OpenSSH's and
// libssh's meaning); another token is an error that names it.
Expected<std::string> expand_proxy_command(std::string_view command, const ProxyTokens& tokens);

class ProxyProcess {
 public:
  // Runs `command` with /bin/sh in a session of its own (no terminal to
  // prompt on), its stdin and stdout one end of a socket pair; its stderr
  // is read on `io`'s loop as it comes (a verbose proxy must not block).
  static Expected<ProxyProcess> start(boost::asio::io_context& io, const std::string& command);
  ProxyProcess(ProxyProcess&& other) noexcept;
  ProxyProcess& operator=(ProxyProcess&&) = delete;
  ProxyProcess(const ProxyProcess&) = delete;
  ProxyProcess& operator=(const ProxyProcess&) = delete;
  // Kills what is left of it (its whole process group) and reaps it.
  ~ProxyProcess();

  // The other end, non-blocking, for SSH_OPTIONS_FD; the caller owns it.
  int take_socket() { return socket_.release(); }
  const std::string& command() const { return command_; }
  // What it has printed on stderr so far (its last 2 KiB), trimmed; what
  // is in the pipe but not yet read is read first.
  std::string error_output();

  struct Errors;  // the stderr pipe and what came through it

 private:
  ProxyProcess(pid_t pid, UniqueFd socket, std::shared_ptr<Errors> errors, std::string command);
  pid_t pid_;
  UniqueFd socket_;
  std::shared_ptr<Errors> errors_;  // shared with the pending read
  std::string command_;
};

}  // namespace agentty::pty
