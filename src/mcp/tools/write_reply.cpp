#include "mcp/tools/write_reply.hpp"

#include <chrono>
#include <optional>

#include "mcp/tools/common.hpp"
#include "session/execution.hpp"
#include "session/text_view.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

constexpr milliseconds kQuietAfterReply{150};

// Output since `before` that is more than line breaks.
bool printed_past_line_break(session::Execution& execution, std::uint64_t before) {
  constexpr std::uint64_t kLook = 64;
  const auto latest = execution.log().latest_seq();
  const auto since = execution.log().copy_range(before, std::min(latest, before + kLook));
  return since.find_first_not_of("\r\n") != std::string::npos || latest > before + kLook;
}

std::string without_line_breaks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != '\r' && c != '\n') out += c;
  }
  return out;
}

// Output since `before` is the echo of all of `typed`, a line ended with
// Enter, line break included: the program took the line and printed nothing
// of its own.
bool echoed_whole_line(session::Execution& execution, std::uint64_t before,
                       const std::string& typed) {
  if (!submits_line(typed)) return false;
  const auto latest = execution.log().latest_seq();
  if (latest <= before || latest - before > 2 * typed.size()) return false;
  const auto echoed = execution.log().copy_range(before, latest);
  return echoed.ends_with('\n') && without_line_breaks(echoed) == without_line_breaks(typed);
}

// `text` without line breaks and without escape sequences, which show
// nothing: bash prints `ESC[?2004l` (bracketed paste off) as it takes a
// line, and a session's prompt hook its command mark, right after the echo.
std::string shown_without_line_breaks(std::string_view text) {
  return without_line_breaks(session::without_escapes(text));
}

}  // namespace

// The echo so far: the typed text with line breaks dropped (Enter is typed
// as CR and echoed as CR LF) starts with it, once sequences that show
// nothing are left out too. Anything else (a key echoed as ^C, a readline
// redraw, the program's own output) is a reply.
bool only_echo(session::Execution& execution, std::uint64_t before, const std::string& typed) {
  // Room for the invisible sequences (a prompt mark is ~30 bytes).
  constexpr std::uint64_t kInvisibleSlack = 256;
  const auto latest = execution.log().latest_seq();
  // CR LF per typed CR at most doubles it; more is not an echo.
  if (latest - before > 2 * typed.size() + kInvisibleSlack) return false;
  const auto echoed = shown_without_line_breaks(execution.log().copy_range(before, latest));
  return shown_without_line_breaks(typed).starts_with(echoed);
}

bool only_line_echoed(session::Execution& execution, std::uint64_t before,
                      const std::string& typed) {
  return execution.program_edits_line() == std::optional<bool>(true) &&
         echoed_whole_line(execution, before, typed);
}

bool answers_hidden_line(session::Execution& execution, const std::string& bytes) {
  return execution.hides_typed_line() == std::optional<bool>(true) && submits_line(bytes);
}

bool at_line_prompt(session::Execution& execution) {
  return execution.program_edits_line() == std::optional<bool>(true) &&
         execution.waiting_for_input();
}

bool submits_line(const std::string& typed) {
  return typed.find_first_of("\r\n") != std::string::npos;
}

bool line_still_running(session::Execution& execution, const TypedInput& typed) {
  return typed.line_prompt && !typed.hidden_line && submits_line(typed.bytes) &&
         !execution.finished() && execution.input_state() == pty::InputState::busy;
}

std::function<bool()> reply_settled(session::Execution& execution, TypedInput typed) {
  const auto before = execution.log().latest_seq();
  const auto sent_at = steady_clock::now();
  return [&execution, typed = std::move(typed), before, sent_at] {
    if (execution.finished()) return true;
    const bool hidden_line = typed.hidden_line;
    // quiet(): since the output or our input, whichever is later.
    bool replied = execution.log().latest_seq() > before;
    if (replied && hidden_line) replied = printed_past_line_break(execution, before);
    if (replied && !hidden_line && only_echo(execution, before, typed.bytes)) replied = false;
    if (replied && execution.quiet() >= kQuietAfterReply) {
      // On a host the reply's waiting_for_input waits for the probe of this
      // quiet period (~100 ms): said before it came, it was false at a
      // REPL's `>>> ` or the shell's prompt, where a local session says true.
      if (execution.input_state_pending()) return false;
      // A line editor's reply ends at its next prompt: gdb's "Starting
      // program:" is followed by the breakpoint, after a quiet moment.
      return !line_still_running(execution, typed);
    }
    if (steady_clock::now() - sent_at < kQuietAfterReply || execution.quiet() < kQuietAfterReply)
      return false;
    // A resumed program may print nothing: running again is its answer. A
    // resize alone types nothing: give the program time to redraw.
    if (typed.resumed) return true;
    // A stopped program replies to nothing (a resize, typing ahead) until it
    // is continued: the answer said so only after yield_ms.
    if (stays_stopped(execution)) return true;
    // A program that edits its own line (a REPL) prompts when it is ready for
    // the next one: until then waiting for input is no answer. node's REPL
    // runs `await fetch(...)` in its event loop, which polls the terminal all
    // along, so "waits again" held at the echo and the result came later.
    if (!hidden_line && only_line_echoed(execution, before, typed.bytes)) return false;
    return execution.waiting_for_input();
  };
}

}  // namespace agentty::mcp::tools
