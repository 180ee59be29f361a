// read: output since the caller's cursor, without blocking.
#include "mcp/tools/common.hpp"
#include "mcp/tools/session_execute.hpp"

namespace agentty::mcp::tools {

namespace {

boost::asio::awaitable<ToolResult> read(ToolContext& ctx, const json& args,
                                        std::shared_ptr<session::Execution> execution) {
  if (args.contains("since_seq") && args.contains("tail_lines")) {
    co_return tool_error("tail_lines: cannot be combined with since_seq; use one of them.");
  }
  if (!args.contains("since_seq") && !args.contains("tail_lines")) skip_command_echo(*execution);
  // A session's command fields too: polling with read, as a backgrounded
  // answer suggests, never told that the command had ended, or how.
  co_return ToolResult{merged(execution_result(*execution, ctx, read_request(ctx, args)),
                              session_fields(*execution))};
}

}  // namespace

ToolDefinition make_read_tool(const ToolConfig& config) {
  return ToolDefinition{
      "read",
      "Read output",
      "Return an execution's output without waiting. Without since_seq/tail_lines it continues "
      "from the "
      "server-side cursor and advances it, so polling returns each byte exactly once (execute, "
      "write and wait "
      "advance the same cursor; in a session the cursor skips the echo of the line "
      "execute(session=) "
      "typed, as execute's own answer does). since_seq re-reads from a position (1 = the start) "
      "and tail_lines "
      "returns the "
      "newest lines; both are out-of-band and leave the cursor alone. If capped=true, call read "
      "again (the hint "
      "says how). evicted=true means older output is gone for good. To block until something "
      "happens, use wait. "
      "Errors: an unknown execution_id (use the id from execute/open; ps lists them).",
      object_schema(merged({{"execution_id", execution_id_input()}}, read_inputs(config)),
                    {"execution_id"}),
      {{"type", "object"},
       {"properties", merged(status_output_properties(), read_output_properties())}},
      annotations(true, false, false, false),
      for_execution(read),
  };
}

}  // namespace agentty::mcp::tools
