// Running commands inside an open shell session (execute with `session=`),
// the session actions of write (rearm, flush) and the session fields every
// session response carries (boundaries, command_running, ...).
#pragma once

#include "mcp/tool.hpp"

namespace agentty::mcp::tools {

boost::asio::awaitable<ToolResult> execute_in_session(ToolContext& ctx, const json& args);
boost::asio::awaitable<ToolResult> session_action(ToolContext& ctx, session::Execution& execution,
                                                  const json& args);
// boundaries, command_running, prompt_ready, command_exit_code; with
// `command_exit` and a live shell whose last command ended, also exit_code.
json session_fields(session::Execution& execution, bool command_exit = false);

}  // namespace agentty::mcp::tools
