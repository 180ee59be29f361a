#include "mcp/tool_reply.hpp"

#include <gtest/gtest.h>

namespace agentty::mcp {
namespace {

// What the line must mean: the JSON-RPC result a json object would give.
json expected_reply(const json& id, const json& content, bool is_error) {
  json text = {{"type", "text"}, {"text", serialize(content)}};
  return make_result(
      id,
      {{"content", json::array({text})}, {"structuredContent", content}, {"isError", is_error}});
}

TEST(ToolReply, IsTheResultWithTheContentAsStructuredContentAndAsText) {
  json content = {{"output", "line 1\n\"quoted\" \\ tab\t \x1b[31mred\x1b[0m \xc3\xa9\n"},
                  {"exit_code", 0},
                  {"status", "completed"},
                  {"nested", {{"list", {1, 2, 3}}}}};
  for (const json& id : {json(7), json("call-\"8\""), json(-1)}) {
    for (bool is_error : {false, true}) {
      std::string line = tool_reply_line(id, content, is_error);
      EXPECT_EQ(line.find('\n'), std::string::npos);
      EXPECT_EQ(json::parse(line), expected_reply(id, content, is_error)) << line;
      EXPECT_EQ(line, serialize(expected_reply(id, content, is_error)));  // byte for byte
    }
  }
}

TEST(ToolReply, ReplacesBytesThatAreNotUtf8InBothCopies) {
  json content = {{"output", std::string("bad \xff\xfe byte")}};
  std::string line = tool_reply_line(1, content, false);
  auto reply = json::parse(line);  // throws if the line were not valid UTF-8
  EXPECT_EQ(reply["result"]["structuredContent"]["output"], "bad \xEF\xBF\xBD\xEF\xBF\xBD byte");
  EXPECT_EQ(json::parse(reply["result"]["content"][0]["text"].get<std::string>()),
            reply["result"]["structuredContent"]);
}

TEST(ToolReply, AnEmptyContentIsAnEmptyObject) {
  EXPECT_EQ(json::parse(tool_reply_line(2, json::object(), true)),
            expected_reply(2, json::object(), true));
}

}  // namespace
}  // namespace agentty::mcp
