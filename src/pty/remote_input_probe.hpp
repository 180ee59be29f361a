// RemoteInputProbe: SshChannel's input_state(), asked of the host's kernel.
//
// state() never blocks: it returns the last answer the host gave for the
// current quiet period, and starts a probe (remote_input_report.hpp's script
// on a PTY-less exec channel of the same connection, `sh -s`) when there is
// none or it has aged. Output and input (note_activity) start a new quiet
// period: answers from before say nothing about it. While the first probe
// of a period runs the answer is `busy`, as a local program counts as busy
// until it has been quiet for a moment: a remote guess ("stopped mid-line,
// quiet for 2 s") there could call a program that prints half a line and
// works on waiting. Each answer fires the on_answer callback, so waits
// re-check at once.
//
// A `suspended` answer (the whole foreground group stopped) lets resume()
// send it SIGCONT with `kill` on an exec channel, as `fg` would.
//
// Cost: one channel (open, exec, a few KiB of script, close: ~2 round trips
// and a fork of sh, awk and ls on the host; ~100 ms on a loaded loopback
// host, where `execute(host, "true")` took ~40-100 ms) per probe; at most one at a time
// per terminal, none while output flows, and answers are reused for
// kMinAge, up to a quarter of the quiet period's age (at most kMaxAge).
//
// `unknown` (the caller's guess) when the host cannot tell: not Linux, no
// /proc or awk, a terminal not found (another kind of SSH server, a session
// whose prompt hook has not reported its shell yet), the server refusing the
// channel, or kTimeout passing; failures are retried after kRetryAfter, and
// after kMaxFailures in a row never again for this terminal. In the first
// kStartGrace, a terminal not found by a probe that began before the
// program's latest output is no failure (it had not started yet). A refused
// channel is not a failure (the server's slots are busy; it is asked again
// after kRetryAfter). No probe is
// started while kChannelHeadroom channels are open on the connection, so it
// never takes the last of a server's default MaxSessions (10); under a lower
// cap, a command's open refused while a probe holds a channel waits for it
// and asks again (ssh_session_slot.cpp), and no probe starts meanwhile.
//
// Threading: the connection's event loop. The owner calls detach() before it
// goes; a probe still running then ends by its deadline and frees its channel.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "pty/pty_channel.hpp"

namespace agentty::pty {

class SshConnection;
struct SshChannelState;

class RemoteInputProbe : public std::enable_shared_from_this<RemoteInputProbe> {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kMinAge{250};
  static constexpr std::chrono::milliseconds kMaxAge{2000};
  static constexpr std::chrono::milliseconds kTimeout{5000};
  static constexpr std::chrono::milliseconds kRetryAfter{5000};
  static constexpr int kMaxFailures = 3;
  static constexpr std::chrono::seconds kStartGrace{10};
  static constexpr std::size_t kChannelHeadroom = 9;

  // `channel`: its terminal_tag is what the channel's command exports (or
  // a login shell's LC_AGENTTY_TERMINAL holds); read at each probe, as a
  // login shell's is dropped when the server refuses the variable.
  RemoteInputProbe(std::shared_ptr<SshConnection> connection,
                   std::shared_ptr<const SshChannelState> channel);

  InputState state();
  // The terminal's modes in the host's answer for the current quiet period
  // (stty on the host); nullopt before it, or where the host has no stty.
  std::optional<LineModes> line_modes() const;
  // The host answered `unknown` for the current quiet period: it found the
  // terminal, but not what its program does (another user's program, whose
  // /proc entries the login user may not read: sudo, su, passwd).
  bool withheld() const;
  // Names (comm) in the host's answer for the current quiet period: the
  // terminal's foreground group leader, and the process seen reading it.
  std::optional<std::string> foreground_program() const;
  std::optional<std::string> reading_program() const;
  // Whether, in that answer, the terminal's foreground group is its session
  // leader's own (a remote command's shell, a session's login shell at its
  // builtin `read`), not a job it started: PtyChannel::program_in_foreground.
  std::optional<bool> leader_in_foreground() const;
  // A probe runs and the host has not answered for the current quiet
  // period yet: state() says busy until it does.
  bool pending() const;
  // Output arrived or input was sent: a new quiet period starts.
  void note_activity();
  // A session's shell reported its pid (the prompt hook's D mark): it leads
  // the terminal's session.
  void set_session_leader(int pid);
  void set_on_answer(std::function<void()> callback) { on_answer_ = std::move(callback); }
  // The host said the foreground group is stopped (suspended): sends it
  // SIGCONT with `kill` on an exec channel, as `fg` would; false when the
  // last answer was not suspended.
  bool resume();
  // The owner is going: no more callbacks or probes.
  void detach();

 private:
  struct Answer {
    InputState state;
    std::optional<LineModes> line_modes;
    std::optional<std::string> foreground_program;
    std::optional<std::string> reading_program;
    std::optional<bool> leader_in_foreground;
    std::uint64_t period;
    Clock::time_point at;
  };
  // The answer for the current quiet period, if the host gave one.
  const Answer* current_answer() const;
  bool start();
  boost::asio::awaitable<void> run(std::uint64_t period);
  boost::asio::awaitable<void> continue_group(int group);
  void failed(Clock::time_point now);
  Clock::duration reuse_for(Clock::time_point now) const;

  std::shared_ptr<SshConnection> connection_;
  std::shared_ptr<const SshChannelState> channel_;
  std::optional<int> leader_;
  std::optional<int> stopped_group_;  // the foreground group of a `suspended` answer
  std::optional<Answer> answer_;
  std::uint64_t period_ = 0;  // quiet periods so far (note_activity)
  Clock::time_point period_start_ = Clock::now();
  const Clock::time_point created_ = Clock::now();
  bool running_ = false;
  bool wanted_again_ = false;  // asked for a newer period while one ran
  bool disabled_ = false;
  bool detached_ = false;
  int failures_ = 0;
  Clock::time_point retry_at_{};
  std::function<void()> on_answer_;
};

}  // namespace agentty::pty
