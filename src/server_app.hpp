// Wiring of one agentty server process: the I/O loop, the registry, the
// policy, the audit log, the web server and (for `agentty mcp`) the MCP stdio
// transport. main.cpp parses options into AppOptions and calls one of these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mcp/tool.hpp"
#include "session/registry.hpp"
#include "web/web_options.hpp"

namespace agentty {

struct AppOptions {
  mcp::ToolConfig tools;
  session::RegistryOptions registry;
  std::string web_listen = "127.0.0.1:7681";
  bool web_enabled = true;
  std::string web_token;  // empty: random per start
  // Output faster than this reaches web viewers as snapshots (web::WebOptions).
  std::size_t web_stream_rate = web::WebOptions{}.stream_rate_bytes;
  std::string audit_log;  // empty: state_dir/audit.jsonl
  std::size_t max_request_bytes = 4 << 20;
  std::uint32_t shutdown_grace_ms = 2000;
  // The arguments serve tells an MCP client to start agentty with: "mcp",
  // plus --state-dir when it is not the default, so the dashboard lists it.
  std::vector<std::string> mcp_args = {"mcp"};
};

// `agentty mcp`: MCP over stdio until stdin closes or SIGTERM/SIGINT.
int run_mcp_server(AppOptions options);
// `agentty serve`: the web dashboard only, until SIGTERM/SIGINT.
int run_web_only(AppOptions options);

}  // namespace agentty
