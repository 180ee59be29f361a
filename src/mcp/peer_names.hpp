// What other shell MCP servers call their tools and arguments, and what
// agentty uses for each. An agent that learnt YieldShell (exec, streams,
// close_stdin on write), a Go PTY session manager (terminal_open,
// terminal_send, terminal_output...) or ai-device-bash (bash, run, script,
// get; timeout in seconds, bytes) and calls agentty the same way is told
// what to do instead of only "unknown". So is one that guesses a common
// name (text for write's input, cmd, dir, id), or spells a value another
// way (the Go manager's ctrl-\ and action hard, tmux's C-c, a signal
// without its SIG).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace agentty::mcp {

// For a tool agentty does not have: which of its tools does that job, and how.
std::optional<std::string> peer_tool_advice(const std::string& tool);

// `problem` from validating `tool`'s arguments; when it is an unknown argument
// that a peer server takes, the same message with what to use instead.
std::string with_peer_argument_advice(const std::string& tool, std::string problem);

// `problem` from validating `args` against `input_schema` (`tool`'s); when it
// is a value outside an enum that a peer uses or that names an allowed value
// another way (Ctrl+C, ^C, C-c, escape, TERM, 9), the same message with
// what to send instead.
std::string with_peer_value_advice(const std::string& tool, const nlohmann::json& input_schema,
                                   const nlohmann::json& args, std::string problem);

}  // namespace agentty::mcp
