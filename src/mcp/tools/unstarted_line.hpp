// A line execute(session=) typed that the shell read but started no command
// for (no C mark): zsh's spelling question holds it, or the shell refused it
// (a syntax error) and drew its prompt again.
#pragma once

#include <string>

#include "session/execution.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

// zsh's CORRECT/CORRECT_ALL question (its SPROMPT, "zsh: correct 'sl' to
// 'ls' [nyae]? ") is on the cursor's line. It is asked after the line was
// read and before the command starts, with the line editor's terminal
// modes, so it read as a continuation prompt (or an unmarked prompt).
bool asks_to_correct(session::Execution& execution);
// What to do about that question.
extern const char* const kCorrectionAdvice;

// What the shell printed after the echo of `command` (a line that started
// no command) and before its last end mark: bash's "syntax error near
// unexpected token", zsh's "parse error near", a job notice; empty for a
// blank line.
std::string printed_before_prompt(session::Execution& execution,
                                  const session::ShellCommand& command);

}  // namespace agentty::mcp::tools
