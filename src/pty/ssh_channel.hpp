// SshChannel: the remote PtyChannel. A session channel with a PTY
// (xterm-256color) on a shared SshConnection, running one command
// (request_exec) or the login shell (request_shell). Open one with
// SshConnectionPool::open_channel.
//
// Same event contract as the local backend: output in order, on_exit exactly
// once after the last output (when the server closes the channel), nothing
// after destruction. The exit status is the server's exit-status or
// exit-signal report. When the connection dies instead, on_exit reports code
// 255 (as OpenSSH's client does) and failure_reason() says why; a program
// that ended normally has no failure_reason.
//
// Remote limits: send_signal() asks the server to signal the session's
// program (OpenSSH signals the process group of the command's shell; servers
// may ignore it); SIGHUP and SIGKILL also hang up (close()), so a stop that
// escalates always ends. OpenSSH refuses signal requests on a root login, so
// there SIGINT and SIGQUIT are typed as their keys (the remote terminal
// signals its foreground job) and any other signal hangs up at once;
// signal_note() says so. Writing "\x03" reaches the foreground job through
// the remote terminal too. Servers usually refuse `env`
// requests (OpenSSH accepts only AcceptEnv names); in exec mode refused variables are passed by
// running `env K='V' "$SHELL" -c 'command'`, in shell mode they are listed in refused_env().
//
// Login by a person: a channel opened while its connection waits for a
// password or keyboard-interactive answer is pending (awaiting_login()). Its
// output is the login prompt; write() answers it (never echoed when hidden,
// never output, never sent to the remote program; echo_enabled() is false so
// recorders hide it); once logged in the command starts and on_login_done
// fires. A signal or close() before the command runs ends the channel with
// that signal (nothing ran remotely).
//
// Input state and the terminal's modes: asked of the host's /proc (and
// stty) by a RemoteInputProbe on exec channels of the same connection; a
// command's line exports AGENTTY_TERMINAL=<random tag> so the probe can
// find its processes (the program sees it in its environment).
//
// Destruction sends EOF and CLOSE to the server (the remote PTY hangs up);
// close() does the same but still reports on_exit when the server confirms.
// Threading: the one event loop, like its connection.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pty/pty_channel.hpp"

namespace agentty::pty {

class CommandEndFilter;
class RemoteInputProbe;
class SshConnection;
struct SshChannelState;

class SshChannel final : public PtyChannel {
 public:
  SshChannel(std::shared_ptr<SshConnection> connection, std::shared_ptr<SshChannelState> state);
  ~SshChannel() override;
  SshChannel(const SshChannel&) = delete;
  SshChannel& operator=(const SshChannel&) = delete;

  void start(ChannelEvents events) override;
  void write(std::string_view bytes) override;
  // Input not yet taken by the remote terminal: what waits for the channel
  // window here, plus what the server holds unacknowledged past the part a
  // server may consume before it says so (OpenSSH acknowledges consumed
  // input once 3 packets' worth has arrived). A lower bound: the remote
  // terminal's own buffer is not seen.
  std::size_t queued_input_bytes() const override;
  void resize(TerminalSize size) override;
  void send_signal(int signo) override;
  std::optional<std::string> signal_note(int signo) const override;
  std::optional<int> process_id() const override { return std::nullopt; }
  // Asked of the host's kernel (RemoteInputProbe): the last answer, never
  // waiting for one; unknown where the host cannot tell.
  InputState input_state() const override;
  void identify_session_shell(int pid) override;
  // SIGCONT to a foreground group the host showed stopped (a `kill` on an
  // exec channel: signal requests reach only the shell, and not at all on
  // a root login).
  bool resume_foreground() override;
  void on_input_state_change(std::function<void()> callback) override;
  bool input_state_pending() const override;
  // From the host's answer for the current quiet period (stty on the host,
  // asked with input_state()); nullopt until there is one. During a login:
  // the login prompt's echo.
  std::optional<bool> echo_enabled() const override;
  std::optional<LineModes> line_modes() const override;
  bool input_state_withheld() const override;
  // From the same answer: the names (comm) the host's /proc gives.
  std::optional<std::string> foreground_program() const override;
  boost::asio::awaitable<std::optional<std::string>> login_shell() override;
  boost::asio::awaitable<std::optional<std::string>> put_temp_file(std::string content) override;
  boost::asio::awaitable<void> remove_temp_file(std::string path) override;
  std::optional<std::string> reading_program() const override;
  std::optional<bool> program_in_foreground() const override;
  // Once a command that marks its end (SshLaunch::marks_command_end) has
  // ended and its jobs run on.
  std::vector<std::string> left_running() const override;
  TerminalSize size() const override;
  bool finished() const override;
  // Stops taking output: the channel's SSH window fills and the remote
  // program blocks writing, while the connection's other channels flow.
  // The exit is reported after the bytes held meanwhile, once resumed
  // (after close(), at once: ssh_delivery.cpp).
  bool pause_output(bool paused) override;
  void set_output_slice(std::size_t max_bytes) override;

  // Hangs up: sends EOF and CLOSE; on_exit follows when the server confirms
  // (or the connection dies).
  void close();
  // Set when the channel ended because the connection failed.
  std::optional<std::string> failure_reason() const;
  // Environment variables the server refused (exec mode passed them anyway).
  std::vector<std::string> refused_env() const;
  // True while a person must log in before the command runs.
  bool awaiting_login() const;
  // Why, in words for the person: which login, and where to type.
  std::string login_reason() const;
  // Called once (on the loop, never inside a call of ours) when the person
  // has logged in; a channel that ends first reports only on_exit.
  void on_login_done(std::function<void()> callback);

 private:
  std::shared_ptr<SshConnection> connection_;
  std::shared_ptr<SshChannelState> state_;
  std::shared_ptr<RemoteInputProbe> probe_;
  std::shared_ptr<const CommandEndFilter> command_end_;  // null: the command marks no end

  ChannelEvents taking_out_command_end(ChannelEvents events);
};

}  // namespace agentty::pty
