// McpServer's tools/call: finding the tool, checking its arguments against
// its schema, running it as a coroutine that notifications/cancelled can
// stop, progress notifications while it runs, and the audit log's record of
// each call. (The rest of the protocol is in mcp_server.cpp.)
#include <spdlog/spdlog.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>

#include "mcp/mcp_server.hpp"
#include "mcp/message_salvage.hpp"
#include "mcp/peer_names.hpp"
#include "mcp/schema.hpp"
#include "mcp/tool_reply.hpp"

namespace agentty::mcp {

namespace {

// The tool's answer to `args`, or the error that stops it first: text that
// is not Unicode, arguments outside the schema, an exception (the server
// goes on). Null content: the call was cancelled.
boost::asio::awaitable<ToolResult> run_tool(const ToolDefinition& tool, ToolContext& ctx,
                                            const json& args, const std::string& invalid_text_at) {
  if (!invalid_text_at.empty()) co_return tool_error(invalid_text_problem(invalid_text_at));
  if (auto problem = validate(tool.input_schema, args)) {
    auto advised = with_peer_argument_advice(tool.name, std::move(*problem));
    co_return tool_error(
        with_peer_value_advice(tool.name, tool.input_schema, args, std::move(advised)));
  }
  try {
    co_return co_await tool.handler(ctx, args);
  } catch (const std::exception& e) {
    spdlog::error("tool {} failed: {}", tool.name, e.what());
    co_return tool_error(std::string("internal error: ") + e.what() +
                         ". The server is still running; retry or report this.");
  }
}

}  // namespace

const ToolDefinition* McpServer::find_tool(const std::string& name) const {
  auto tool = std::find_if(tools_.begin(), tools_.end(),
                           [&](const ToolDefinition& t) { return t.name == name; });
  return tool == tools_.end() ? nullptr : &*tool;
}

std::function<void(double, const std::string&)> McpServer::progress_sender(
    const json& params, std::shared_ptr<bool> responded) {
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return {};
  auto token = meta->find("progressToken");
  if (token == meta->end() || token->is_null()) return {};
  return [this, token = *token, responded = std::move(responded), alive = alive_](
             double progress, const std::string& message) {
    if (!*alive || *responded) return;  // no progress after the answer (or the server)
    send(make_notification(
        "notifications/progress",
        {{"progressToken", token}, {"progress", progress}, {"message", message}}));
  };
}

void McpServer::call_tool(Request request) {
  const json& params = request.params;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    answer_error(request.id, rpc_error::invalid_params,
                 "Invalid params: tools/call needs a string \"name\"");
    return;
  }
  const ToolDefinition* tool = find_tool(params["name"].get_ref<const std::string&>());
  if (!tool) {
    const auto& name = params["name"].get_ref<const std::string&>();
    auto advice = peer_tool_advice(name);
    answer_error(request.id, rpc_error::invalid_params,
                 "Unknown tool: " + name_for_message(name) + ". " +
                     (advice ? "agentty does this with " + *advice + ". " : "") +
                     "tools/list names the available tools.");
    return;
  }
  json args = params.contains("arguments") && !params["arguments"].is_null() ? params["arguments"]
                                                                             : json::object();
  std::string key = request.id.dump();
  if (in_flight_.size() >= kMaxCallsInFlight) {
    // Each call in progress holds a coroutine and its arguments: a client
    // that never waits for its answers must not grow the server without end.
    ToolResult refused = tool_error(
        "too many calls in progress (" + std::to_string(in_flight_.size()) +
        ", most likely waits); this call was not carried out. Wait for some to answer or cancel "
        "them (notifications/cancelled), then call again.");
    responses_.answer(request.id, tool_reply_line(request.id, refused.content, true));
    return;
  }
  auto signal = std::make_shared<boost::asio::cancellation_signal>();
  in_flight_.emplace(key, signal);

  auto responded = std::make_shared<bool>(false);
  ToolContext ctx = tool_context();
  ctx.progress = progress_sender(params, responded);

  auto run = [this, tool, ctx = std::move(ctx), args = std::move(args), id = request.id, key,
              responded, signal, alive = alive_,
              invalid_text_at =
                  std::move(request.invalid_text_at)]() mutable -> boost::asio::awaitable<void> {
    // A cancelled call stops where it waits (ChangeSignal answers
    // `cancelled`), not at whatever it awaits next: an exception thrown there
    // cut starts short midway and answered "internal error".
    co_await boost::asio::this_coro::throw_if_cancelled(false);
    ToolResult result = co_await run_tool(*tool, ctx, args, invalid_text_at);
    const bool cancelled = result.content.is_null();
    if (!*alive) co_return;
    *responded = true;
    in_flight_.erase(key);
    audit_call(tool->name, args, result);
    if (cancelled) {  // a cancelled request gets no response: the client gave up on it
      responses_.drop(id);
    } else {
      responses_.answer(id, tool_reply_line(id, result.content, result.is_error));
    }
  };
  boost::asio::co_spawn(
      io_, std::move(run),
      boost::asio::bind_cancellation_slot(signal->slot(), [](std::exception_ptr e) {
        if (e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& ex) {
            spdlog::error("tool call ended with an exception: {}", ex.what());
          }
        }
      }));
}

void McpServer::audit_call(const std::string& tool, const json& args, const ToolResult& result) {
  if (!hooks_.audit) return;
  const json& content = result.content;
  json record = {{"kind", "tool"}, {"tool", tool}};
  for (const char* key :
       {"execution_id", "purpose", "side_effects", "command", "argv", "session", "host", "signal"})
    if (args.is_object() && args.contains(key)) record[key] = args[key];
  if (args.is_object() && args.contains("script")) record["script"] = args["script"];
  if (content.is_object()) {
    for (const char* key : {"execution_id", "status", "exit_code", "held", "error", "wait_result"})
      if (content.contains(key)) record[key] = content[key];
    if (content.contains("output") && content["output"].is_string())
      record["bytes"] = content["output"].get_ref<const std::string&>().size();
  } else {
    record["status"] = "cancelled";
  }
  hooks_.audit(record);
}

}  // namespace agentty::mcp
