// Pieces every execution tool shares: looking up an execution, the cursor
// read fields, the status fields, schema fragments, and the event-driven
// wait loop.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "mcp/tool.hpp"

namespace agentty::mcp::tools {

// --- schema fragments -------------------------------------------------------
json execution_id_input();
// since_seq, tail_lines, max_output_bytes, format
json read_inputs(const ToolConfig& config);
// Properties every output-bearing result has (output, cursor fields, status...).
json read_output_properties();
// cols and rows of a new terminal (execute, open).
json terminal_size_inputs();
json status_output_properties();
json object_schema(json properties, std::vector<std::string> required = {});
json annotations(bool read_only, bool destructive, bool idempotent, bool open_world);
// Merges property maps.
json merged(json a, const json& b);

// --- lookups -----------------------------------------------------------------
std::shared_ptr<session::Execution> find_execution(ToolContext& ctx, const json& args,
                                                   ToolResult& error);

// --- results -----------------------------------------------------------------
struct ReadRequest {
  std::optional<std::uint64_t> since_seq;
  std::optional<std::size_t> tail_lines;
  std::size_t max_bytes = 20000;
  bool raw = false;
};
ReadRequest read_request(const ToolContext& ctx, const json& args);
// Output + cursor fields (+ hint); advances the server-side cursor when the
// request is cursorless.
json read_fields(session::Execution& execution, const ReadRequest& request);
// status, exit_code, signal, held, waiting_for_input, process_id, terminal_url...
json status_fields(session::Execution& execution, const ToolContext& ctx);
// Both of the above.
json execution_result(session::Execution& execution, const ToolContext& ctx,
                      const ReadRequest& request);

// --- waiting -----------------------------------------------------------------
enum class WaitEnd { condition, deadline, cancelled };
// Re-checks `done` after every change of the execution (and at least every
// `recheck`, for conditions no event announces), until it holds or the
// deadline passes. Sends progress about once a second.
boost::asio::awaitable<WaitEnd> wait_until(
    ToolContext& ctx, session::Execution& execution, std::chrono::steady_clock::time_point deadline,
    const std::function<bool()>& done,
    std::chrono::milliseconds recheck = std::chrono::milliseconds(0));

std::uint32_t effective_yield(const ToolContext& ctx, const json& args, std::uint32_t fallback);

}  // namespace agentty::mcp::tools
