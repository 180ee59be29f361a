// handoff: ask a person to take over an execution (a password, a 2FA code, a
// judgement). The dashboard highlights it, and a client that takes URL
// elicitation shows the person terminal_url (handoff_elicitations.hpp);
// wait(until="released") returns when the person hands it back.
#include "mcp/tools/common.hpp"

namespace agentty::mcp::tools {

namespace {

// What became of the request to the person in the agent's own MCP client.
std::string client_sentence(const ClientHandoff& asked) {
  if (asked.state == "asked")
    return "Your MCP client was asked to show the person this reason and terminal_url "
           "(asked_in_client); handoff_in_client says what they answered there. ";
  if (asked.state == "declined" || asked.state == "cancelled")
    return "The person already " + asked.state +
           " this handoff in your MCP client (handoff_in_client); tell them another way. ";
  if (asked.state == "failed")
    return "Your MCP client refused to ask the person (handoff_in_client); give them "
           "terminal_url. ";
  if (!asked.state.empty()) return "";  // accepted: they are on their way
  if (asked.client_can_ask)
    return "Your MCP client was not asked: there is no terminal_url (the web server is off). ";
  return "Give the person terminal_url. ";
}

// handoff(withdraw: true): the agent found another way; the dashboard stops
// highlighting the execution and a wait(until="released") no longer waits
// for a person.
ToolResult withdraw(ToolContext& ctx, session::Execution& execution, const json& args) {
  if (args.contains("reason"))
    return tool_error("reason: does not apply with withdraw: true; remove one of them.");
  const bool pending = execution.handoff_reason().has_value();
  const bool asked_in_client =
      ctx.client_handoff && !ctx.client_handoff(execution.id()).state.empty();
  if (!execution.withdraw_handoff()) {
    return refusal(execution, ctx,
                   execution.held()
                       ? "withdraw: a person holds it now; they hand it back from the terminal "
                         "page (wait with until=\"released\")."
                       : "withdraw: the request is the SSH login's, not yours: it ends when the "
                         "login does (or stop the execution).",
                   {{"requested", true}});
  }
  json result = status_fields(execution, ctx);
  result["requested"] = false;
  result["message"] = pending ? "Withdrawn: the dashboard no longer asks anyone to take over."
                              : "There was no handoff to withdraw; nothing changed.";
  // The withdrawal ends it there too (notifications/elicitation/complete).
  if (pending && asked_in_client)
    append_message(result,
                   "Your MCP client was told the request is over; tell the person if they "
                   "already set out.");
  return ToolResult{std::move(result)};
}

boost::asio::awaitable<ToolResult> handoff(ToolContext& ctx, const json& args,
                                           std::shared_ptr<session::Execution> execution) {
  if (execution->finished()) {
    co_return refusal(
        *execution, ctx,
        "execution_id: this execution has ended; there is nothing to hand over. Start a new one.");
  }
  if (args.value("withdraw", false)) co_return withdraw(ctx, *execution, args);
  if (!args.contains("reason")) {
    co_return tool_error(
        "reason: required: what the person should do (e.g. \"Enter the sudo password\"); or "
        "withdraw: true to take back a request.");
  }
  execution->request_handoff(args["reason"].get<std::string>());
  json result = status_fields(*execution, ctx);
  result["requested"] = true;
  const ClientHandoff asked =
      ctx.client_handoff ? ctx.client_handoff(execution->id()) : ClientHandoff{};
  result["asked_in_client"] = !asked.state.empty();
  if (!ctx.terminal_url || ctx.terminal_url(execution->id()).empty()) {
    // --no-web: no dashboard, no terminal page, nothing `agentty attach` can
    // reach, so "take over from the dashboard" named a way that is not there.
    result["message"] =
        "Recorded, but nobody can take over: agentty runs without its web server (--no-web), so "
        "there is no dashboard or terminal_url (nor `agentty attach`) to do it from. " +
        (asked.client_can_ask ? client_sentence(asked) : std::string()) +
        "Ask the person yourself and answer the program with write, or end it with stop; "
        "wait(until=\"released\") would only wait out its timeout.";
    co_return ToolResult{std::move(result)};
  }
  result["message"] = "A person can now take over from the dashboard or terminal_url. " +
                      client_sentence(asked) +
                      "Call wait with until=\"released\" to continue when they hand it back.";
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
         "prompt\". Required unless withdraw."}}},
      {"withdraw",
       {{"type", "boolean"},
        {"description",
         "true: take back a request nobody has taken over yet (you found another way); the "
         "dashboard stops highlighting it."}}},
  };
  json output = status_output_properties();
  output["requested"] = {{"type", "boolean"}};
  output["asked_in_client"] = {
      {"type", "boolean"},
      {"description",
       "Your MCP client was asked to show the person the reason and terminal_url (URL "
       "elicitation); handoff_in_client then says what they answered."}};
  return ToolDefinition{
      "handoff",
      "Ask a person to take over",
      "Ask a human to take over a running execution when it needs something you must not or "
      "cannot provide: a password, a 2FA code, a confirmation, a judgement. The reason is shown "
      "on the dashboard and the execution is highlighted; a client that supports URL elicitation "
      "also shows the person terminal_url (asked_in_client), else give it to them. Then call "
      "wait(until=\"released\") to continue once they hand it back (held=true while they type; "
      "your writes are refused meanwhile; wait_result=declined if they declined in the client). "
      "Without the web server (--no-web) nobody can take over: the answer says so. "
      "withdraw: true takes the request back when you no longer need the person. "
      "Errors: the execution has ended; unknown execution_id.",
      object_schema(properties, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(false, false, true, true),
      for_execution(handoff),
  };
}

}  // namespace agentty::mcp::tools
