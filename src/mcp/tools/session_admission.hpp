// execute(session=...)'s admission: which open session `session` names,
// the command line to type (execute's arguments that only apply to a new
// process are refused, each with what to do instead), and why the shell
// cannot take a line now. session_execute.cpp types it and answers.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "mcp/tool.hpp"
#include "mcp/tools/common.hpp"
#include "session/execution.hpp"

namespace agentty::mcp::tools {

// "exited with code 0", "killed by signal 9 (SIGKILL)".
std::string how_shell_ended(const session::Execution& execution);
// The open session `args` names, or why execute cannot type into it.
Expected<std::shared_ptr<session::Execution>> session_named(ToolContext& ctx, const json& args);
// The command line to type, or why these arguments cannot run in a
// session: one that only applies to a new process, no command, a policy rule.
Expected<std::string> line_to_type(ToolContext& ctx, const json& args);
// Why the shell cannot take a command line now (it ended, a person holds
// it, an earlier line is pending, a command runs); nothing when it can.
// `heuristic` is set when the line goes to a program that reads the
// terminal (a nested shell, a REPL) instead of the marked shell.
std::optional<ToolResult> busy_refusal(ToolContext& ctx, session::Execution& execution,
                                       bool& heuristic);

}  // namespace agentty::mcp::tools
