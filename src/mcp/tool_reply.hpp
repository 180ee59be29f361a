// The line that answers a tools/call: the JSON-RPC result holding the tool's
// structured content twice, as structuredContent and as the text of its one
// text content block (for clients that read only text), as the MCP spec
// asks of tools with an outputSchema.
//
// Built as text rather than as a json object to dump: the content is
// serialized once and that text is both copied in as structuredContent and
// escaped once as the text. Building the object copied a 1 MiB read page's
// ~1 MB of output into it twice and dumped the content twice more.
#pragma once

#include <string>

#include "mcp/json_rpc.hpp"

namespace agentty::mcp {

std::string tool_reply_line(const json& id, const json& content, bool is_error);

}  // namespace agentty::mcp
