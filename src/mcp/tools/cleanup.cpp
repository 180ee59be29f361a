// cleanup: prune terminal execution records.
#include <malloc.h>

#include <algorithm>

#include "mcp/tools/common.hpp"

namespace agentty::mcp::tools {

namespace {

boost::asio::awaitable<ToolResult> cleanup(ToolContext& ctx, const json& args) {
  auto completed = std::chrono::milliseconds(args.value("completed_older_than_ms", 3600000LL));
  auto stopped = std::chrono::milliseconds(args.value("stopped_older_than_ms", 3600000LL));
  std::size_t removed = ctx.registry.cleanup(completed, stopped);
  // The records' memory is free now, but glibc keeps a fragmented heap's
  // free pages counted as ours: after 40 parallel outputs RSS stayed at
  // 83 MB against 13 MB before. Handing them back walks the heap (~0.1 s on
  // the loop for ~100 MB, well under 1 ms for a small one), so only here,
  // where the agent asked for room, not at every automatic prune.
  if (removed > 0) ::malloc_trim(0);
  const auto remaining = ctx.registry.list();
  json result = {{"removed", removed}, {"remaining", remaining.size()}};
  // The thresholds' default keeps the last hour: a bare cleanup often removes
  // nothing, which looks like a fault without this.
  const auto ended = std::count_if(remaining.begin(), remaining.end(),
                                   [](const auto& execution) { return execution->finished(); });
  if (ended > 0) {
    result["message"] =
        std::to_string(ended) +
        (ended == 1 ? " ended record is kept: it ended" : " ended records are kept: they ended") +
        " more recently than the thresholds" +
        (args.contains("completed_older_than_ms") || args.contains("stopped_older_than_ms")
             ? std::string(" given (a threshold left out is 1 h).")
             : std::string(" (1 h when none is given).")) +
        " completed_older_than_ms=0 and stopped_older_than_ms=0 remove every ended record.";
  }
  co_return ToolResult{std::move(result)};
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
         {"message", {{"type", "string"}}},
         {"error", {{"type", "string"}}}}}},
      annotations(false, true, true, false),
      cleanup,
  };
}

}  // namespace agentty::mcp::tools
