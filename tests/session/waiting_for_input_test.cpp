// Execution::waiting_for_input with a real program under a real PTY: a line
// just typed is not yet answered, so a program that was quiet at its prompt
// does not count as waiting until it has had time to read it. Without this an
// execute typed into a session that had shown its prompt long before answered
// "waits for input" before the shell (not scheduled yet on a loaded machine)
// had even read the command.
#include <gtest/gtest.h>

#include <memory>

#include "support/registry_fixture.hpp"

namespace agentty::session {
namespace {

using namespace std::chrono_literals;

constexpr auto kQuietForInput = 400ms;

class WaitingForInput : public test_support::RegistryFixture {
 protected:
  void configure(RegistryOptions& options) override {
    options.execution.quiet_for_input = kQuietForInput;
  }
  bool eventually_waiting(const std::shared_ptr<Execution>& execution) {
    return eventually([&] { return execution->waiting_for_input(); });
  }
};

TEST_F(WaitingForInput, ALineJustTypedIsNotWaitingUntilTheProgramHadTimeToReadIt) {
  // cat reads the terminal and, with echo off, prints nothing in reply.
  auto execution = start("stty -echo; echo ready; exec cat >/dev/null");
  ASSERT_TRUE(execution);
  ASSERT_TRUE(eventually_waiting(execution));
  loop_.on_loop([&] {
    EXPECT_TRUE(execution->write("typed\n", InputSource::agent));
    EXPECT_LT(execution->quiet(), kQuietForInput);
    EXPECT_FALSE(execution->waiting_for_input());
    return 0;
  });
  // Once cat has read the line and gone quiet it waits again.
  EXPECT_TRUE(eventually_waiting(execution));
}

}  // namespace
}  // namespace agentty::session
