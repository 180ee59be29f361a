// Linux refuses to start a program one of whose arguments is longer than
// MAX_ARG_STRLEN (32 pages: 128 KiB), and `command` reaches bash as one
// (`bash -c COMMAND`). Checked before anything starts, so an agent that
// sends a long heredoc is told which argument it was and how to send the
// text instead, not that "agentty-supervisor" could not start.
#pragma once

#include <optional>
#include <string>

#include "mcp/tools/common.hpp"
#include "session/execution.hpp"

namespace agentty::mcp::tools {

// The longest argument a local program may be given, in bytes (NUL excluded).
std::size_t longest_program_argument();

// Why `spec`'s program (made from execute's `args`) cannot be started with
// its arguments, naming the argument (`command`, `argv[i]`) and what to do;
// none when every argument fits or the program runs on a host.
std::optional<std::string> argument_length_problem(const json& args,
                                                   const session::ExecutionSpec& spec);

}  // namespace agentty::mcp::tools
