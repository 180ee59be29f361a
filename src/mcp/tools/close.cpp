// close: end a shell session: SIGHUP to its process group (the shell passes
// the hang-up on to its jobs), SIGKILL after a grace. Idempotent.
#include <csignal>

#include "mcp/tools/common.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

constexpr milliseconds kHangupGrace{2000};

boost::asio::awaitable<ToolResult> close(ToolContext& ctx, const json&,
                                         std::shared_ptr<session::Execution> execution) {
  if (execution->kind() != session::ExecutionKind::session) {
    co_return refusal(
        *execution, ctx,
        "execution_id: " + execution->id() + " is a command, not a session; " +
            (execution->finished() ? std::string("it has already ended (status ") +
                                         session::to_string(execution->status()) +
                                         "): nothing to close. cleanup removes ended records."
                                   : std::string("end it with stop.")),
        {{"closed", false}});
  }
  if (execution->finished()) {
    json result = merged(status_fields(*execution, ctx), {{"closed", true}});
    result["message"] = "The session had already ended (" +
                        session::to_string(execution->status()) + "); nothing to do.";
    co_return ToolResult{std::move(result)};
  }
  const json not_closed = {{"closed", false}};  // a named json: GCC rejects a braced one here
  if (auto early = co_await signal_and_wait(ctx, *execution, SIGHUP, kHangupGrace, not_closed))
    co_return std::move(*early);
  json result = merged(status_fields(*execution, ctx), {{"closed", execution->finished()}});
  if (!execution->finished())
    result["message"] =
        "The hang-up was sent (SIGKILL follows 2 s after it), but the shell has not ended yet; "
        "check with ps.";
  co_return ToolResult{std::move(result)};
}

}  // namespace

ToolDefinition make_close_tool(const ToolConfig&) {
  json output = status_output_properties();
  output["closed"] = {{"type", "boolean"},
                      {"description", "The session has ended (also true if it already had)."}};
  return ToolDefinition{
      "close",
      "Close a shell session",
      "End a shell session opened with open: hang-up (SIGHUP) to its process group, which also "
      "ends the jobs the "
      "shell started, then SIGKILL after 2 s. Returns closed=true once the shell is gone; closing "
      "an already ended "
      "session also returns closed=true (with a note), so it is safe to repeat. Its output stays "
      "readable until the "
      "record is cleaned up. Errors: held=true means a human has taken over and nothing was done: "
      "wait(until=\"released\") and retry; a command execution (not a session) is ended with stop "
      "instead; an "
      "unknown execution_id (ps lists them).",
      object_schema({{"execution_id", execution_id_input()}}, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(false, true, true, false),
      for_execution(close),
  };
}

}  // namespace agentty::mcp::tools
