// An execution's clock (its duration, its recording's times) starts before
// its program: when the launch began, not when the launch's coroutine
// resumed a loop turn later. A recording whose clock started late replayed
// `printf a; sleep 1; printf b` as less than a second on a loaded machine.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "support/json_lines.hpp"
#include "support/registry_fixture.hpp"

namespace agentty::session {
namespace {

double steady_seconds(std::chrono::steady_clock::time_point at) {
  return std::chrono::duration<double>(at.time_since_epoch()).count();
}

class RecordingClock : public test_support::RegistryFixture {
 protected:
  void configure(RegistryOptions& options) override { options.record = true; }
};

// The program prints CLOCK_MONOTONIC (std::chrono::steady_clock's clock on
// Linux) as its first act: that moment is after the execution's start, and
// the recording stamps the line no earlier than it was printed.
TEST_F(RecordingClock, StartsNoLaterThanTheProgram) {
  auto execution = start("exec python3 -c 'import time; print(repr(time.monotonic()))'");
  ASSERT_TRUE(execution);
  ASSERT_TRUE(eventually([&] { return execution->finished(); })) << "did not finish";
  const double started = loop_.on_loop([&] { return steady_seconds(execution->started_steady()); });
  const auto events =
      test_util::json_lines(state_dir_ / "recordings" / (execution->id() + ".cast"));
  std::string output;
  double stamped = -1;
  for (std::size_t i = 1; i < events.size(); ++i) {
    if (events[i][1] != "o") continue;
    if (stamped < 0) stamped = events[i][0].get<double>();
    output += events[i][2].get<std::string>();
  }
  ASSERT_FALSE(output.empty()) << "nothing recorded";
  const double printed_at = std::stod(output);
  EXPECT_LE(started, printed_at) << "the execution's clock started after its program";
  EXPECT_GE(started + stamped, printed_at) << "output stamped before it was printed";
}

}  // namespace
}  // namespace agentty::session
