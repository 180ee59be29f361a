// cleanup: prune terminal execution records.
#include "mcp/tools/common.hpp"

namespace agentty::mcp::tools {

namespace {

boost::asio::awaitable<ToolResult> cleanup(ToolContext& ctx, const json& args) {
  auto completed = std::chrono::milliseconds(args.value("completed_older_than_ms", 3600000LL));
  auto stopped = std::chrono::milliseconds(args.value("stopped_older_than_ms", 3600000LL));
  std::size_t removed = ctx.registry.cleanup(completed, stopped);
  co_return ToolResult{{{"removed", removed}, {"remaining", ctx.registry.list().size()}}};
}

}  // namespace

ToolDefinition make_cleanup_tool(const ToolConfig&) {
  json properties = {
      {"completed_older_than_ms",
       {{"type", "integer"},
        {"minimum", 0},
        {"maximum", 31536000000LL},
        {"description",
         "Remove completed records that ended longer ago than this (default 3600000; 0 = all)."}}},
      {"stopped_older_than_ms",
       {{"type", "integer"},
        {"minimum", 0},
        {"maximum", 31536000000LL},
        {"description",
         "Remove stopped, timed-out and failed records that ended longer ago than this (default "
         "3600000; 0 = all)."}}},
  };
  return ToolDefinition{
      "cleanup",
      "Prune ended executions",
      "Remove the records (and spooled output) of executions that have ended. Running executions "
      "are never "
      "removed. Removed execution_ids become unknown to read/wait/stop. Records are also pruned "
      "automatically "
      "after their retention time. Use it when ps lists many ended records you no longer need, or "
      "when execute is refused because the total output budget is spent. Read or explore an "
      "output you still need first: it goes with its record. Errors: only invalid arguments "
      "(thresholds must be 0 or more).",
      object_schema(properties),
      {{"type", "object"},
       {"properties",
        {{"removed", {{"type", "integer"}}},
         {"remaining", {{"type", "integer"}}},
         {"error", {{"type", "string"}}}}}},
      annotations(false, true, true, false),
      cleanup,
  };
}

}  // namespace agentty::mcp::tools
