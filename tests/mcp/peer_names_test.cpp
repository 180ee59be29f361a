#include "mcp/peer_names.hpp"

#include <gtest/gtest.h>

#include "mcp/tool.hpp"

namespace agentty::mcp {
namespace {

TEST(PeerNames, UnknownArgumentOfAPeerSaysWhatToUse) {
  auto problem = with_peer_argument_advice(
      "write", "close_stdin: unknown argument; the accepted ones are: eof, input");
  EXPECT_EQ(problem,
            "close_stdin: unknown argument; instead: eof=true (a terminal has no stdin to close: "
            "eof sends its end-of-file); the accepted ones are: eof, input");
}

TEST(PeerNames, ACommonlyGuessedNameSaysWhatToUse) {
  auto problem = with_peer_argument_advice(
      "write", "text: unknown argument; the accepted ones are: eof, input");
  EXPECT_NE(problem.find("instead: input"), std::string::npos) << problem;
  problem = with_peer_argument_advice("read",
                                      "id: unknown argument; the accepted ones are: execution_id");
  EXPECT_NE(problem.find("instead: execution_id"), std::string::npos) << problem;
  problem = with_peer_argument_advice("explore", "action: unknown argument; the accepted ones: op");
  EXPECT_NE(problem.find("instead: op"), std::string::npos) << problem;
}

TEST(PeerNames, OtherProblemsAndOtherToolsAreLeftAlone) {
  const std::string bounds = "timeout_ms: must be at most 86400000 (got 99999999999)";
  EXPECT_EQ(with_peer_argument_advice("wait", bounds), bounds);
  // ps has no streams advice: the message stays the validator's.
  const std::string unknown = "streams: unknown argument; the accepted ones are: limit";
  EXPECT_EQ(with_peer_argument_advice("ps", unknown), unknown);
}

// Advice for an argument the tool does take would never show, and would
// mislead if the schema changed: each tool's own arguments get none.
TEST(PeerNames, NoAdviceForAnArgumentTheToolTakes) {
  for (const auto& tool : make_tool_table(ToolConfig{})) {
    for (const auto& [argument, _] : tool.input_schema["properties"].items()) {
      const std::string problem = argument + ": unknown argument; the accepted ones are: x";
      EXPECT_EQ(with_peer_argument_advice(tool.name, problem), problem)
          << tool.name << " takes " << argument;
    }
  }
}

TEST(PeerNames, PeerToolsPointToAgenttyTools) {
  EXPECT_NE(peer_tool_advice("terminal_send")->find("execute with session=ID"), std::string::npos);
  EXPECT_NE(peer_tool_advice("get")->find("wait"), std::string::npos);
  EXPECT_FALSE(peer_tool_advice("execute").has_value());
  EXPECT_FALSE(peer_tool_advice("frobnicate").has_value());
}

}  // namespace
}  // namespace agentty::mcp
