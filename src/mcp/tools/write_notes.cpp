// Notes a write's answer adds about the reply (write_notes.hpp).
#include "mcp/tools/write_notes.hpp"

#include <algorithm>

#include "mcp/tools/write_reply.hpp"

namespace agentty::mcp::tools {

// ctrl-c that changed nothing a person would see: nothing was printed and
// the program still waits for input. passwd ignores SIGINT once it asks for
// the new password; a person pressing ctrl-c there sees nothing happen.
void note_interrupt_ignored(json& result, session::Execution& execution, const std::string& bytes,
                            std::uint64_t seq_before) {
  if (bytes.find('\x03') == std::string::npos || execution.finished()) return;
  if (execution.log().latest_seq() != seq_before || !execution.waiting_for_input()) return;
  append_message(result,
                 "ctrl-c changed nothing: nothing was printed and the program still waits for "
                 "input: it ignores SIGINT here (passwd does once it asks for the new "
                 "password; a person's ctrl-c does nothing either), or takes ctrl-c as a key. "
                 "Answer it, send end-of-file (eof: true), or end it with stop.");
}

// yield_ms ran out with nothing back but the echo, or with a line editor's
// reply begun but no prompt after it, and /proc shows the program doing
// something other than reading its terminal (`sleep`, a build, gdb's
// inferior running): say so, or the agent takes the silence for a slow
// answer and types again, or the partial reply for the whole of it.
void note_not_reading(json& result, session::Execution& execution, const TypedInput& typed,
                      std::uint64_t seq_before, WaitEnd end) {
  if (end != WaitEnd::deadline || execution.finished()) return;
  if (execution.queued_input_bytes() > 0) return;  // note_pending_input says it
  if (execution.input_state() != pty::InputState::busy) return;
  const bool echo_only = only_echo(execution, seq_before, typed.bytes);
  if (!echo_only && !line_still_running(execution, typed)) return;
  const auto name = execution.foreground_program();
  const std::string program = name ? *name : std::string("the program");
  const std::string opening =
      echo_only ? "Nothing came back within yield_ms but the echo, and " + program +
                      " is not reading its terminal now"
                : "The line's reply has begun, but no prompt followed within yield_ms: " + program +
                      " is not reading its terminal now";
  append_message(result, opening +
                             ": it is busy (running what it read, sleeping, or waiting on "
                             "something else); typed text it has not read yet waits in the "
                             "terminal until it does. Follow it with wait (until=\"input\" "
                             "for its next prompt, or a pattern), or interrupt it with keys "
                             "[\"ctrl-c\"].");
}

// yield_ms ran out with only the echo of a line from a program that edits
// its own line: it has not answered or prompted yet, though it may read the
// terminal (node's REPL does while an await runs), so waiting_for_input is
// no sign that it is done.
void note_line_unanswered(json& result, session::Execution& execution, const std::string& bytes,
                          std::uint64_t seq_before) {
  if (execution.finished() || !only_line_echoed(execution, seq_before, bytes)) return;
  // Busy, not reading: note_not_reading says so.
  if (execution.input_state() == pty::InputState::busy) return;
  append_message(result,
                 "Only the echo of the line came back within yield_ms: the program has neither "
                 "answered nor shown its prompt again. It may still be running the line while it "
                 "reads the terminal (node's REPL does during an await), so waiting_for_input "
                 "does not mean it is done; or it took the line silently (node's .editor mode "
                 "does: send all its lines and keys [\"ctrl-d\"] in one write). Follow it with "
                 "wait (until: \"match\", pattern: its prompt) or read.");
}

// Typed ahead: the terminal holds it for the program, which is not reading.
void note_pending_input(json& result, session::Execution& execution) {
  auto queued = execution.queued_input_bytes();
  if (!queued) return;
  result["input_pending_bytes"] = queued;
  append_message(result, "The program has not read " + std::to_string(queued) +
                             " bytes of the input typed so far (it does not read its terminal "
                             "now); they stay queued for it, in order.");
}

bool terminal_collects_lines(const session::Execution& execution) {
  return execution.program_edits_line() == std::optional<bool>(false);
}

// Linux's N_TTY keeps 4095 bytes of a line in canonical mode (and room for
// its end) and drops the rest without a word; the echo may still show all
// of it (audit 50: 5000 bytes typed, python's readline() got 4096 with the
// newline).
void note_line_cut(json& result, bool collected, std::string_view typed) {
  constexpr std::size_t kKept = 4095;
  if (!collected) return;
  std::size_t longest = 0;
  for (std::size_t at = 0; at < typed.size();) {
    const auto end = std::min(typed.find_first_of("\r\n", at), typed.size());
    longest = std::max(longest, end - at);
    at = end + 1;
  }
  if (longest <= kKept) return;
  append_message(result, "A typed line is " + std::to_string(longest) +
                             " bytes long, and the terminal collects the lines the program "
                             "reads (canonical mode): it keeps 4095 bytes of a line and drops "
                             "the rest (Linux's limit; the echo may show more). Give long data "
                             "as a file, or as execute's stdin.");
}

// ctrl-c whose only answer is the terminal's `^C`: SIGINT reached the
// foreground process group, and the program is still there after the quiet
// moment the answer waited for. Without a word the agent saw `running` and
// `^C` and could only guess (audit 40: `trap '' INT; sleep`).
void note_interrupt_unanswered(json& result, session::Execution& execution,
                               const std::string& bytes, std::uint64_t seq_before) {
  if (bytes.find('\x03') == std::string::npos || execution.finished()) return;
  const auto latest = execution.log().latest_seq();
  if (latest == seq_before || latest - seq_before > 8) return;
  const auto echoed = execution.log().copy_range(seq_before, latest);
  if (echoed.find_first_not_of("^C\r\n") != std::string::npos) return;
  const auto name = execution.foreground_program();
  append_message(result,
                 "ctrl-c was delivered (the terminal echoed ^C: SIGINT went to the program's "
                 "process group), and " +
                     (name ? *name : std::string("the program")) +
                     " is still running: it catches or ignores SIGINT, or is slow to exit. "
                     "wait(until=\"exit\") gives it time; keys [\"ctrl-backslash\"] sends "
                     "SIGQUIT; stop ends it (SIGTERM, then SIGKILL).");
}

}  // namespace agentty::mcp::tools
