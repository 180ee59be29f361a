// The table of MCP tools: adding a tool touches its own file and one line here.
#include "mcp/tool.hpp"

namespace agentty::mcp {

namespace tools {
ToolDefinition make_execute_tool(const ToolConfig&);
ToolDefinition make_read_tool(const ToolConfig&);
ToolDefinition make_write_tool(const ToolConfig&);
ToolDefinition make_wait_tool(const ToolConfig&);
ToolDefinition make_stop_tool(const ToolConfig&);
ToolDefinition make_ps_tool(const ToolConfig&);
ToolDefinition make_cleanup_tool(const ToolConfig&);
ToolDefinition make_screen_tool(const ToolConfig&);
ToolDefinition make_open_tool(const ToolConfig&);
ToolDefinition make_close_tool(const ToolConfig&);
ToolDefinition make_explore_tool(const ToolConfig&);
ToolDefinition make_handoff_tool(const ToolConfig&);
ResourceHandlers make_resource_handlers();
}  // namespace tools

std::vector<ToolDefinition> make_tool_table(const ToolConfig& config) {
  return {
      tools::make_execute_tool(config), tools::make_read_tool(config),
      tools::make_write_tool(config),   tools::make_wait_tool(config),
      tools::make_stop_tool(config),    tools::make_ps_tool(config),
      tools::make_cleanup_tool(config), tools::make_screen_tool(config),
      tools::make_explore_tool(config), tools::make_handoff_tool(config),
      tools::make_open_tool(config),    tools::make_close_tool(config),
  };
}

ResourceHandlers make_resource_handlers() {
  return tools::make_resource_handlers();
}

}  // namespace agentty::mcp
