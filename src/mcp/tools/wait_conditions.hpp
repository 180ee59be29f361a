// What wait waits for: a condition per `until` (exit, idle, input, match,
// released), looked at on every change of the execution and on a timer, and
// what it found out for the answer (wait.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "mcp/tool.hpp"
#include "mcp/tools/pattern.hpp"
#include "session/execution.hpp"

namespace agentty::mcp::tools {

// What a condition found out while it was checked, for the answer.
struct WaitFindings {
  std::optional<PatternMatch> found;
  bool found_on_screen = false;  // in the rows a full-screen program shows, not the text view
  std::uint64_t found_line_end = 0;
  std::string match_failure;  // PCRE2 gave up: no answer will come
  std::string read_failure;   // the output to search could not be read (out of fds)
  bool guessed = false;       // until=input held by the guess (the backend could not tell)
  std::optional<std::chrono::steady_clock::time_point> ended_at;  // see session_command_over
  bool stopped = false;  // ended by stays_stopped (see with_stop)
  bool asked = false;    // ended by a question (see with_question)
};

// A condition: whether it holds now, looked at on every change and at
// least every `recheck` (0: only on changes).
struct WaitCondition {
  std::function<bool()> done;
  std::chrono::milliseconds recheck{0};
};

// In a session: the current command's end (its D mark), not the shell's; a
// command typed but not started yet (execute with a short yield_ms) has not
// ended either.
WaitCondition until_exit(session::Execution& execution, WaitFindings& findings);
// No output for `idle` (counted from `start` at most).
WaitCondition until_idle(session::Execution& execution, std::chrono::milliseconds idle,
                         std::chrono::steady_clock::time_point start);
// The program reads its terminal, seen twice with no output in between.
WaitCondition until_input(session::Execution& execution, WaitFindings& findings);
// The person declined the handoff in the agent's MCP client and has not
// taken it over: nobody is coming.
bool declined_in_client(session::Execution& execution, const ToolContext& ctx);
// A takeover released, or no handoff pending any more.
WaitCondition until_released(session::Execution& execution, const ToolContext& ctx);
// `pattern` in the text view from seq `from` (cursorless: past a session
// command's echo), or in a full-screen program's changed rows.
WaitCondition until_match(session::Execution& execution, const Pattern& pattern, std::uint64_t from,
                          bool cursorless, WaitFindings& findings);
// `condition`, or the program stopped with nothing to continue it
// (findings.stopped).
WaitCondition with_stop(WaitCondition condition, session::Execution& execution,
                        WaitFindings& findings);
// `condition`, or the program asks something (findings.asked): it waits for
// input with the cursor after text on its row (a [y/N] question, a REPL's
// prompt), so it goes on only once answered. For until=exit: a wait for the
// end of a program that asks a question spent its whole timeout.
WaitCondition with_question(WaitCondition condition, session::Execution& execution,
                            WaitFindings& findings);

}  // namespace agentty::mcp::tools
