// The write tool's resize (cols/rows) at the tool layer: a real Registry
// running a real program under a PTY, on an event loop of its own thread as
// in the server; the test thread runs the tool handlers from the tool table
// and everything else that touches the registry on that loop (on_loop). A
// person's takeover is Execution::take_over, as the web terminal and
// `agentty attach` do it.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>

#include "mcp/tool.hpp"
#include "session/policy.hpp"
#include "support/tool_fixture.hpp"

namespace agentty::mcp {
namespace {
namespace asio = boost::asio;
using namespace std::chrono_literals;

// Prints "winch ROWSxCOLS" on every SIGWINCH. It waits for the signal with
// sigwait rather than printing from a handler: a SIGWINCH that came while the
// handler printed ran it again inside print() (Python's "reentrant call
// inside BufferedWriter"), which killed the reporter on a loaded machine.
const char* kWinchReporter =
    "import os, signal\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGWINCH})\n"
    "print('ready', flush=True)\n"
    "while True:\n"
    "    signal.sigwait({signal.SIGWINCH})\n"
    "    size = os.get_terminal_size()\n"
    "    print(f'winch {size.lines}x{size.columns}', flush=True)\n";

class WriteResize : public test_support::ToolFixture {
 protected:
  std::shared_ptr<session::Execution> start_reporter(pty::TerminalSize size) {
    session::ExecutionSpec spec;
    spec.argv = {"python3", "-c", kWinchReporter};
    spec.command_text = "winch reporter";
    spec.size = size;
    auto started = loop_.await_on_loop([&] { return registry_->start_local(spec); });
    EXPECT_TRUE(started) << started.error();
    return started ? started.value() : nullptr;
  }

  // Patterns for expect_output end a line with \n, not $: `$` also matches
  // at the end of a half-written line, and the next SIGWINCH can interrupt a
  // print() between its text and its newline (the PTY write returns short),
  // so Python's handler prints inside it.

  std::pair<int, int> screen_size(const std::string& id) {
    auto screen = call("screen", {{"execution_id", id}});
    return {screen.content.value("cols", 0), screen.content.value("rows", 0)};
  }
};

TEST_F(WriteResize, RefusedWhileHeldNothingResizedTypedOrStopped) {
  auto execution = start_reporter({100, 29});
  ASSERT_TRUE(execution);
  const std::string id = execution->id();
  expect_output(id, "^ready\\n");
  ASSERT_TRUE(on_loop([&] { return execution->take_over("person", std::nullopt); }));

  auto refused = call("write", {{"execution_id", id},
                                {"cols", 70},
                                {"rows", 20},
                                {"input", "typed-while-held"},
                                {"newline", true}});
  EXPECT_TRUE(refused.is_error);
  EXPECT_EQ(refused.content.value("held", false), true);
  EXPECT_EQ(refused.content.value("ok", true), false);
  EXPECT_EQ(refused.content.value("error", ""),
            "held: a human has taken over this execution; the terminal was not resized and "
            "nothing was written. Wait with wait(until=\"released\") and try again.");
  EXPECT_EQ(on_loop([&] { return execution->size(); }), (pty::TerminalSize{100, 29}));
  EXPECT_EQ(screen_size(id), std::make_pair(100, 29));
  // Ending it is refused too (stop and close share the signal-and-wait helper).
  auto stop = call("stop", {{"execution_id", id}, {"signal", "SIGKILL"}});
  EXPECT_TRUE(stop.is_error);
  EXPECT_EQ(stop.content.value("stopped", true), false);
  EXPECT_EQ(stop.content.value("status", ""), "running");
  EXPECT_EQ(stop.content.value("error", "").rfind("held: a human has taken over", 0), 0u);

  ASSERT_TRUE(on_loop([&] { return execution->release("person"); }));
  auto resized = call("write", {{"execution_id", id}, {"cols", 70}, {"rows", 20}});
  EXPECT_FALSE(resized.is_error) << resized.content.dump();
  EXPECT_EQ(resized.content.value("cols", 0), 70);
  EXPECT_EQ(resized.content.value("rows", 0), 20);
  expect_output(id, "^winch 20x70\\n");
  EXPECT_EQ(screen_size(id), std::make_pair(70, 20));
  auto all = call("read", {{"execution_id", id}, {"since_seq", 1}});
  EXPECT_EQ(all.content.value("output", "").find("typed-while-held"), std::string::npos);
}

TEST_F(WriteResize, IsTheAgentsSizeThatAReleaseRestores) {
  auto execution = start_reporter({100, 29});
  ASSERT_TRUE(execution);
  const std::string id = execution->id();
  expect_output(id, "^ready\\n");
  auto resized = call("write", {{"execution_id", id}, {"cols", 90}});
  ASSERT_FALSE(resized.is_error) << resized.content.dump();
  expect_output(id, "^winch 29x90\\n");

  // A person takes over with their own terminal's size, then hands back.
  ASSERT_TRUE(on_loop([&] { return execution->take_over("person", pty::TerminalSize{80, 24}); }));
  expect_output(id, "^winch 24x80\\n");
  ASSERT_TRUE(on_loop([&] { return execution->release("person"); }));
  EXPECT_EQ(on_loop([&] { return execution->size(); }), (pty::TerminalSize{90, 29}));
  expect_output(id, "^winch 29x90\\n[\\s\\S]*^winch 24x80\\n[\\s\\S]*^winch 29x90\\n");
}

TEST_F(WriteResize, ASizeTheProgramSetsItselfIsTheScreensSize) {
  session::ExecutionSpec spec;
  spec.argv = {"sh", "-c", "stty cols 50 rows 10; printf '%060d\\n' 0; echo set; exec sleep 30"};
  spec.command_text = "stty";
  spec.size = {120, 40};
  auto started = loop_.await_on_loop([&] { return registry_->start_local(spec); });
  ASSERT_TRUE(started) << started.error();
  const std::string id = started.value()->id();
  expect_output(id, "^set\\n");
  EXPECT_EQ(screen_size(id), (std::pair<int, int>{50, 10}));
  // The 60-digit line wraps at the program's 50 columns, as on its terminal.
  auto screen = call("screen", {{"execution_id", id}});
  auto lines = screen.content["lines"];
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], std::string(50, '0'));
  EXPECT_EQ(lines[1], std::string(10, '0'));
  EXPECT_EQ(lines[2], "set");
  call("stop", {{"execution_id", id}, {"signal", "SIGKILL"}});
}

TEST_F(WriteResize, UnknownExecutionIdSaysWhereIdsComeFrom) {
  auto result = call("write", {{"execution_id", "nope"}, {"cols", 80}});
  EXPECT_TRUE(result.is_error);
  EXPECT_EQ(result.content.value("execution_id", ""), "nope");
  EXPECT_NE(result.content.value("error", "").find("unknown execution_id 'nope'"),
            std::string::npos);
}

}  // namespace
}  // namespace agentty::mcp
