// Execution::waiting_for_input with a real program under a real PTY: a line
// just typed is not yet answered, so a program that was quiet at its prompt
// does not count as waiting until it has had time to read it. Without this an
// execute typed into a session that had shown its prompt long before answered
// "waits for input" before the shell (not scheduled yet on a loaded machine)
// had even read the command.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "session/registry.hpp"
#include "support/loop_thread.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kQuietForInput = 400ms;

class WaitingForInput : public ::testing::Test {
 protected:
  void SetUp() override {
    state_dir_ = test_support::test_state_dir("agentty-waiting-");
    RegistryOptions options;
    options.state_dir = state_dir_;
    options.record = false;
    options.execution.quiet_for_input = kQuietForInput;
    registry_.emplace(loop_.io(), options);
    loop_.start();
  }
  void TearDown() override {
    loop_.on_loop([this] {
      registry_->shutdown(0ms);
      return 0;
    });
    loop_.stop();
    registry_.reset();
    fs::remove_all(state_dir_);
  }

  std::shared_ptr<Execution> start(const std::string& command) {
    ExecutionSpec spec;
    spec.argv = {"/bin/sh", "-c", command};
    spec.command_text = command;
    auto started = loop_.await_on_loop([&] { return registry_->start_local(spec); });
    EXPECT_TRUE(started) << started.error();
    return started ? started.value() : nullptr;
  }

  // Polls (no event reaches the test thread) with a generous deadline.
  bool eventually_waiting(const std::shared_ptr<Execution>& execution) {
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!loop_.on_loop([&] { return execution->waiting_for_input(); })) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

  test_support::LoopThread loop_;
  fs::path state_dir_;
  std::optional<Registry> registry_;
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
