// Execution: one program tree under its own PTY (local or SSH), with every
// byte it printed (OutputLog), what its terminal shows (ScreenFeeder), and its
// lifecycle (running -> completed / timed_out / stopped / failed).
//
// Output pipeline, in order, for every chunk the channel delivers:
//   redaction (optional) -> OutputLog -> screen feeder (replies to terminal
//   queries go straight back to the PTY) -> output listeners (web viewers,
//   recorder, shell integration) -> ChangeSignal::notify().
// Every consumer has its own offset into the one log; the agent's server-side
// cursor (`cursor()`) is one of them.
//
// Held: while a human holds the execution (web takeover or `agentty attach`),
// agent writes, stop and close are refused; reads and waits keep working.
// An SSH login handed to a person (hold_for_login) holds it too, with the
// login as handoff reason, until the login ends: agent writes are refused
// (the typed answer is the person's), but the agent may still stop it; a
// takeover made for the login is released when it ends.
//
// Threading: created, used and destroyed on the one I/O event loop; always
// owned by shared_ptr (the registry, and coroutines waiting on it).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/change_signal.hpp"
#include "base/expected.hpp"
#include "base/owned_path.hpp"
#include "pty/pty_channel.hpp"
#include "session/output_log.hpp"
#include "session/screen_feeder.hpp"
#include "session/text_view.hpp"

namespace agentty::session {

class Explorer;
class Redactor;
class Recorder;
class ShellIntegration;

enum class ExecutionStatus { running, completed, timed_out, stopped, failed_to_start, failed };
enum class ExecutionKind { command, session };
enum class InputSource { agent, human };

std::string to_string(ExecutionStatus status);
std::string to_string(ExecutionKind kind);
bool is_terminal(ExecutionStatus status);

using SystemTime = std::chrono::system_clock::time_point;
using SteadyTime = std::chrono::steady_clock::time_point;

// What was asked for. Filled by the tool layer after validation and policy.
struct ExecutionSpec {
  ExecutionKind kind = ExecutionKind::command;
  std::string command_text;       // shown in ps: the command, argv joined, or the shell
  std::vector<std::string> argv;  // what runs locally (e.g. {"/bin/bash", "-c", command})
  std::string remote_command;     // what runs over SSH (empty with kind=session: a shell)
  // remote_command prints pty::kCommandEndMarker when its command ends
  // (pty::waiting_for_background_jobs): its channel tells what it left running.
  bool remote_marks_command_end = false;
  std::string cwd;
  std::map<std::string, std::string> env;
  std::string name;
  std::string purpose;
  std::vector<std::string> side_effects;
  std::string host;  // empty: local
  std::string ssh_user;
  int ssh_port = 0;
  pty::TerminalSize size;
  std::chrono::milliseconds timeout{0};  // 0: no limit
  // Local only: the program's standard input as a file with these bytes, in
  // place of the terminal. Handed to the program at start and not kept.
  std::optional<std::string> stdin_file;
  // A file the program runs (execute's checked script): it stays while the
  // record does ($0 names it) and goes with it.
  std::shared_ptr<const OwnedPath> script_file;
  // A session's generated rc files: removed when it ends (or is refused).
  std::shared_ptr<OwnedPath> startup_files;
};

class Execution : public std::enable_shared_from_this<Execution> {
 public:
  struct Options {
    OutputLogOptions log;
    std::size_t scrollback_lines = 10000;
    std::chrono::milliseconds kill_grace{5000};     // SIGTERM -> SIGKILL on timeout
    std::chrono::milliseconds quiet_for_input{60};  // output quiet this long + reading = waiting
  };
  using OutputListener = std::function<void(std::string_view bytes, std::uint64_t start_seq)>;

  // `started`: when its program was started (the launch began), the zero of
  // its duration and of its recording's clock.
  Execution(boost::asio::io_context& io, std::string id, ExecutionSpec spec, Options options,
            SteadyTime started);
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  // Starts pumping the channel's events; arms the timeout. Called once.
  // `redactor` (may be null) masks secrets in the output, and a copy of it in
  // the typed input the recording keeps.
  void attach(std::unique_ptr<pty::PtyChannel> channel, std::unique_ptr<Redactor> redactor);
  // For an execution that never got a channel (e.g. SSH connect failed).
  void fail_to_start(std::string reason);

  const std::string& id() const { return id_; }
  const ExecutionSpec& spec() const { return spec_; }
  ExecutionKind kind() const { return spec_.kind; }
  ExecutionStatus status() const { return status_; }
  std::optional<pty::ExitStatus> exit_status() const { return exit_status_; }
  const std::string& failure_reason() const { return failure_reason_; }
  std::optional<int> process_id() const;
  bool finished() const { return is_terminal(status_); }

  SystemTime started_at() const { return started_at_; }
  SteadyTime started_steady() const { return started_steady_; }
  std::optional<SystemTime> ended_at() const { return ended_at_; }
  std::chrono::milliseconds duration() const;
  std::optional<SystemTime> last_output_at() const { return last_output_at_; }
  std::optional<std::chrono::milliseconds> idle() const;  // since the last output
  // Since the last output or input, whichever is later (since the start when
  // neither): a line just typed is not yet answered, so a program that was
  // quiet at its prompt is not "waiting" until it has had time to read it.
  std::chrono::milliseconds quiet() const;

  // Output.
  OutputLog& log() { return log_; }
  const OutputLog& log() const { return log_; }
  std::uint64_t cursor() const { return cursor_; }
  void advance_cursor(std::uint64_t next_seq);
  // Where the next cursorless wait(match) starts looking when that is past
  // the cursor: after the line of the last match it reported, which a page
  // capped short of it leaves ahead of the cursor. Only grows.
  std::uint64_t match_floor() const { return match_floor_; }
  void raise_match_floor(std::uint64_t seq) { match_floor_ = std::max(match_floor_, seq); }
  // Looks inside the whole retained text (explore tool); created on first use.
  // Shared: an explore call suspended between steps keeps it while a
  // spool-budget drop (drop_text_cache) lets go of it here.
  std::shared_ptr<Explorer> explorer();
  // The explorer's text cache (counted in the total spool budget), and
  // dropping it (the next explore rebuilds it from the log).
  std::uint64_t text_cache_bytes() const;
  void drop_text_cache();
  // Output kept for this execution: the log's retained bytes and the text cache.
  std::uint64_t retained_bytes() const;
  // `text` (its command, purpose, name...) with the secrets output is
  // redacted for replaced, as they are when shown; looked up when called, so
  // a secret registered later is masked too.
  std::string redacted(std::string_view text) const;
  void set_text_redaction(std::function<std::string(std::string_view)> redact) {
    text_redaction_ = std::move(redact);
  }
  int add_output_listener(OutputListener listener);
  void remove_output_listener(int token);

  // Screen: exact up to latest_seq after this call.
  const Screen& screen();
  // The program has ended and the screen model is still catching up its
  // last output in paced turns of the loop (a window of remote output that
  // came at once when a stop hung up: seconds of work for a flood of
  // clears). screen() would finish that at once, holding the loop: a caller
  // that can wait awaits changed() until this is false.
  bool screen_settling() const { return screen_settling_; }
  ScreenModes screen_modes();
  pty::TerminalSize size() const;
  void resize(pty::TerminalSize size, InputSource source);
  // The sizes the bytes [begin, end) were written at, by offset from
  // begin: empty when no longer known (before the changes kept). The text
  // view's live area counts rows with them.
  TerminalSizes sizes_over(std::uint64_t begin, std::uint64_t end) const;
  // Where the byte at `seq` went on the terminal, for a text view of the
  // bytes from it: the first byte at the top left of a fresh terminal; a
  // later one where the text view of the bytes before it (from the first,
  // or the last 64 KiB from a line start) leaves the cursor.
  TextStart text_start(std::uint64_t seq) const;

  // Input. Refused for the agent while held.
  Expected<void> write(std::string_view bytes, InputSource source);
  // Input written that the program has not read yet (it is not reading its
  // terminal); write refuses what would take it past the channel's limit.
  std::size_t queued_input_bytes() const;
  // What the agent typed since its last Enter, for write's command rules
  // (see TypedLines): typing a command and pressing Enter in a later write
  // is checked too.
  const std::string& agent_typed_line() const { return agent_typed_line_; }
  void set_agent_typed_line(std::string line) { agent_typed_line_ = std::move(line); }
  // The backend's input state once output and input have been quiet for
  // quiet_for_input; busy before that, and once finished. Locally one /proc
  // probe; on an SSH host the last answer of the host's /proc (a probe on
  // its own exec channel, started when this asks: busy until the first
  // answer of a quiet period). waiting_for_input and suspended are read from it.
  pty::InputState input_state() const;
  // Reading its terminal, per the backend. Where the backend cannot tell (a
  // host that is not Linux, lacks /proc or awk, or whose probe failed) it is
  // a guess: the program stopped mid-line (the
  // cursor after text, as at ">>> ", "Password: ", "[y/N] ") and output and
  // input have been quiet for kGuessedInputQuiet; quiet at the start of a
  // line (sleep, a build between lines) is not waiting.
  // At a line the terminal reads without echoing it (a password prompt:
  // see hides_typed_line) the guess needs only kHiddenLineQuiet: su and sudo
  // are another user's programs when agentty is not root, and that mode is
  // what they set to read a password.
  static constexpr std::chrono::milliseconds kGuessedInputQuiet{2000};
  static constexpr std::chrono::milliseconds kHiddenLineQuiet{500};
  bool waiting_for_input() { return waiting_for_input(input_state()); }
  bool waiting_for_input(pty::InputState state);
  // waiting_for_input() is false only because a remote host's probe has not
  // answered for this quiet period yet (PtyChannel::input_state_pending;
  // asking starts the probe). A caller that decides on the answer waits for
  // the change that brings it: the host answers in ~100 ms.
  bool input_state_pending();
  // The quiet the guess needs now: kHiddenLineQuiet or kGuessedInputQuiet.
  std::chrono::milliseconds guessed_input_quiet() const;
  std::optional<bool> echo_enabled() const;
  // See PtyChannel::hides_typed_line.
  std::optional<bool> hides_typed_line() const;
  // See PtyChannel::program_edits_line.
  std::optional<bool> program_edits_line() const;
  // See PtyChannel::set_for_line_editor.
  std::optional<bool> set_for_line_editor() const;
  // See PtyChannel::input_state_withheld.
  bool input_state_withheld() const;
  // The foreground program's name while it runs (local terminals); nullopt
  // when unknown.
  std::optional<std::string> foreground_program() const;
  // See PtyChannel::login_shell.
  boost::asio::awaitable<std::optional<std::string>> login_shell();
  // See PtyChannel::put_temp_file.
  boost::asio::awaitable<std::optional<std::string>> put_temp_file(std::string content);
  // See PtyChannel::remove_temp_file; also once the program ended.
  boost::asio::awaitable<void> remove_temp_file(std::string path);
  // PtyChannel::reading_program (the process seen reading; local only).
  std::optional<std::string> reading_program() const;
  // See PtyChannel::program_in_foreground.
  std::optional<bool> program_in_foreground() const;
  // The command has ended but what it left running keeps the execution
  // running (`server &`): "name (pid N)" of a few (local terminals).
  std::vector<std::string> left_running() const;
  // The program was stopped by ctrl-z and nothing above it (no job-control
  // shell) will continue it; resume() continues it, as `fg` would. Refused
  // for the agent while held, and when nothing is suspended.
  bool suspended() const { return input_state() == pty::InputState::suspended; }
  Expected<void> resume(InputSource source);

  // Lifecycle. stop(): `signo` to the process group now, SIGKILL after
  // `force_after` unless it ended. Refused for the agent while held.
  Expected<void> stop(int signo, std::chrono::milliseconds force_after, InputSource source);
  // How `signo` reaches the program where the backend cannot send it as such
  // (a root login over SSH), in words for the agent; nullopt when it can.
  std::optional<std::string> signal_note(int signo) const;
  // The grace of stop (or of timeout_ms) ran out and SIGKILL was sent. Not
  // the same as an end by SIGKILL: the program may have been killed from
  // outside while what it left ran on.
  bool force_killed() const { return force_killed_; }
  // timeout_ms or stop sent SIGTERM: the execution ends soon (by the
  // grace's SIGKILL at the latest), whatever it left running.
  bool ending() const { return timed_out_ || stop_requested_; }
  // Ends the process group without ceremony (shutdown, destructor).
  void kill_now();

  // Human control. While a person holds it, the execution's timeout_ms
  // does not run: a command they took over is not killed under their hands,
  // and the time left resumes when they release it.
  bool held() const { return held_by_.has_value() || login_hold_; }
  const std::optional<std::string>& held_by() const { return held_by_; }
  Expected<void> take_over(const std::string& who, std::optional<pty::TerminalSize> size);
  Expected<void> release(const std::string& who);
  void request_handoff(std::string reason);
  // Takes back a request nobody has taken over (the agent found another
  // way): the dashboard stops highlighting it. False while a person holds
  // it or an SSH login waits for one (that request is not the agent's).
  bool withdraw_handoff();
  const std::optional<std::string>& handoff_reason() const { return handoff_reason_; }
  // A person must log in (SSH password) before the program runs.
  void hold_for_login(std::string reason);
  void end_login_hold();
  bool login_held() const { return login_hold_; }
  // Asked when the channel ends: a reason means the transport failed (an SSH
  // connection died), and the execution ends as failed with that reason.
  void set_failure_source(std::function<std::optional<std::string>()> source);

  // Wakes coroutines waiting on this execution whenever output, status or
  // held changes.
  ChangeSignal& changed() { return changed_; }
  // Called (by the registry) on every state change: start, exit, held, handoff.
  void set_state_observer(std::function<void(Execution&)> observer);

  // Session support (kind == session); null for plain commands.
  ShellIntegration* shell() { return shell_.get(); }
  void set_shell_integration(std::unique_ptr<ShellIntegration> shell);
  void set_recorder(std::unique_ptr<Recorder> recorder);

 private:
  void on_output(std::string_view bytes);
  void on_exit(pty::ExitStatus status);
  void append_output(std::string_view bytes);
  void follow_size_set_inside();
  void write_screen_replies();
  void pace_screen();
  void schedule_screen_pace();
  void follow_screen_lag();
  void settle_screen();
  void end_screen_settling();
  void resume_output();
  void release_running_state();
  void refeed_screen();
  void record_input(std::string_view bytes, InputSource source);
  void arm_timeout();
  void arm_timeout(std::chrono::steady_clock::duration after);
  void arm_force_kill(std::chrono::milliseconds after);
  void arm_hangup_again();
  void state_changed();

  boost::asio::io_context& io_;
  std::string id_;
  ExecutionSpec spec_;
  Options options_;
  std::unique_ptr<pty::PtyChannel> channel_;
  std::unique_ptr<Redactor> redactor_;
  std::unique_ptr<Redactor> input_redactor_;  // typed input, for the recording only
  InputSource last_input_source_ = InputSource::agent;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<ShellIntegration> shell_;
  std::shared_ptr<Explorer> explorer_;
  std::function<std::string(std::string_view)> text_redaction_;
  OutputLog log_;
  ScreenFeeder feeder_;
  bool screen_from_log_ = false;  // feeder_ let go of its bytes: refeed_screen()
  ChangeSignal changed_;
  std::map<int, OutputListener> listeners_;
  int next_listener_token_ = 1;
  std::function<void(Execution&)> state_observer_;

  ExecutionStatus status_ = ExecutionStatus::running;
  std::optional<pty::ExitStatus> exit_status_;
  std::string failure_reason_;
  bool timed_out_ = false;
  bool stop_requested_ = false;
  bool force_killed_ = false;
  std::uint64_t cursor_ = 1;
  std::uint64_t match_floor_ = 1;
  SystemTime started_at_;
  SteadyTime started_steady_;
  std::optional<SystemTime> ended_at_;
  std::optional<SteadyTime> ended_steady_;
  std::optional<SystemTime> last_output_at_;
  std::optional<SteadyTime> last_output_steady_;
  std::optional<SteadyTime> last_input_steady_;
  std::optional<std::string> held_by_;
  std::optional<std::string> handoff_reason_;
  bool login_hold_ = false;
  std::string agent_typed_line_;
  std::function<std::optional<std::string>()> failure_source_;
  pty::TerminalSize agent_size_;
  // Where the size changed: from each log position on, the size then (the
  // first entry the size before the first change); the last kMaxSizes.
  std::vector<std::pair<std::uint64_t, pty::TerminalSize>> sizes_;
  // The last text_start() asked: a page is rendered several times while it
  // is fitted to the answer, from the same position.
  mutable std::optional<std::pair<std::uint64_t, TextStart>> last_text_start_;
  void record_size(pty::TerminalSize before, pty::TerminalSize after);
  boost::asio::steady_timer timeout_timer_;
  // While held: what was left of the timeout at the takeover.
  std::optional<std::chrono::steady_clock::duration> timeout_left_;
  boost::asio::steady_timer force_kill_timer_;
  boost::asio::steady_timer hangup_again_timer_;
  // The screen's catch-up going on in later turns of the loop, and whether
  // the program's output waits for it (execution_pacing.cpp).
  boost::asio::steady_timer screen_pace_timer_;
  bool screen_pace_scheduled_ = false;
  bool output_paused_ = false;
  std::size_t output_slice_ = pty::PtyChannel::kMaxOutputSlice;  // as last set on channel_
  bool screen_settling_ = false;                                 // see screen_settling()
};

}  // namespace agentty::session
