#include "mcp/mcp_server.hpp"

#include <spdlog/spdlog.h>

#include <array>

#include "agentty_version.hpp"
#include "mcp/message_salvage.hpp"
#include "mcp/schema.hpp"

namespace agentty::mcp {

namespace {

constexpr std::array kSupportedVersions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
constexpr std::array kLogLevels = {"debug", "info",     "notice", "warning",
                                   "error", "critical", "alert",  "emergency"};

int level_index(const std::string& level) {
  for (std::size_t i = 0; i < kLogLevels.size(); ++i)
    if (level == kLogLevels[i]) return static_cast<int>(i);
  return -1;
}

// What an MCP client shows its model about this server as a whole: which
// tool for which job, and the few rules that are not visible in one schema.
constexpr const char* kInstructions =
    "agentty runs commands under real terminals (PTYs), locally or on an SSH `host`. Use "
    "`execute` for commands: short ones answer inline, long ones continue in the background "
    "with an execution_id, and one that waits for input (a prompt, a REPL) returns at once "
    "with waiting_for_input=true. Follow them with `read`/`wait` (until exit, idle, a "
    "pattern, or input), answer prompts and drive REPLs with `write` (input, keys such as "
    "ctrl-c, eof), look at full-screen programs with `screen`, end them with `stop`, list "
    "them with `ps` (`cleanup` prunes ended ones), search a big output with `explore` instead "
    "of paging it. For several commands that share state (cd, environment, a virtualenv), "
    "`open` a shell session, run execute(session=ID) in it and `close` it when done. For a "
    "password or 2FA prompt, `handoff` to a person, who types it in the browser. Every "
    "execution can be watched and taken over by a human in the browser (terminal_url; not when "
    "agentty runs with --no-web); while held=true your writes are refused: "
    "wait(until=\"released\").";

// params[key] when it is a string. json::value() throws on a value of
// another type, and a throw here ended agentty (`"level": 5`).
std::string string_param(const json& params, const char* key) {
  if (!params.is_object()) return "";
  auto it = params.find(key);
  return it != params.end() && it->is_string() ? it->get<std::string>() : "";
}

// The list methods MCP paginates that agentty answers.
bool is_list_method(const std::string& method) {
  return method == "tools/list" || method == "resources/list" ||
         method == "resources/templates/list";
}

bool has_cursor(const json& params) {
  if (!params.is_object()) return false;
  auto cursor = params.find("cursor");
  return cursor != params.end() && !cursor->is_null();
}

json annotations_with_title(const ToolDefinition& tool) {
  json out = tool.annotations;
  out["title"] = tool.title;
  return out;
}

}  // namespace

bool is_supported_protocol_version(const std::string& version) {
  for (const char* v : kSupportedVersions)
    if (version == v) return true;
  return false;
}

McpServer::McpServer(boost::asio::io_context& io, session::Registry& registry, ToolConfig config,
                     session::Policy* policy, Hooks hooks)
    : io_(io),
      registry_(registry),
      config_(std::move(config)),
      policy_(policy),
      hooks_(std::move(hooks)),
      tools_(make_tool_table(config_)),
      resources_(make_resource_handlers()),
      responses_([this](std::string line) {
        if (hooks_.send) hooks_.send(std::move(line));
      }),
      client_requests_([this](const json& message) { send(message); }),
      handoff_elicitations_(
          registry_, client_requests_, [this](const json& message) { send(message); },
          hooks_.terminal_url, hooks_.audit) {}

McpServer::~McpServer() {
  *alive_ = false;
  for (auto& [id, signal] : in_flight_) signal->emit(boost::asio::cancellation_type::terminal);
}

void McpServer::send(const json& message) {
  if (hooks_.send) hooks_.send(serialize(message));
}

void McpServer::answer_result(const json& id, json result) {
  responses_.answer(id, serialize(make_result(id, std::move(result))));
}

void McpServer::answer_error(const json& id, int code, const std::string& message) {
  responses_.answer(id, serialize(make_error(id, code, message)));
}

void McpServer::reject(const json& id, int code, const std::string& message) {
  responses_.respond(id, nullptr, serialize(make_error(id, code, message)));
}

void McpServer::log(const std::string& level, const std::string& message) {
  int index = level_index(level);
  if (index < log_level_) return;
  send(make_notification("notifications/message",
                         {{"level", level}, {"logger", "agentty"}, {"data", message}}));
}

void McpServer::handle_line(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank keep-alive lines
  auto parsed = parse_line(line);
  if (parsed.is_batch) {
    handle_batch(std::move(parsed.messages));
  } else {
    handle_message(std::move(parsed.messages.front()), nullptr);
  }
}

void McpServer::handle_batch(std::vector<Message> messages) {
  if (protocol_version_ != kBatchProtocolVersion) {
    const std::string session =
        protocol_version_.empty()
            ? "this session has not been initialized (initialize is never part of a batch)"
            : "this session speaks MCP " + protocol_version_ + ", which has none";
    responses_.respond(
        nullptr, nullptr,
        serialize(make_error(nullptr, rpc_error::invalid_request,
                             "Invalid Request: a JSON-RPC batch, and only MCP " +
                                 std::string(kBatchProtocolVersion) + " has batches; " + session +
                                 ". Nothing in it was carried out; send each message on a line "
                                 "of its own.")));
    return;
  }
  const auto batch = responses_.open_batch();
  for (auto& message : messages) handle_message(std::move(message), batch);
  responses_.close_batch(batch);
}

void McpServer::handle_message(Message message, const ResponseFunnel::BatchHandle& batch) {
  if (auto* request = std::get_if<Request>(&message)) {
    handle_request(std::move(*request), batch);
  } else if (auto* notification = std::get_if<Notification>(&message)) {
    try {
      handle_notification(*notification);
    } catch (const std::exception& e) {
      spdlog::error("{} failed: {}", notification->method, e.what());
    }
  } else if (auto* error = std::get_if<ErrorReply>(&message)) {
    responses_.respond(error->id, batch,
                       serialize(make_error(error->id, error->code, error->message)));
  } else if (auto* response = std::get_if<Response>(&message)) {
    client_requests_.on_response(*response);  // an answer to a request of ours
  }
}

json McpServer::initialize(const json& params) {
  // Only URL mode: a form would carry the password through the client.
  const json capabilities = params.is_object() ? params.value("capabilities", json()) : json();
  const json elicitation =
      capabilities.is_object() ? capabilities.value("elicitation", json()) : json();
  // Asked from notifications/initialized on: MCP's lifecycle says a server
  // SHOULD NOT send requests (other than ping) before it.
  client_takes_url_elicitation_ =
      elicitation.is_object() && elicitation.contains("url") && elicitation["url"].is_object();
  handoff_elicitations_.set_client_can_ask(false);
  std::string requested = string_param(params, "protocolVersion");
  std::string version =
      is_supported_protocol_version(requested) ? requested : kLatestProtocolVersion;
  protocol_version_ = version;
  return {
      {"protocolVersion", version},
      {"capabilities",
       {{"tools", {{"listChanged", false}}},
        {"resources", {{"listChanged", false}, {"subscribe", false}}},
        {"logging", json::object()}}},
      {"serverInfo",
       {{"name", "agentty"}, {"title", "agentty terminal sessions"}, {"version", AGENTTY_VERSION}}},
      {"instructions", kInstructions},
  };
}

json McpServer::list_tools() const {
  json list = json::array();
  for (const auto& tool : tools_) {
    list.push_back({{"name", tool.name},
                    {"title", tool.title},
                    {"description", tool.description},
                    {"inputSchema", tool.input_schema},
                    {"outputSchema", tool.output_schema},
                    {"annotations", annotations_with_title(tool)}});
  }
  return {{"tools", list}};
}

void McpServer::handle_request(Request request, const ResponseFunnel::BatchHandle& batch) {
  if (responses_.unanswered(request.id)) {
    responses_.respond(
        request.id, batch,
        serialize(make_error(
            request.id, rpc_error::invalid_request,
            "Invalid Request: id " + request.id.dump() +
                " is the id of a request still in progress (its answer has not been sent "
                "yet); each request needs an id of its own (MCP never reuses one in a "
                "session). This " +
                request.method +
                " was not carried out; this answer comes after the earlier request's, so answers "
                "arrive in the order the requests were sent. Send it again with a new id.")));
    return;
  }
  responses_.begin(request.id, batch);
  if (batch && request.method == "initialize") {
    answer_error(request.id, rpc_error::invalid_request,
                 "Invalid Request: initialize is never part of a batch (MCP "
                 "2025-03-26); this session is initialized already. Send an "
                 "initialize on a line of its own.");
    return;
  }
  // A message is the client's data: a field of a type nobody checked must
  // cost that request an error, not end the server (an exception here
  // leaves the loop and terminates agentty with every program it runs).
  const json id = request.id;
  const std::string method = request.method;
  try {
    dispatch_request(std::move(request));
  } catch (const std::exception& e) {
    spdlog::error("{} failed: {}", method, e.what());
    answer_error(id, rpc_error::internal_error,
                 "Internal error: " + method + " failed (" + e.what() +
                     "); the server is still running. Check the request's params "
                     "against the MCP schema and retry.");
  }
}

void McpServer::dispatch_request(Request request) {
  const std::string& method = request.method;
  if (protocol_version_.empty() && method != "initialize" && method != "ping") {
    answer_error(request.id, rpc_error::invalid_request,
                 "Invalid Request: " + method +
                     " before initialize; an MCP session begins with "
                     "initialize (only ping may come before it). Nothing was "
                     "done: send initialize, then this again.");
    return;
  }
  if (is_list_method(method) && has_cursor(request.params)) {
    answer_error(request.id, rpc_error::invalid_params,
                 "Invalid params: cursor: agentty lists everything in one page "
                 "and never gives a nextCursor, so this cursor is not one of "
                 "its own; list again without a cursor.");
    return;
  }
  if (!request.invalid_text_at.empty() && method != "tools/call") {
    answer_error(request.id, rpc_error::invalid_params,
                 "Invalid params: " + invalid_text_problem(request.invalid_text_at));
    return;
  }
  if (method == "initialize") {
    answer_result(request.id, initialize(request.params));
  } else if (method == "ping") {
    answer_result(request.id, json::object());
  } else if (method == "tools/list") {
    answer_result(request.id, list_tools());
  } else if (method == "tools/call") {
    call_tool(std::move(request));
  } else if (method == "logging/setLevel") {
    int index = level_index(string_param(request.params, "level"));
    if (index < 0) {
      answer_error(request.id, rpc_error::invalid_params,
                   "level: must be one of debug, info, notice, warning, error, "
                   "critical, alert, emergency");
      return;
    }
    log_level_ = index;
    answer_result(request.id, json::object());
  } else if (method.starts_with("resources/")) {
    handle_resources(request);
  } else if (method == "prompts/list") {
    answer_error(request.id, rpc_error::method_not_found,
                 "Method not found: " + method + " (agentty offers tools and resources)");
  } else {
    // A notification sent with an id is a request: say so, or "not found"
    // reads as if agentty did not know notifications/cancelled.
    const bool notification = method.starts_with("notifications/");
    answer_error(request.id, rpc_error::method_not_found,
                 "Method not found: " + method +
                     (notification ? " as a request (it has an id); send notifications "
                                     "without an id, and they get no answer"
                                   : ""));
  }
}

ToolContext McpServer::tool_context() {
  ToolContext ctx{registry_, config_, policy_, nullptr, hooks_.terminal_url, {}, {}};
  ctx.client_handoff = [this](const std::string& execution_id) {
    return ClientHandoff{handoff_elicitations_.client_can_ask(),
                         handoff_elicitations_.state(execution_id)};
  };
  return ctx;
}

void McpServer::handle_resources(const Request& request) {
  ToolContext ctx = tool_context();
  const std::string& method = request.method;
  if (method == "resources/list") {
    answer_result(request.id, resources_.list(ctx));
  } else if (method == "resources/templates/list") {
    answer_result(request.id, resources_.templates());
  } else if (method == "resources/read") {
    const json& params = request.params;
    if (!params.is_object() || !params.contains("uri") || !params["uri"].is_string()) {
      answer_error(request.id, rpc_error::invalid_params,
                   "Invalid params: resources/read needs a string \"uri\" "
                   "(agentty://executions/ID/output or .../screen)");
      return;
    }
    auto contents = resources_.read(ctx, params["uri"].get<std::string>());
    if (!contents) {
      answer_error(request.id, rpc_error::resource_not_found, contents.error());
      return;
    }
    if (hooks_.audit) {
      hooks_.audit({{"kind", "resource"}, {"method", method}, {"uri", params["uri"]}});
    }
    answer_result(request.id, std::move(*contents));
  } else {
    answer_error(request.id, rpc_error::method_not_found,
                 "Method not found: " + method +
                     " (agentty answers resources/list, resources/read and "
                     "resources/templates/list; there are no subscriptions)");
  }
}

void McpServer::handle_notification(const Notification& notification) {
  if (notification.method == "notifications/cancelled" && notification.params.is_object()) {
    auto id = notification.params.find("requestId");
    if (id == notification.params.end()) return;
    auto it = in_flight_.find(id->dump());
    if (it == in_flight_.end()) return;  // unknown or finished: ignored, as MCP says
    // MCP: cancellation reasons SHOULD be logged, for debugging.
    const std::string reason = string_param(notification.params, "reason");
    spdlog::info("the client cancelled request {}{}", it->first,
                 reason.empty() ? "" : ": " + name_for_message(reason));
    it->second->emit(boost::asio::cancellation_type::terminal);
  }
  if (notification.method == "notifications/initialized")
    handoff_elicitations_.set_client_can_ask(client_takes_url_elicitation_);
  // Others need no action.
}

}  // namespace agentty::mcp
