// Running commands inside an open shell session (execute with `session=`,
// session_execute.cpp), the session actions of write (rearm, flush:
// session_action.cpp) and the session fields every
// session response carries (boundaries, command_running, ...).
#pragma once

#include "mcp/tool.hpp"
#include "mcp/tools/common.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

boost::asio::awaitable<ToolResult> execute_in_session(ToolContext& ctx, const json& args);
boost::asio::awaitable<ToolResult> session_action(ToolContext& ctx, session::Execution& execution,
                                                  const json& args);
// boundaries, command_running, prompt_ready, command_exit_code; with
// `command_exit` and a live shell whose last command ended, also exit_code.
json session_fields(session::Execution& execution, bool command_exit = false);
// The command's output (session_answer.cpp), then what the shell printed
// before its next prompt (a prompt hook's message, a job notice): both are
// what a person sees. Moves the cursor past what it returns.
json command_output(session::Execution& execution, const session::ShellCommand& command,
                    const ReadRequest& request);
// The rest of a session command that ended at a marked prompt, from the
// cursor, as command_output answers it: its output and what the shell
// printed before the prompt, not the prompt itself (wait(until="exit")
// answered the next prompt as output). nullopt when the cursor is not
// inside that command's output, or nothing ended there.
std::optional<json> ended_command_rest(session::Execution& execution, const ReadRequest& request);
// A line typed into a program (a REPL, a nested shell) that ended it: the
// program's output since the last answer (the line's echo first) and its
// exit code, from the shell's marked prompt.
json program_ended_answer(session::Execution& execution, const session::ShellCommand& program,
                          const ReadRequest& request);
// The session's own shell, not a job it started, holds the terminal's
// foreground and reads it with its line editor while the marks say a
// command runs: it is at a prompt the hook no longer marks (the command
// replaced both PS1 and PROMPT_COMMAND, or was `exec bash`), where a typed
// line is a command and only write(action="rearm") brings marks back.
bool shell_at_unmarked_prompt(const session::Execution& execution);
// What to tell the agent about such a prompt.
extern const char* const kUnmarkedPromptNote;
// A refusal to act on a session, with its session fields.
ToolResult session_refusal(session::Execution& execution, const ToolContext& ctx,
                           std::string message);
// The shell drew its marked prompt again after the agent's line with no C
// or D mark since: it ran the line without its hook (exec bash with an
// exported PS1 keeps only the prompt's marks), and only rearm helps.
bool back_without_marks(const session::ShellIntegration& shell,
                        const session::ShellCommand& command);
extern const char* const kBackWithoutMarksNote;
// The agent's command typed at the prompt that the shell has neither started
// (no C mark) nor dropped (no prompt drawn since): typed ahead of a slow
// shell, or the shell waits for the rest of the line (an unclosed quote, a
// trailing backslash). nullptr when there is none.
const session::ShellCommand* unstarted_command(const session::ShellIntegration& shell);

// The line execute(session=) typed echoes back before the command's output
// (its C mark); execute's own answer skips it, and so do cursorless read and
// wait, so a pattern in the command line is not taken for its output.
// Where a cursor at `from` should start instead: the command's output start
// once the shell started it, nullopt while its echo is all there is (not
// started yet), `from` when it is not inside an agent command's echo.
std::optional<std::uint64_t> past_command_echo(session::Execution& execution, std::uint64_t from);
// Moves the server-side cursor past such an echo (cursorless read and wait).
void skip_command_echo(session::Execution& execution);

}  // namespace agentty::mcp::tools
