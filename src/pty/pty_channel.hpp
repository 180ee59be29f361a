// PtyChannel: a program running on a terminal, local (PtyProcess) or remote
// (an SSH channel with a PTY). The session layer drives executions through
// this interface only, so local and remote executions behave the same.
//
// Threading: created, used and destroyed on the one I/O event loop; every
// callback runs on that loop.
//
// Event contract, for every implementation:
//  - on_output delivers every byte the terminal produced, in order, in
//    chunks of any size;
//  - on_exit fires exactly once, after the last on_output, once the program
//    has ended AND its process group has no members left (a background job
//    that outlives the shell keeps the channel alive; locally, so does a job
//    in another group of the terminal's session);
//  - no callback fires after the channel is destroyed.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pty/exit_status.hpp"

namespace agentty::pty {

struct TerminalSize {
  std::uint16_t cols = 120;
  std::uint16_t rows = 40;
  bool operator==(const TerminalSize&) const = default;
};

struct ChannelEvents {
  std::function<void(std::string_view bytes)> on_output;
  std::function<void(ExitStatus status)> on_exit;
};

// The terminal's modes that say how typing is taken: ICANON (the terminal
// collects a line, editable, and hands it over at Enter) and ECHO.
struct LineModes {
  bool canonical = true;
  bool echo = true;
  bool signals = true;  // ISIG: ctrl-c, ctrl-z and ctrl-\ send signals
  // A line read without echoing it, as at a password prompt: what getpass,
  // sudo, su and `read -s` set. readline, REPLs and full-screen programs turn
  // both off and draw what is typed themselves.
  bool hides_typed_line() const { return canonical && !echo; }
  // The program, not the terminal, takes what is typed and echoes it.
  bool program_edits_line() const { return !canonical; }
  // What readline and zle set while they read a line: the line discipline
  // and echo off, signals on. A terminal left raw (`stty raw`, a full-screen
  // program that crashed) has signals off too, and a shell's `read` on it is
  // no prompt.
  bool set_for_line_editor() const { return !canonical && !echo && signals; }
  bool operator==(const LineModes&) const = default;
};

// What the program on the terminal is doing, as far as the backend can tell.
enum class InputState {
  unknown,        // the backend cannot tell (no /proc; a program of another user)
  reading_input,  // the foreground process is blocked reading the terminal
  busy,           // running, sleeping on something else, or not reading the terminal
  // The foreground process group is stopped (ctrl-z, SIGTSTP) and no
  // job-control shell took the terminal back: nothing will continue it.
  suspended,
};

class PtyChannel {
 public:
  virtual ~PtyChannel() = default;

  // Begins delivering events. Called once, right after construction.
  virtual void start(ChannelEvents events) = 0;
  // Queues bytes for the program's terminal input; never blocks the loop.
  // Past kMaxQueuedInput not yet taken by the terminal (the program is not
  // reading, and typing is unbounded), input is dropped with a warning.
  virtual void write(std::string_view bytes) = 0;
  static constexpr std::size_t kMaxQueuedInput = 16 << 20;
  // Input write() queued that the terminal has not taken yet: the program
  // does not read, and the terminal's own buffer is full. 0 when unknown.
  virtual std::size_t queued_input_bytes() const { return 0; }
  virtual void resize(TerminalSize size) = 0;
  // Sends `signo` to the program's whole process group.
  virtual void send_signal(int signo) = 0;
  // Where send_signal(signo) cannot deliver `signo` as such: what it does
  // instead and why, in words for the agent; nullopt when delivered.
  virtual std::optional<std::string> signal_note(int /*signo*/) const { return std::nullopt; }
  // The OS pid of the program (local), if known.
  virtual std::optional<int> process_id() const = 0;
  virtual InputState input_state() const = 0;
  // The pid of the shell leading the terminal's session, as that shell
  // reported it (a session's prompt hook: $$ in its marks). A remote
  // terminal's probe finds the terminal by it; local ones know their own.
  virtual void identify_session_shell(int /*pid*/) {}
  // Called when input_state() may have changed with no output (a remote
  // host's answer arrived), so waits look again; never after destruction.
  // Backends that answer at once never call it.
  virtual void on_input_state_change(std::function<void()> /*callback*/) {}
  // input_state() says busy only because the backend's answer for now is on
  // its way (a remote host's probe runs); on_input_state_change fires when
  // it comes. Backends that answer at once never are.
  virtual bool input_state_pending() const { return false; }
  // Continues the stopped processes of the terminal's foreground group (what
  // `fg` would do, for a program with no job-control shell above it); false
  // if none was stopped or the backend cannot tell.
  virtual bool resume_foreground() { return false; }
  // Whether the terminal echoes input (false at a password prompt); nullopt if unknown.
  virtual std::optional<bool> echo_enabled() const = 0;
  // The terminal's line modes now; nullopt if unknown (ended, during a
  // login, or not known yet on a host).
  virtual std::optional<LineModes> line_modes() const { return std::nullopt; }
  // Whether the terminal reads a line without echoing it, as at a password
  // prompt (LineModes::hides_typed_line); nullopt if unknown.
  std::optional<bool> hides_typed_line() const { return line_mode(&LineModes::hides_typed_line); }
  // Whether the program edits the typed line itself, the terminal's line
  // discipline off (LineModes::program_edits_line); nullopt if unknown.
  std::optional<bool> program_edits_line() const {
    return line_mode(&LineModes::program_edits_line);
  }
  // Whether the terminal is set as a line editor sets it
  // (LineModes::set_for_line_editor); nullopt if unknown.
  std::optional<bool> set_for_line_editor() const {
    return line_mode(&LineModes::set_for_line_editor);
  }
  // input_state() is unknown although the backend looked: the program is
  // not its to see (another user's, as su, sudo and passwd are at a
  // password prompt). false where it could not look at all, or has not.
  virtual bool input_state_withheld() const { return false; }
  // The name (comm) of the terminal's foreground process group leader:
  // what a person would say is running ("python3"); nullopt if unknown.
  virtual std::optional<std::string> foreground_program() const { return std::nullopt; }
  // The account's login shell (a name or a path: SshConnection::login_shell)
  // where the program is a login shell on a host (open(host)): asked of the
  // host once per connection. nullopt locally or when the host does not
  // answer.
  virtual boost::asio::awaitable<std::optional<std::string>> login_shell() {
    co_return std::nullopt;
  }
  // Puts `content` in a new file only the account can read, on the host of
  // a remote terminal (mktemp's directory), and returns its path; nullopt
  // locally or when the host could not (no mktemp, a shell that is not
  // POSIX, no answer). The caller removes it.
  virtual boost::asio::awaitable<std::optional<std::string>> put_temp_file(
      std::string /*content*/) {
    co_return std::nullopt;
  }
  // Removes a file put_temp_file made, where nothing else will (the line
  // that would have was not typed); nothing locally.
  virtual boost::asio::awaitable<void> remove_temp_file(std::string /*path*/) { co_return; }
  // The name (comm) of the process seen reading the terminal, which may be
  // a child of that leader (the editor `git commit` runs, the pager of `git
  // log`); nullopt if none is seen reading or the backend cannot tell.
  virtual std::optional<std::string> reading_program() const { return std::nullopt; }
  // Whether the program itself (a session's shell running its builtin
  // `read`, say), not a job it started, holds the terminal's foreground;
  // nullopt if the backend cannot tell.
  virtual std::optional<bool> program_in_foreground() const { return std::nullopt; }
  // The program itself has ended, and what keeps the channel open is what it
  // left running in the terminal's session (`server &`): up to a few of
  // those as "name (pid N)". Empty while the program runs, or where the
  // backend cannot tell (a remote terminal).
  virtual std::vector<std::string> left_running() const { return {}; }
  virtual TerminalSize size() const = 0;
  // A size the program set from inside (`stty cols 50`, TIOCSWINSZ on its
  // terminal) since the last call, now also size(); nullopt if none or if the
  // backend cannot see it (a remote terminal).
  virtual std::optional<TerminalSize> take_size_change() { return std::nullopt; }
  // True once on_exit has fired.
  virtual bool finished() const = 0;
  // Stops (true) or resumes (false) reading the program's output, so that a
  // consumer that cannot keep up slows the program instead of queueing
  // without bound (the program blocks writing, as on a slow terminal).
  // False where the backend cannot pause: the caller then keeps up at once.
  // A pause takes effect within an output call (see set_output_slice).
  // Locally a pause does not hold back the end: the drain after the
  // program's exit reads what is left (at most the terminal's buffer). Over
  // SSH the window may hold ~1.3 MB when the program ends: on_exit follows
  // once the reader has resumed and taken it (a paused caller must resume),
  // unless we hung up (then it all comes at once, with the exit).
  virtual bool pause_output(bool /*paused*/) { return false; }
  // The most bytes one on_output call carries from now on (clamped to
  // [kMinOutputSlice, kMaxOutputSlice]; kMaxOutputSlice until set): a
  // consumer near the point where it would pause asks for small calls, so it
  // stops within a small overshoot, and gets whole reads otherwise.
  virtual void set_output_slice(std::size_t /*max_bytes*/) {}
  static constexpr std::size_t kMinOutputSlice = 1024;
  static constexpr std::size_t kMaxOutputSlice = 64 * 1024;
  static std::size_t clamp_output_slice(std::size_t max_bytes) {
    return std::clamp(max_bytes, kMinOutputSlice, kMaxOutputSlice);
  }

 private:
  std::optional<bool> line_mode(bool (LineModes::*mode)() const) const {
    auto modes = line_modes();
    return modes ? std::optional<bool>(((*modes).*mode)()) : std::nullopt;
  }
};

}  // namespace agentty::pty
