// SshTarget, SshOptions, SshLaunch and SshError: the plain values the SSH
// backend is driven by. A target is what a person typed ("host",
// "user@host:port", or an alias from ~/.ssh/config); the connection pool
// resolves it through the ssh config into the (user, host, port, ProxyCommand) key that
// connections are shared by. Explicit user and port always win over config.
//
// SshExpected<T> is Expected<T> with an error kind, so the session layer can
// tell a host-key refusal from a login that needs a person (needs_human_auth)
// from a dead network. Plain values: no threading constraints.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/expected.hpp"
#include "pty/pty_channel.hpp"

namespace agentty::pty {

struct SshTarget {
  std::string host;  // a host name, an IP address, or a ~/.ssh/config alias
  std::string user;  // empty: from the config, else the local user name
  int port = 0;      // 0: from the config, else 22

  // "host", "user@host", "host:port", "user@host:port", "[v6addr]:port". The
  // error names the wrong part (white space, junk after the port, a character
  // libssh refuses in a host name) and lists the accepted forms.
  static Expected<SshTarget> parse(std::string_view spec);
  // "user@host:port" with only the parts that are set.
  std::string describe() const;
};

struct SshOptions {
  std::string known_hosts;                  // empty: ~/.ssh/known_hosts
  bool accept_new = false;                  // record unknown host keys (OpenSSH accept-new)
  std::string config_file;                  // empty: ~/.ssh/config and /etc/ssh/ssh_config
  std::vector<std::string> identity_files;  // tried after the agent and the defaults
  std::chrono::seconds keepalive{5};
  int keepalive_max_missed = 3;  // silent intervals before the connection is dead
  std::chrono::seconds connect_timeout{15};
  // When no key logs in but the server offers password or keyboard-interactive
  // login, hand the login to a person at the execution's terminal (false:
  // fail with needs_human_auth instead; agentty turns it off when it runs
  // without its web server, where no person can reach the terminal).
  bool human_login = true;
  int login_attempts = 3;  // wrong answers before the login fails (OpenSSH's default)
};

struct SshLaunch {
  std::optional<std::string> command;  // nullopt: the login shell
  TerminalSize size;
  // false: no PTY (SshConnection::run_command's helpers, never a program's channel).
  bool pty = true;
  std::map<std::string, std::string> env;
  // The command prints kCommandEndMarker when it ends (it went through
  // waiting_for_background_jobs): the channel takes it out of the output
  // and, from then on, reports what the command left running.
  bool marks_command_end = false;
};

enum class SshErrorKind {
  bad_target,        // the target or launch request is malformed
  connect_failed,    // no TCP connection, or key exchange failed / timed out
  host_key_unknown,  // not in known_hosts and accept_new is off
  host_key_changed,  // known_hosts holds a different key: possible attack
  needs_human_auth,  // only password / keyboard-interactive could log in
  auth_failed,       // no method can log in
  channel_failed,    // the server refused the session, PTY or command
  connection_lost,   // the connection died while opening
  shut_down,         // the pool was shut down
};

const char* to_string(SshErrorKind kind);

struct SshError {
  SshErrorKind kind;
  std::string message;
  // It failed before the remote command or shell was requested: nothing ran
  // there, so opening it again elsewhere is safe.
  bool nothing_started = false;
};

template <class T>
using SshExpected = Expected<T, SshError>;

// Quotes `text` for a POSIX shell: 'it'\''s'.
std::string shell_quote(std::string_view text);
// `word` as a POSIX shell reads it back as itself: quoted only when it must
// be (for lines a person copies: `ls` stays `ls`, a path with a space is quoted).
std::string shell_word(std::string_view word);

// The home directory libssh expands `~` to in ssh configs and key paths:
// the password database's, else $HOME (empty if neither).
std::string libssh_home();

// How known_hosts names a host: bare on port 22, else [host]:port (what
// `ssh-keygen -R` must be given to remove its key).
std::string known_hosts_name(const std::string& host, unsigned port);

// What a remote shell runs first when a cwd is asked for: enter it, or end
// with the shell's own message (never run anything elsewhere). The caller
// adds the separator.
std::string enter_directory_or_exit(std::string_view directory);

// A command that leaves a job in the background (`server &`) keeps it on a
// host as it does locally: sshd hangs the terminal up when the command's
// shell exits, which killed the job (the same as `ssh -t host 'server &'`).
// Such a command gets an EXIT trap before it, so the shell waits for its
// jobs (keeping its exit status), having first printed kCommandEndMarker
// (command_end_marker.hpp): the command's end, which the channel takes
// out of the output. Others are returned as they are.
// `&` is found outside quotes, not in `&&`, `|&` or a redirection (`2>&1`,
// `&>`).
std::string waiting_for_background_jobs(std::string_view command);
// Whether `command` has such an `&`.
bool has_background_job(std::string_view command);

// What a remote shell runs to give `command` exactly these bytes as its
// standard input (a pipe from printf %b, a builtin of every POSIX shell)
// while its output stays on the terminal: an SSH PTY channel has no input but
// the terminal. The bytes travel inside the command line, which the server
// runs as `$SHELL -c LINE`: nullopt when the line would pass
// kMaxRemoteCommandBytes (Linux takes at most 128 KiB in one argument).
constexpr std::size_t kMaxRemoteCommandBytes = 120 * 1024;
std::optional<std::string> with_standard_input(std::string_view command, std::string_view data);

}  // namespace agentty::pty
