// When a write's answer is complete: the program has replied to what was
// typed. A write returns what the program printed back, so it waits for the
// reply, not merely for the first bytes: output that went quiet for a moment
// (150 ms), the program waiting for input again, or its end, bounded by the
// call's yield_ms.
//
// The echo of the typed text is not a reply. `time.sleep(1); print("x")`
// typed into python echoes at once and then prints nothing for a second; an
// answer at the echo's quiet moment sent the agent back to read for the "x".
// So output that is only the echo (line breaks aside) counts as a reply only
// once the program waits for input again (it read the line silently), and
// a program computing after the echo is waited for.
//
// A program that edits its own line (readline, a REPL: the terminal's line
// discipline off) prints a prompt when it is ready for the next line, so the
// echo of a whole line is not its reply even once it waits for input: node's
// REPL polls the terminal while an `await` runs.
//
// A line editor at its prompt (gdb, pdb, sqlite3, a REPL, a shell) prompts
// again when it is done with a submitted line, so output that went quiet
// while /proc shows it busy is only the start of the reply: gdb's `run`
// prints "Starting program: ..." and then runs to the breakpoint, and the
// answer came at that line with waiting_for_input false.
//
// A line typed where the terminal does not echo it (a password) has its own
// rule: the program prints the line break Enter would have echoed, then
// checks what was typed, so that line break is not its reply either.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace agentty::session {
class Execution;
}

namespace agentty::mcp::tools {

// Whether typing `bytes` answers a line the terminal reads without echo.
bool answers_hidden_line(session::Execution& execution, const std::string& bytes);

// Output since `before` is only the terminal's echo of `typed` (or nothing):
// the program has not answered.
bool only_echo(session::Execution& execution, std::uint64_t before, const std::string& typed);

// Whether all the output since `before` is the echo of `typed`, a whole
// line, from a program that edits its own line: it has neither answered nor
// prompted again.
bool only_line_echoed(session::Execution& execution, std::uint64_t before,
                      const std::string& typed);

// The program edits its own line and waits for input: a line editor at its
// prompt. Asked before typing (once typed, the input is not quiet yet).
bool at_line_prompt(session::Execution& execution);

// Whether `typed` submits a line (Enter, or a line break in the text).
bool submits_line(const std::string& typed);

// How a write was typed, for the rules of its reply.
struct TypedInput {
  std::string bytes;
  bool resumed = false;      // it continued a suspended program: running again is its answer
  bool hidden_line = false;  // answers_hidden_line
  bool line_prompt = false;  // at_line_prompt just before it was typed
};

// The predicate a write waits on, started right after the input was written.
std::function<bool()> reply_settled(session::Execution& execution, TypedInput typed);

// The reply went quiet while the line editor it was typed at is still busy
// with the line (not reading, per /proc): it has not prompted again.
bool line_still_running(session::Execution& execution, const TypedInput& typed);

}  // namespace agentty::mcp::tools
