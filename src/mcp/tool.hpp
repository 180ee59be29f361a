// The shape of an MCP tool: data (name, schemas, annotations, description)
// plus an async handler. One file per tool under src/mcp/tools/ exports a
// make_<name>_tool(); tool_table.cpp lists them.
//
// Handlers run as coroutines on the one I/O event loop. They get validated
// arguments (the server checks them against input_schema first) and return a
// structured result; a user mistake is a result with is_error and a message
// that names the argument and the fix.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "session/registry.hpp"

namespace agentty::session {
class Policy;
class AuditLog;
}  // namespace agentty::session

namespace agentty::mcp {

using json = nlohmann::json;

// Server-wide settings the tools read (from options and AGENTTY_* variables).
struct ToolConfig {
  std::uint32_t default_yield_ms = 30000;
  std::uint32_t max_yield_ms = 55000;
  std::uint64_t default_timeout_ms = 3600000;
  std::size_t default_max_output_bytes = 20000;
  std::size_t max_output_bytes = 1 << 20;  // server cap on one response
  std::uint32_t default_stop_grace_ms = 5000;
  std::string default_cwd;  // empty: the server's cwd
  std::string default_shell = "/bin/bash";
  std::filesystem::path state_dir;
  // The side-effect categories the operator blocked, named in execute's
  // schema so an agent plans around them rather than learns by refusal.
  std::vector<std::string> blocked_side_effects;
};

// A handoff's request to the person in the agent's MCP client (URL
// elicitation, see handoff_elicitations.hpp).
struct ClientHandoff {
  bool client_can_ask = false;  // the client declared URL elicitation
  // asked, accepted, declined, cancelled, failed; "" when none is open.
  std::string state;
};
// Said where an answer tells the agent to fetch a person (an SSH login held
// for one) and the client was asked already (handoff_in_client is set).
inline constexpr const char* kAskedInClientNote =
    "Your MCP client was asked to send them to terminal_url (handoff_in_client says what they "
    "answered).";

struct ToolContext {
  session::Registry& registry;
  const ToolConfig& config;
  session::Policy* policy = nullptr;  // null: no operator policy beyond validation
  session::AuditLog* audit = nullptr;
  std::function<std::string(const std::string& execution_id)> terminal_url;  // may be empty
  // Sends notifications/progress when the request carried a progress token.
  std::function<void(double progress, const std::string& message)> progress;
  std::function<ClientHandoff(const std::string& execution_id)> client_handoff;  // may be empty
};

struct ToolResult {
  json content;  // structuredContent (an object)
  bool is_error = false;
};

inline ToolResult tool_error(std::string message, json extra = json::object()) {
  extra["error"] = std::move(message);
  return ToolResult{std::move(extra), true};
}

struct ToolDefinition {
  std::string name;
  std::string title;
  std::string description;
  json input_schema;
  json output_schema;
  json annotations;
  std::function<boost::asio::awaitable<ToolResult>(ToolContext&, const json& args)> handler;
};

std::vector<ToolDefinition> make_tool_table(const ToolConfig& config);

// MCP resources (resources/list, resources/read, resources/templates/list):
// each execution's output and screen as text (see tools/resources.cpp).
struct ResourceHandlers {
  std::function<json(ToolContext&)> list;
  // The resources/read result, or why `uri` names no resource.
  std::function<Expected<json>(ToolContext&, const std::string& uri)> read;
  std::function<json()> templates;
};
ResourceHandlers make_resource_handlers();

}  // namespace agentty::mcp
