// screen: what the terminal shows now (libvterm model).
#include "mcp/tools/common.hpp"

namespace agentty::mcp::tools {

namespace {

boost::asio::awaitable<ToolResult> screen(ToolContext& ctx, const json& args,
                                          std::shared_ptr<session::Execution> execution) {
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
         "Also return up to this many lines that scrolled off the top (default 0)."}}},
  };
  json output = status_output_properties();
  output["cols"] = {{"type", "integer"}};
  output["rows"] = {{"type", "integer"}};
  output["lines"] = {{"type", "array"},
                     {"items", {{"type", "string"}}},
                     {"description", "Visible rows, top to bottom, trailing blanks trimmed."}};
  output["scrollback"] = {{"type", "array"}, {"items", {{"type", "string"}}}};
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
      "is hard to read; use read for line-oriented output. Works on ended executions too (the last "
      "screen). Errors: an unknown execution_id (use the id from execute/open; ps lists them).",
      object_schema(properties, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(true, false, true, false),
      for_execution(screen),
  };
}

}  // namespace agentty::mcp::tools
