// write: type into the PTY (text, keys, EOF, session actions), then return
// what the program printed back.
#include "mcp/tools/common.hpp"
#include "mcp/tools/session_execute.hpp"
#include "session/key_encoder.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

constexpr milliseconds kQuietAfterReply{150};

Expected<std::string> compose_input(session::Execution& execution, const json& args) {
  std::string bytes = args.value("input", "");
  if (args.value("newline", false)) bytes += "\r";
  if (args.contains("keys")) {
    auto modes = execution.screen_modes();
    for (const auto& key : args["keys"]) {
      auto encoded = session::encode_key(key.get<std::string>(), modes);
      if (!encoded) return make_error("keys: unknown key '" + key.get<std::string>() + "'");
      bytes += *encoded;
    }
  }
  if (args.value("eof", false)) bytes += "\x04";
  return bytes;
}

boost::asio::awaitable<ToolResult> write(ToolContext& ctx, const json& args,
                                         std::shared_ptr<session::Execution> execution) {
  if (!args.contains("input") && !args.contains("keys") && !args.value("eof", false) &&
      !args.contains("action")) {
    co_return tool_error("input: give input, keys, eof or action (nothing to write)");
  }
  if (args.contains("action")) co_return co_await session_action(ctx, *execution, args);
  auto bytes = compose_input(*execution, args);
  if (!bytes) co_return tool_error(bytes.error());
  auto written = execution->write(*bytes, session::InputSource::agent);
  if (!written) {
    co_return refusal(*execution, ctx, written.error(), {{"ok", false}});
  }
  // Return what the program printed in reply: until output has been quiet for
  // a moment after something arrived, the program waits for input again, or it ends.
  auto before = execution->log().latest_seq();
  auto sent_at = steady_clock::now();
  auto deadline = sent_at + milliseconds(effective_yield(ctx, args, 2000));
  auto settled = [&] {
    if (execution->finished()) return true;
    auto quiet = execution->idle().value_or(milliseconds::max());
    bool replied = execution->log().latest_seq() > before;
    if (replied && quiet >= kQuietAfterReply) return true;
    return steady_clock::now() - sent_at >= kQuietAfterReply && execution->waiting_for_input() &&
           quiet >= kQuietAfterReply;
  };
  auto end = co_await wait_until(ctx, *execution, deadline, settled, milliseconds(50));
  if (end == WaitEnd::cancelled) co_return ToolResult{};
  json result = execution_result(*execution, ctx, read_request(ctx, args));
  result["ok"] = true;
  co_return ToolResult{std::move(result)};
}

}  // namespace

ToolDefinition make_write_tool(const ToolConfig& config) {
  json properties = merged(
      {
          {"execution_id", execution_id_input()},
          {"input", {{"type", "string"}, {"maxLength", 1 << 20}, {"description", "Text to type."}}},
          {"newline",
           {{"type", "boolean"}, {"description", "Press Enter after input (default false)."}}},
          {"keys",
           {{"type", "array"},
            {"maxItems", 256},
            {"items", {{"type", "string"}, {"enum", session::key_names()}}},
            {"description",
             "Keys pressed after input, in order, encoded as a real terminal would (e.g. "
             "[\"ctrl-c\"], [\"up\", \"enter\"])."}}},
          {"eof",
           {{"type", "boolean"},
            {"description", "Send end-of-file (ctrl-d) last; it is seen at the start of a line."}}},
          {"action",
           {{"type", "string"},
            {"enum", {"rearm", "flush"}},
            {"description",
             "Sessions only. rearm: re-inject the prompt hook after switching into a new shell; "
             "flush: drop typed-ahead input and clear the line."}}},
          {"yield_ms",
           {{"type", "integer"},
            {"minimum", 0},
            {"maximum", 55000},
            {"description",
             "Longest wait for the reply (default 2000); returns earlier once output goes "
             "quiet."}}},
      },
      read_inputs(config));
  json output = merged(status_output_properties(), read_output_properties());
  output["ok"] = {{"type", "boolean"}, {"description", "True when the input was written."}};
  return ToolDefinition{
      "write",
      "Type into a terminal",
      "Type into a running execution's terminal and return what the program printed in reply "
      "(waits until the "
      "output goes quiet, the program waits for input again, or yield_ms). Use it to answer "
      "prompts, drive REPLs "
      "(python3, psql), press keys (`keys`: ctrl-c to interrupt, arrows, tab, f1..f12) or send "
      "end-of-file (`eof`). "
      "Input is echoed as on a terminal. Errors: held=true means a human has taken over and "
      "nothing was written: "
      "wait(until=\"released\") and retry; an ended execution cannot be written to (start a new "
      "one).",
      object_schema(properties, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(false, true, false, true),
      for_execution(write),
  };
}

}  // namespace agentty::mcp::tools
