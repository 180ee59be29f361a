// Text the agent typed into a program with write but did not submit (no
// Enter after it), while the program waits for input with that text on its
// line: a `[Y/n]` prompt answered with input "y" alone, a REPL line without
// newline. A program that reads lines (the terminal's line discipline, a
// readline REPL, a shell) has not got it, and waiting does not change that;
// the agent is told so, instead of seeing only the echoed "y" and waiting.
//
// It is the agent's own pending line (Execution::agent_typed_line, as the
// command rules keep it) and only counts while the screen shows it at the
// end of the cursor's line (wrapped onto rows above it too): a program that
// reads single keys (a menu, `git add -p` with interactive.singleKey) took
// the keys and does not echo them there. At a prompt that hides what is
// typed (a password), it counts as it is, and only its length is said.
#pragma once

#include <optional>
#include <string>

namespace agentty::session {
class Execution;
}

namespace agentty::mcp::tools {

// The pending text, quoted for a message, when the running program waits
// for input with it unsubmitted on its line; nullopt otherwise.
std::optional<std::string> unsubmitted_input(session::Execution& execution);

// A sentence for the agent: `quoted` is typed but not submitted, and how to
// submit or erase it.
std::string unsubmitted_input_advice(const std::string& quoted);

}  // namespace agentty::mcp::tools
