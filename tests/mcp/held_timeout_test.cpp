// execute's timeout_ms against a person's takeover: the clock stops while a
// person holds the execution (the web terminal and `agentty attach` call
// Execution::take_over), so a command they took over is not killed under
// their hands, and the time left runs again once they release it.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "support/tool_fixture.hpp"

namespace agentty::mcp {
namespace {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class HeldTimeout : public test_support::ToolFixture {};

TEST_F(HeldTimeout, TheTimeoutWaitsWhileAPersonHoldsTheExecutionAndResumesAtRelease) {
  auto started = call(
      "execute",
      {{"command", "sleep 60"}, {"side_effects", {"NONE"}}, {"timeout_ms", 3000}, {"yield_ms", 0}});
  ASSERT_EQ(started.content.value("status", ""), "backgrounded") << started.content.dump();
  const std::string id = started.content.value("execution_id", "");
  auto execution = on_loop([&] { return registry_->find(id); });
  ASSERT_TRUE(execution);
  ASSERT_TRUE(on_loop([&] { return execution->take_over("person", std::nullopt); }));

  // Held for longer than the whole timeout: still running.
  auto held = call("wait", {{"execution_id", id}, {"until", "exit"}, {"timeout_ms", 4500}});
  EXPECT_EQ(held.content.value("wait_result", ""), "deadline_reached") << held.content.dump();
  EXPECT_EQ(held.content.value("status", ""), "running");

  const auto released_at = Clock::now();
  ASSERT_TRUE(on_loop([&] { return execution->release("person"); }));
  auto ended = call("wait", {{"execution_id", id}, {"until", "exit"}, {"timeout_ms", 30000}});
  EXPECT_EQ(ended.content.value("wait_result", ""), "exited") << ended.content.dump();
  EXPECT_EQ(ended.content.value("status", ""), "timed_out") << ended.content.dump();
  // What was left at the takeover (the call and takeover took well under 3 s).
  EXPECT_GT(Clock::now() - released_at, 100ms);
}

}  // namespace
}  // namespace agentty::mcp
