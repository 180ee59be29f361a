// When write's answer is complete, at the tool layer, with a real line
// editor: python3's REPL (readline: the terminal's line discipline off)
// under a real PTY. A submitted line's reply ends at the next prompt; output
// that went quiet while /proc shows the program busy is only its start
// (gdb's `run` prints "Starting program:" and runs on to the breakpoint).
#include <gtest/gtest.h>

#include <string>

#include "support/tool_fixture.hpp"

namespace agentty::mcp {
namespace {

class WriteReply : public test_support::ToolFixture {
 protected:
  // python3's REPL, answered at its first prompt; its execution id.
  std::string start_repl() {
    auto started = call("execute", {{"argv", {"python3", "-q"}},
                                    {"env", {{"PYTHONSTARTUP", ""}}},
                                    {"side_effects", {"NONE"}},
                                    {"yield_ms", 30000}});
    EXPECT_FALSE(started.is_error) << started.content.dump();
    EXPECT_EQ(started.content.value("waiting_for_input", false), true) << started.content.dump();
    return started.content.value("execution_id", "");
  }

  ToolResult write_line(const std::string& id, const std::string& line, int yield_ms) {
    return call("write",
                {{"execution_id", id}, {"input", line}, {"newline", true}, {"yield_ms", yield_ms}});
  }
};

TEST_F(WriteReply, ALineThatPrintsThenComputesIsAnsweredAtTheNextPrompt) {
  const auto id = start_repl();
  ASSERT_FALSE(id.empty());
  auto answer = write_line(
      id, "import time; print('work' + 'ing'); time.sleep(1); print('do' + 'ne')", 30000);
  ASSERT_FALSE(answer.is_error) << answer.content.dump();
  const auto output = answer.content.value("output", "");
  // Before: "working" alone, 150 ms after it, with waiting_for_input false.
  EXPECT_NE(output.find("working\n"), std::string::npos) << output;
  EXPECT_NE(output.find("done\n>>> "), std::string::npos) << output;
  EXPECT_EQ(answer.content.value("waiting_for_input", false), true) << answer.content.dump();
  EXPECT_FALSE(answer.content.contains("message")) << answer.content.dump();
  call("stop", {{"execution_id", id}, {"signal", "SIGKILL"}});
}

TEST_F(WriteReply, ALineStillRunningAtYieldSaysNoPromptFollowed) {
  const auto id = start_repl();
  ASSERT_FALSE(id.empty());
  auto answer = write_line(id, "import time; print('work' + 'ing'); time.sleep(60)", 2000);
  ASSERT_FALSE(answer.is_error) << answer.content.dump();
  EXPECT_NE(answer.content.value("output", "").find("working\n"), std::string::npos)
      << answer.content.dump();
  EXPECT_EQ(answer.content.value("waiting_for_input", true), false) << answer.content.dump();
  EXPECT_NE(answer.content.value("message", "").find("no prompt followed within yield_ms"),
            std::string::npos)
      << answer.content.dump();
  call("stop", {{"execution_id", id}, {"signal", "SIGKILL"}});
}

}  // namespace
}  // namespace agentty::mcp
