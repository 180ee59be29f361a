#include "mcp/peer_names.hpp"

#include <gtest/gtest.h>

#include "mcp/schema.hpp"
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

json with(json args, const json& more) {
  args.update(more);
  return args;
}

// The enum problem the validator gives for `args` of `tool`, with value advice.
std::string enum_problem(const std::string& tool_name, const json& args) {
  for (const auto& tool : make_tool_table(ToolConfig{})) {
    if (tool.name != tool_name) continue;
    auto problem = validate(tool.input_schema, args);
    if (!problem) return "";
    return with_peer_value_advice(tool.name, tool.input_schema, args, *problem);
  }
  return "no such tool";
}

TEST(PeerNames, AValueAPeerTakesSaysWhatToSendInstead) {
  const json write = {{"execution_id", "e1"}};
  auto problem = enum_problem("write", with(write, {{"keys", {"tab", "ctrl-\\"}}}));
  EXPECT_TRUE(
      problem.starts_with("keys[1]: \"ctrl-\\\\\" is not one of the allowed values; "
                          "instead: \"ctrl-backslash\""))
      << problem;
  EXPECT_NE(problem.find("The allowed values are: \"ctrl-c\""), std::string::npos) << problem;
  problem = enum_problem("write", with(write, {{"action", "hard"}}));
  EXPECT_NE(problem.find("instead: close this session, then open a new one"), std::string::npos)
      << problem;
  problem = enum_problem("stop", {{"execution_id", "e1"}, {"signal", "SIGCONT"}});
  EXPECT_NE(problem.find("instead: write with action=\"resume\""), std::string::npos) << problem;
}

TEST(PeerNames, AnotherSpellingOfAnAllowedValueNamesIt) {
  const json write = {{"execution_id", "e1"}};
  const std::pair<const char*, const char*> keys[] = {
      {"Ctrl+C", "ctrl-c"}, {"^C", "ctrl-c"},        {"C-d", "ctrl-d"},
      {"CTRL_Z", "ctrl-z"}, {"Escape", "esc"},       {"Return", "enter"},
      {"PgUp", "pageup"},   {"BSpace", "backspace"}, {"BTab", "shift-tab"},
  };
  for (const auto& [given, ours] : keys) {
    auto problem = enum_problem("write", with(write, {{"keys", {given}}}));
    EXPECT_NE(problem.find(std::string("; instead: \"") + ours + "\"."), std::string::npos)
        << given << ": " << problem;
  }
  for (const auto& [given, ours] : {std::pair{"TERM", "SIGTERM"}, std::pair{"sigkill", "SIGKILL"},
                                    std::pair{"9", "SIGKILL"}, std::pair{"2", "SIGINT"}}) {
    auto problem = enum_problem("stop", {{"execution_id", "e1"}, {"signal", given}});
    EXPECT_NE(problem.find(std::string("; instead: \"") + ours + "\"."), std::string::npos)
        << given << ": " << problem;
  }
  // A spelling of nothing allowed keeps the validator's message.
  auto problem = enum_problem("write", with(write, {{"keys", {"ctrl-shift-x"}}}));
  EXPECT_EQ(problem.find("instead"), std::string::npos) << problem;
  problem = enum_problem("stop", {{"execution_id", "e1"}, {"signal", "SIGWINCH"}});
  EXPECT_EQ(problem.find("instead"), std::string::npos) << problem;
}

TEST(PeerNames, PeerToolsPointToAgenttyTools) {
  EXPECT_NE(peer_tool_advice("terminal_send")->find("execute with session=ID"), std::string::npos);
  EXPECT_NE(peer_tool_advice("get")->find("wait"), std::string::npos);
  EXPECT_FALSE(peer_tool_advice("execute").has_value());
  EXPECT_FALSE(peer_tool_advice("frobnicate").has_value());
}

}  // namespace
}  // namespace agentty::mcp
