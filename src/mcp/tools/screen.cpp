// screen: what the terminal shows now (libvterm model).
#include "mcp/tools/common.hpp"

namespace agentty::mcp::tools {

namespace {

boost::asio::awaitable<ToolResult> screen(ToolContext& ctx, const json& args,
                                          std::shared_ptr<session::Execution> execution) {
  // An ended flood's last output may still be going through the screen
  // model, at the loop's pace: wait for it rather than do it all at once.
  if (execution->screen_settling()) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(ctx.config.max_yield_ms);
    auto end = co_await wait_until(ctx, *execution, deadline,
                                   [&] { return !execution->screen_settling(); });
    if (end == WaitEnd::cancelled) co_return ToolResult{};
  }
  auto snapshot = execution->screen().snapshot(args.value("scrollback_lines", 0));
  json result = status_fields(*execution, ctx);
  result["cols"] = snapshot.cols;
  result["rows"] = snapshot.rows;
  result["lines"] = snapshot.lines;
  result["scrollback"] = snapshot.scrollback;
  result["cursor"] = {{"row", snapshot.cursor.row},
                      {"col", snapshot.cursor.col},
                      {"visible", snapshot.cursor.visible}};
  result["alt_screen"] = snapshot.modes.alt_screen;
  result["title"] = snapshot.title;
  if (args.value("attributes", false)) result["styled_lines"] = execution->screen().styled_lines();
  co_return ToolResult{std::move(result)};
}

}  // namespace

ToolDefinition make_screen_tool(const ToolConfig&) {
  json properties = {
      {"execution_id", execution_id_input()},
      {"scrollback_lines",
       {{"type", "integer"},
        {"minimum", 0},
        {"maximum", 10000},
        {"description",
         "Also return up to this many lines that scrolled off the top (default 0). The newest "
         "10000 are kept, at most 1 MiB of them with their colours."}}},
      {"attributes",
       {{"type", "boolean"},
        {"description",
         "Also return styled_lines: the rows with SGR escape sequences for bold, underline, "
         "reverse video and colours, as tmux capture-pane -e shows them (default false). Use it "
         "when the text alone does not say which item is selected or what is highlighted."}}},
  };
  json output = status_output_properties();
  output["cols"] = {{"type", "integer"}};
  output["rows"] = {{"type", "integer"}};
  output["lines"] = {{"type", "array"},
                     {"items", {{"type", "string"}}},
                     {"description", "Visible rows, top to bottom, trailing blanks trimmed."}};
  output["scrollback"] = {{"type", "array"}, {"items", {{"type", "string"}}}};
  output["styled_lines"] = {
      {"type", "array"},
      {"items", {{"type", "string"}}},
      {"description",
       "With attributes: true, the visible rows with SGR sequences (ESC[0;7m reverse video, "
       "ESC[0;1;31m bold red, ESC[0;38;5;Nm / 38;2;R;G;Bm 256 and RGB colours; ESC[0m back to "
       "plain) where the look changes."}};
  output["cursor"] = {{"type", "object"},
                      {"properties",
                       {{"row", {{"type", "integer"}}},
                        {"col", {{"type", "integer"}}},
                        {"visible", {{"type", "boolean"}}}}}};
  output["alt_screen"] = {{"type", "boolean"},
                          {"description", "A full-screen program (vim, less, top) is drawing."}};
  output["title"] = {{"type", "string"}};
  return ToolDefinition{
      "screen",
      "Show the terminal screen",
      "Return what a person would see on the execution's terminal right now: the visible rows as "
      "text, the cursor "
      "position, whether a full-screen program is active (alt_screen), and the window title. Use "
      "it for full-screen "
      "and interactive programs (vim, less, top, menus, prompts drawn with cursor movement) where "
      "the output stream "
      "is hard to read; use read for line-oriented output. With attributes: true it also returns "
      "styled_lines (the rows with SGR: bold, reverse video, colours), which show a menu's "
      "selected "
      "item or a highlighted match. Works on ended executions too (the last screen). Errors: an "
      "unknown execution_id (use the id from execute/open; ps lists them).",
      object_schema(properties, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(true, false, true, false),
      for_execution(screen),
  };
}

}  // namespace agentty::mcp::tools
