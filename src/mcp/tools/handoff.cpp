// handoff: ask a person to take over an execution (a password, a 2FA code, a
// judgement). The dashboard highlights it; wait(until="released") returns
// when the person hands it back.
#include "mcp/tools/common.hpp"

namespace agentty::mcp::tools {

namespace {

boost::asio::awaitable<ToolResult> handoff(ToolContext& ctx, const json& args,
                                           std::shared_ptr<session::Execution> execution) {
  if (execution->finished()) {
    co_return refusal(
        *execution, ctx,
        "execution_id: this execution has ended; there is nothing to hand over. Start a new one.");
  }
  execution->request_handoff(args["reason"].get<std::string>());
  json result = status_fields(*execution, ctx);
  result["requested"] = true;
  result["message"] =
      "A person can now take over from the dashboard or terminal_url. Call wait with "
      "until=\"released\" to continue when they hand it back.";
  co_return ToolResult{std::move(result)};
}

}  // namespace

ToolDefinition make_handoff_tool(const ToolConfig&) {
  json properties = {
      {"execution_id", execution_id_input()},
      {"reason",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", 2000},
        {"description",
         "What the person should do, e.g. \"Enter the sudo password\" or \"Approve the deploy "
         "prompt\"."}}},
  };
  json output = status_output_properties();
  output["requested"] = {{"type", "boolean"}};
  return ToolDefinition{
      "handoff",
      "Ask a person to take over",
      "Ask a human to take over a running execution when it needs something you must not or cannot "
      "provide: a "
      "password, a 2FA code, a confirmation, a judgement. The reason is shown on the dashboard and "
      "the execution is "
      "highlighted; give the person terminal_url. Then call wait(until=\"released\") to continue "
      "once they hand it "
      "back (held=true while they type; your writes are refused meanwhile). Errors: the execution "
      "has ended; "
      "unknown execution_id.",
      object_schema(properties, {"execution_id", "reason"}),
      {{"type", "object"}, {"properties", output}},
      annotations(false, false, true, true),
      for_execution(handoff),
  };
}

}  // namespace agentty::mcp::tools
