#include "mcp/tool_reply.hpp"

namespace agentty::mcp {
namespace {

// Appends `value`'s JSON to `out`. Dumping to a fresh string grew it by
// doubling: copies and page faults that a big answer paid on the loop.
void dump_into(std::string& out, const json& value) {
  nlohmann::detail::serializer<json> serializer(nlohmann::detail::output_adapter<char>(out), ' ',
                                                json::error_handler_t::replace);
  serializer.dump(value, false, false, 0);
}

// About what `content` takes as JSON: its string values (the output, the
// screen) dominate.
std::size_t approximate_size(const json& content) {
  std::size_t size = 1024;
  if (content.is_object())
    for (const auto& [key, value] : content.items())
      if (value.is_string()) size += value.get_ref<const std::string&>().size() + key.size() + 8;
  return size;
}

}  // namespace

std::string tool_reply_line(const json& id, const json& content, bool is_error) {
  // Keys in the order a json object (a std::map) would write them.
  std::string structured;
  structured.reserve(approximate_size(content));
  dump_into(structured, content);  // valid UTF-8 from here on
  const json text = std::move(structured);
  const std::string& content_json = text.get_ref<const std::string&>();

  std::string line;
  line.reserve(2 * content_json.size() + 256);
  line.append(R"({"id":)");
  dump_into(line, id);
  line.append(R"(,"jsonrpc":"2.0","result":{"content":[{"text":)");
  dump_into(line, text);
  line.append(R"(,"type":"text"}],"isError":)");
  line.append(is_error ? "true" : "false");
  line.append(R"(,"structuredContent":)");
  line.append(content_json);
  line.append("}}");
  return line;
}

}  // namespace agentty::mcp
