// What other shell MCP servers call their tools and arguments, and what
// agentty uses for each. An agent that learnt YieldShell (exec, streams,
// close_stdin on write), a Go PTY session manager (terminal_open,
// terminal_send, terminal_output...) or ai-device-bash (bash, run, script,
// get; timeout in seconds, bytes) and calls agentty the same way is told
// what to do instead of only "unknown". So is one that guesses a common
// name (text for write's input, cmd, dir, id).
#pragma once

#include <optional>
#include <string>

namespace agentty::mcp {

// For a tool agentty does not have: which of its tools does that job, and how.
std::optional<std::string> peer_tool_advice(const std::string& tool);

// `problem` from validating `tool`'s arguments; when it is an unknown argument
// that a peer server takes, the same message with what to use instead.
std::string with_peer_argument_advice(const std::string& tool, std::string problem);

}  // namespace agentty::mcp
