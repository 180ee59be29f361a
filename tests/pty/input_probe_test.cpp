// input_state() and echo_enabled() on real programs: the probe reads /proc,
// so these poll with a deadline (a program starting to read has no event).
#include "pty/input_probe.hpp"

#include <gtest/gtest.h>

#include "pty/pty_test_util.hpp"

namespace agentty::pty {
namespace {

using test_util::PtyRun;

bool becomes(PtyRun& run, InputState wanted) {
  return run.run_until([&] { return run.process->input_state() == wanted; });
}

TEST(InputProbe, CatWaitingIsReadingInput) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"cat"}), "");
  EXPECT_TRUE(becomes(run, InputState::reading_input));
  EXPECT_EQ(run.process->echo_enabled(), true);
}

TEST(InputProbe, ChildOfWaitingShellIsFound) {
  // sh sits in wait4; cat, in the same foreground group, reads the terminal.
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "cat; exit 0"}), "");
  EXPECT_TRUE(becomes(run, InputState::reading_input));
}

TEST(InputProbe, BashSilentReadIsReadingInputWithoutEcho) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"bash", "-c", "read -s secret; echo got"}), "");
  EXPECT_TRUE(becomes(run, InputState::reading_input));
  EXPECT_TRUE(run.run_until([&] { return run.process->echo_enabled() == false; }));
  run.process->write("hidden\n");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.output.find("hidden"), std::string::npos);
}

TEST(InputProbe, DevTtyReaderIsReadingInput) {
  // Like getpass, sudo and ssh: the prompt reads /dev/tty, not the slave's own node.
  PtyRun run;
  ASSERT_EQ(run.spawn({"bash", "-c", "read -s secret </dev/tty; echo got"}), "");
  EXPECT_TRUE(becomes(run, InputState::reading_input));
  run.process->write("hidden\n");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_NE(run.output.find("got"), std::string::npos);
}

TEST(InputProbe, InteractiveBashPromptIsReadingInput) {
  // readline waits in pselect6/read on the terminal.
  PtyRun run;
  ASSERT_EQ(run.spawn({"bash", "--norc", "--noprofile", "-i"}), "");
  EXPECT_TRUE(becomes(run, InputState::reading_input));
  run.process->write("exit\n");
  ASSERT_TRUE(run.wait_for_exit());
}

TEST(InputProbe, SleepingProgramIsBusy) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sleep", "5"}), "");
  int pid = *run.process->process_id();
  // Wait until sleep is parked in nanosleep, then it must read as busy.
  ASSERT_TRUE(run.run_until([&] {
    auto info = test_util::state_and_parent(pid);
    return info && info->first == 'S';
  }));
  EXPECT_EQ(run.process->input_state(), InputState::busy);
}

TEST(InputProbe, ReaderOfAPipeIsBusy) {
  // sleep holds the pipe open, so cat blocks reading the pipe, not the terminal.
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "sleep 5 | cat"}), "");
  int pid = *run.process->process_id();
  ASSERT_TRUE(run.run_until([&] {
    auto info = test_util::state_and_parent(pid);
    return info && info->first == 'S';
  }));
  // Give the pipeline's members a moment to block, then check repeatedly.
  for (int i = 0; i < 10; ++i) {
    run.run_until([] { return false; }, std::chrono::milliseconds(20));
    EXPECT_EQ(run.process->input_state(), InputState::busy);
  }
}

TEST(InputProbe, FinishedProcessIsNotReading) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"true"}), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.process->input_state(), InputState::busy);
  EXPECT_EQ(run.process->echo_enabled(), std::nullopt);
}

}  // namespace
}  // namespace agentty::pty
