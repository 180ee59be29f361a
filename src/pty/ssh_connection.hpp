// SshConnection: one libssh session to one (user, host, port, ProxyCommand), shared by every
// SshChannel opened to it; SshConnectionPool: the map that shares them.
//
// Everything is non-blocking and runs on the one Asio event loop. libssh owns
// the socket; the connection watches it with a posix::stream_descriptor that
// it releases (never closes). Connect, key exchange and authentication are
// re-called on socket readiness until they stop saying "again". Once logged
// in, a pump coroutine waits for the socket and runs ssh_event_dopoll; libssh
// hands channel data and exit reports to per-channel callbacks that only
// record them (never user code), and after every libssh call the connection
// delivers what was recorded: output first, then on_exit once the server has
// closed the channel. Any libssh call may process packets for any channel, so
// "after every call" is where delivery, pending writes and wakeups happen.
// A channel's output can be paused: its data then stays in libssh and its
// window shut, while the rest of the connection flows (ssh_delivery.cpp).
//
// Login by a person: when no key is accepted but the server offers password
// or keyboard-interactive login (and SshOptions::human_login is on), the
// connection enters awaiting_login instead of failing. Opens then return
// pending channels at once: each shows the prompt ("user@host's password: ")
// as its terminal output, and bytes written to it feed an SshLoginPrompt
// instead of the network, so the answer is never output, never echoed when
// hidden, and never sent anywhere but to ssh_userauth_password /
// ssh_userauth_kbdint_setanswer. Wrong answers are retried up to
// login_attempts times. Once logged in, each pending channel's PTY channel is
// opened and its command started, and its on_login_done fires; a failed or
// abandoned login (ctrl-c, every pending channel stopped, the server's
// LoginGraceTime) fails the connection like any other error.
//
// Name resolution: a host name is resolved with Asio's asynchronous resolver
// and the TCP connection made by Asio; libssh gets the connected socket
// (SSH_OPTIONS_FD) and keeps the name for known_hosts. A ProxyCommand (or
// ProxyJump) of the ssh config is run by agentty (ssh_proxy.hpp) and libssh
// gets its socket; configs that use BindAddress are left to libssh.
//
// Liveness: a keepalive goes out every `keepalive`; if no packet at all has
// arrived for keepalive * keepalive_max_missed, or libssh reports the socket
// dead, the connection fails: every channel ends with on_exit(code 255) and a
// failure_reason, it leaves the pool, and the next open reconnects.
//
// Lifetime: the pool and each SshChannel hold shared_ptrs; the pump,
// keepalive and connect coroutines hold one while they run. fail() frees the
// libssh session at once (so the fd closes); the object lingers until the
// last handle goes.
#pragma once

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "pty/pty_channel.hpp"
#include "pty/ssh_login_prompt.hpp"
#include "pty/ssh_proxy.hpp"
#include "pty/ssh_target.hpp"

namespace agentty::pty {

class SshChannel;

// A string option of a libssh session (ssh_options_get); empty if unset.
std::string libssh_option(ssh_session session, ssh_options_e option);

// The variable that carries a login shell's terminal tag (see
// SshChannelState::terminal_tag); its value is found by the host probe's
// search for AGENTTY_TERMINAL=<tag> as any command's is.
inline constexpr const char* kLoginShellTagVariable = "LC_AGENTTY_TERMINAL";

// What the connection knows about one channel. The libssh callbacks write
// here; deliver() reads it.
struct SshChannelState {
  ssh_channel channel = nullptr;  // null once freed
  ssh_channel_callbacks_struct callbacks{};
  ChannelEvents events;
  bool started = false;         // start() was called: events may fire
  bool detached = false;        // the SshChannel is gone: nothing may fire
  bool remote_closed = false;   // the server closed the channel
  bool finished = false;        // on_exit fired (or will never fire)
  bool opened = false;          // the server confirmed the channel
  bool closed_locally = false;  // we sent CLOSE (close())
  std::string inbox;            // output received, not yet delivered
  std::string outbox;           // input the channel window has not taken yet
  // The server's receive window with nothing in flight (its largest size
  // seen): what the window lacks of it is input sent that the server has not
  // yet passed to the remote terminal (or not yet acknowledged).
  std::uint32_t full_window = 0;
  std::optional<int> exit_code;
  std::optional<int> exit_signal;
  std::optional<std::string> failure_reason;
  TerminalSize size;
  std::vector<std::string> refused_env;
  // A PTY channel's command exports AGENTTY_TERMINAL=<tag>, by which the
  // host probe finds its processes (remote_input_report.hpp); a login
  // shell's is LC_AGENTTY_TERMINAL=<tag>, sent as an environment request
  // (empty once the server refused it); empty for channels without a PTY.
  std::string terminal_tag;
  bool marks_command_end = false;  // SshLaunch::marks_command_end
  // run_command's (a probe of the host): no PTY, its output is stdout alone,
  // and it is not one of the user's channels when a refusal counts them.
  bool probe = false;
  // Login by a person (see SshConnection).
  std::optional<SshLaunch> pending_launch;  // started once the login succeeds
  bool awaiting_login = false;              // the prompt shows here; writes answer it
  bool launched = false;                    // the command or shell runs: input may flow
  bool login_done = false;                  // logged in: deliver() calls on_login_done
  SshLoginPrompt login;
  std::function<void()> on_login_done;
  // Output flow (ssh_delivery.cpp). While paused nothing is delivered and
  // the data callback takes nothing: libssh keeps the bytes and the window
  // stays shut. held copies what libssh keeps (its stdout buffer); the
  // first held_taken bytes of it are in the inbox already (a read libssh
  // refused, on a closed channel: it keeps them and offers them again).
  bool paused = false;
  std::string held;
  std::size_t held_taken = 0;
  std::size_t output_slice = PtyChannel::kMaxOutputSlice;  // SshChannel::set_output_slice

  // The libssh data callback's work: records `data` (libssh's buffer for the
  // stream) and returns how much of it libssh may drop.
  int take_data(const char* data, std::uint32_t len, bool is_stderr);
};

class SshConnection : public std::enable_shared_from_this<SshConnection> {
 public:
  enum class State { connecting, awaiting_login, ready, failed };

  // Takes ownership of `session`, whose options are already set.
  SshConnection(boost::asio::io_context& io, const SshOptions& options, ssh_session session,
                std::string description);
  ~SshConnection();
  SshConnection(const SshConnection&) = delete;
  SshConnection& operator=(const SshConnection&) = delete;

  // Starts connect + host key check + login in the background.
  void start();
  // Waits until the connection is ready or failed; the error if it failed.
  boost::asio::awaitable<SshExpected<bool>> wait_ready();
  boost::asio::awaitable<SshExpected<std::unique_ptr<SshChannel>>> open_channel(SshLaunch launch);
  // While awaiting_login: a channel that shows the login prompt and starts
  // `launch` once a person has logged in.
  SshExpected<std::unique_ptr<SshChannel>> open_pending_channel(SshLaunch launch);
  // Why a person is needed, for the execution's handoff reason.
  std::string login_reason() const;
  // Runs `command` on a channel of its own without a PTY, with `input` as
  // its stdin (then EOF), and returns its stdout once the server closes the
  // channel. The channel is closed and freed on every path, also when the
  // deadline (`timeout` from now) passes first or the connection fails.
  // For probes of the host (ssh_command.cpp); never a program's channel.
  boost::asio::awaitable<SshExpected<std::string>> run_command(std::string command,
                                                               std::string input,
                                                               std::chrono::milliseconds timeout);
  // The account's login shell, asked once: "bash" or "zsh" when that is
  // what runs a command (also as /bin/sh), else $SHELL as the server sets it
  // (from the password database); nullopt when the host did not answer
  // (asked again next time).
  boost::asio::awaitable<std::optional<std::string>> login_shell();
  // PtyChannel::put_temp_file, on an exec channel.
  boost::asio::awaitable<std::optional<std::string>> put_temp_file(std::string content);
  // PtyChannel::remove_temp_file, likewise.
  boost::asio::awaitable<void> remove_temp_file(std::string path);
  // Session channels open on this connection (servers cap them: OpenSSH's
  // MaxSessions, 10 by default).
  std::size_t open_channel_count() const;
  // An opener waits for a probe's channel to close (ssh_session_slot.cpp):
  // probes start none meanwhile.
  bool slot_wanted() const { return slot_waiters_ > 0; }
  boost::asio::io_context& io() const { return io_; }

  State state() const { return state_; }
  const std::string& description() const { return description_; }
  // Ends the connection: every open channel fails with `reason`.
  void fail(SshErrorKind kind, const std::string& reason);
  // Called once when the connection fails (the pool forgets it).
  std::function<void()> on_failed;

  // For SshChannel.
  void channel_started(const std::shared_ptr<SshChannelState>& channel);
  void channel_write(const std::shared_ptr<SshChannelState>& channel, std::string_view bytes);
  std::size_t channel_queued_input(SshChannelState& channel) const;
  void channel_resize(const std::shared_ptr<SshChannelState>& channel, TerminalSize size);
  void channel_signal(const std::shared_ptr<SshChannelState>& channel, int signo);
  // How channel_signal delivers `signo` when not as asked (see SshChannel).
  std::optional<std::string> signal_note(int signo) const;
  void channel_close(const std::shared_ptr<SshChannelState>& channel);
  // Stops or resumes taking the channel's output (ssh_delivery.cpp).
  void channel_pause(const std::shared_ptr<SshChannelState>& channel, bool paused);
  void channel_detach(const std::shared_ptr<SshChannelState>& channel);
  void channel_login_input(const std::shared_ptr<SshChannelState>& channel, std::string_view bytes);

 private:
  using Clock = std::chrono::steady_clock;

  boost::asio::awaitable<void> establish();
  boost::asio::awaitable<SshExpected<bool>> connect_socket(Clock::time_point deadline);
  boost::asio::awaitable<SshExpected<bool>> connect_tcp(Clock::time_point deadline);
  bool libssh_must_connect() const;
  // Why a handshake on our TCP connection may have failed, for its error.
  std::string handshake_hint() const;
  // Runs the ssh config's ProxyCommand, if any, and hands libssh its socket
  // (ssh_proxy.cpp).
  SshExpected<bool> start_proxy();
  // The ProxyCommand the connection goes through and what it printed, for
  // its errors; empty if none.
  std::string proxy_hint();
  SshExpected<bool> verify_host_key();
  boost::asio::awaitable<SshExpected<bool>> authenticate(Clock::time_point deadline);
  // Login by a person (ssh_login.cpp).
  boost::asio::awaitable<SshExpected<bool>> log_in_by_hand();
  boost::asio::awaitable<int> password_login(Clock::time_point& deadline);
  boost::asio::awaitable<int> keyboard_interactive_login(Clock::time_point& deadline);
  boost::asio::awaitable<std::optional<std::string>> ask_person(std::string prompt, bool echo);
  void show_login(std::string_view text);
  std::size_t pending_channel_count() const;
  void become_ready();
  void open_pending_channels();
  boost::asio::awaitable<void> open_pending(std::shared_ptr<SshChannelState> channel);
  void end_channel(SshChannelState& channel, std::string reason);
  std::shared_ptr<SshChannelState> new_channel_state(const SshLaunch& launch);
  // `deadline`: for the replies; the default is connect_timeout from now.
  boost::asio::awaitable<SshExpected<bool>> launch_channel(
      std::shared_ptr<SshChannelState> channel, const SshLaunch& launch,
      std::optional<Clock::time_point> deadline = std::nullopt);
  // retry_while_again(call, SSH_AUTH_AGAIN, deadline), for ssh_login.cpp.
  boost::asio::awaitable<int> retry_auth(std::function<int()> call, Clock::time_point deadline);
  template <class Call>
  boost::asio::awaitable<int> retry_while_again(Call call, int again, Clock::time_point deadline);
  template <class Call>
  boost::asio::awaitable<int> retry_channel_call(Call call, Clock::time_point deadline);
  // retry_channel_call(call, deadline), for ssh_session_slot.cpp.
  boost::asio::awaitable<int> retry_channel(std::function<int()> call, Clock::time_point deadline);
  boost::asio::awaitable<void> wait_socket(Clock::time_point deadline);
  boost::asio::awaitable<void> wait_progress(Clock::time_point deadline);
  boost::asio::awaitable<void> pump_loop();
  boost::asio::awaitable<void> keepalive_loop();
  // Fails the connection when nothing has arrived for `limit`; true if it did.
  bool fail_if_silent(Clock::duration limit);
  void send_keepalive();
  // After closing a channel: ends it when the host has not answered (not
  // even a keepalive) within kHangupAnswerWindow (ssh_signal.cpp).
  void confirm_hangup(const std::shared_ptr<SshChannelState>& channel);
  // Inside stop's allowance for a program to end after SIGKILL (signal_and_wait).
  static constexpr std::chrono::seconds kHangupAnswerWindow{4};
  void pump();
  // After every libssh call: notice received packets and a dead socket,
  // retry pending writes, deliver output (now, or posted for user calls).
  void after_call(bool deliver_now = true);
  void schedule_deliver();
  void deliver();
  // What libssh holds for a paused-then-resumed channel, into its inbox
  // (ssh_delivery.cpp).
  void take_held(SshChannelState& channel);
  // Hands the channel's inbox to its reader in slices (ssh_delivery.cpp).
  void deliver_slices(SshChannelState& channel);
  void flush_outboxes();
  bool session_dead() const;
  void free_channel(SshChannelState& channel);
  void install_callbacks(const std::shared_ptr<SshChannelState>& channel);
  SshError channel_error(int rc, const std::string& what);
  // Opens channel's session channel; after a refusal while a probe holds a
  // channel, once more when that one has closed (ssh_session_slot.cpp).
  boost::asio::awaitable<int> open_session(std::shared_ptr<SshChannelState> channel,
                                           Clock::time_point deadline);
  bool probe_channel_open() const;
  // The refusal of a session channel, with the likely reason when others are open.
  SshError session_refused(int rc, const SshChannelState& refused);
  std::string launch_command(const SshLaunch& launch, const SshChannelState& channel) const;
  // The server ignores signal requests (a root login on OpenSSH).
  bool signals_refused() const;
  static std::optional<std::string> interrupt_key(int signo);
  void signal_through_terminal(const std::shared_ptr<SshChannelState>& channel, int signo);

  boost::asio::io_context& io_;
  SshOptions options_;
  ssh_session session_ = nullptr;
  ssh_event event_ = nullptr;
  std::string description_;
  State state_ = State::connecting;
  std::optional<SshError> failure_;
  std::optional<boost::asio::posix::stream_descriptor> socket_;
  std::optional<ProxyProcess> proxy_;   // after session_: ended once libssh closed its socket
  boost::asio::steady_timer progress_;  // never expires; cancel() wakes all waiters
  boost::asio::steady_timer kick_;      // never expires; cancel() re-arms the pump's wait
  boost::asio::steady_timer keepalive_;
  ssh_counter_struct counter_{};  // libssh counts the socket's bytes here
  std::uint64_t bytes_seen_ = 0;
  Clock::time_point last_received_;
  std::vector<std::shared_ptr<SshChannelState>> channels_;
  int auth_methods_ = 0;  // what the server still offers, after the keys failed
  // Login by a person: the prompt on screen, and what came back.
  boost::asio::steady_timer login_wakeup_;  // never expires; cancel() on input or a stop
  std::string login_screen_;                // the current prompt, shown to new pending channels
  bool login_prompting_ = false;
  bool login_had_channel_ = false;  // a pending channel was handed out
  bool login_echo_ = false;
  std::optional<std::string> login_answer_;
  std::optional<std::string> login_abort_;  // why the person's login ended early
  bool delivering_ = false;
  bool deliver_posted_ = false;
  std::size_t slot_waiters_ = 0;            // openers waiting for a probe's channel
  std::optional<std::string> login_shell_;  // once the host said it
};

class SshConnectionPool {
 public:
  SshConnectionPool(boost::asio::io_context& io, SshOptions options);
  ~SshConnectionPool();
  SshConnectionPool(const SshConnectionPool&) = delete;
  SshConnectionPool& operator=(const SshConnectionPool&) = delete;

  // Opens a PTY channel running launch.command (or the login shell), reusing
  // the connection to the target's (user, host, port, ProxyCommand) or
  // making one.
  // Pass named (moved) values, not braced temporaries: GCC 12 destroys
  // temporaries inside a co_await expression twice.
  // Servers cap channels per connection (OpenSSH: MaxSessions 10); past the
  // cap the open fails with channel_failed (no second connection is made).
  boost::asio::awaitable<SshExpected<std::unique_ptr<SshChannel>>> open_channel(SshTarget target,
                                                                                SshLaunch launch);
  // Connections being set up or ready.
  std::size_t connection_count() const { return connections_.size(); }
  // Fails every connection (their channels end with a failure_reason) and
  // refuses further opens.
  void shutdown();

 private:
  // (user, host, port, ProxyCommand): a HostName behind one bastion (often
  // a private address) is not the same machine as the same name behind
  // another, nor as the name reached directly.
  using Key = std::tuple<std::string, std::string, int, std::string>;

  // open_channel; `retry_if_dead`: once more on a fresh connection when a
  // reused one turns out dead before anything ran.
  boost::asio::awaitable<SshExpected<std::unique_ptr<SshChannel>>> open_channel_on_connection(
      SshTarget target, SshLaunch launch, bool retry_if_dead);

  boost::asio::io_context& io_;
  SshOptions options_;
  std::map<Key, std::shared_ptr<SshConnection>> connections_;
  bool shut_down_ = false;
};

// Builds a libssh session for `target` with the ssh config applied and
// explicit user/port on top; the pool keys its connections on the result.
struct ResolvedTarget {
  ssh_session session = nullptr;  // owned by the caller
  std::string user;
  std::string host;
  int port = 22;
  std::string proxy_command;  // the ssh config's, as written; empty: connected directly
  std::string describe() const;
};
SshExpected<ResolvedTarget> resolve_ssh_target(const SshTarget& target, const SshOptions& options);

}  // namespace agentty::pty
