// input_state() and echo_enabled() on real programs: the probe reads /proc,
// so these poll with a deadline (a program starting to read has no event).
#include "pty/input_probe.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

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

TEST(InputProbe, ForegroundProgramIsNamedByItsGroupLeader) {
  // sh execs into cat: the group leader's name is what a person would call
  // the program; once it ends there is none.
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "exec cat"}), "");
  ASSERT_TRUE(becomes(run, InputState::reading_input));
  EXPECT_EQ(run.process->foreground_program(), "cat");
  run.process->write("\x04");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.process->foreground_program(), std::nullopt);
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

TEST(InputProbe, HiddenLineIsOnlyWhereTheTerminalReadsALineWithoutEcho) {
  // A password prompt (read -s, getpass, sudo, su): the line discipline
  // reads the line and does not echo it. A program in raw mode turns echo
  // off too, but reads keys and draws them itself (readline, vim).
  PtyRun password;
  ASSERT_EQ(password.spawn({"bash", "-c", "read -s secret; echo got"}), "");
  EXPECT_TRUE(password.run_until([&] { return password.process->hides_typed_line() == true; }));
  password.process->write("hidden\n");
  ASSERT_TRUE(password.wait_for_exit());

  PtyRun keys;
  ASSERT_EQ(keys.spawn({"bash", "-c", "stty -icanon -echo; echo raw; read -n1 key"}), "");
  EXPECT_TRUE(keys.wait_for_output("raw"));
  EXPECT_TRUE(becomes(keys, InputState::reading_input));
  EXPECT_EQ(keys.process->echo_enabled(), false);
  EXPECT_EQ(keys.process->hides_typed_line(), false);
  keys.process->write("k");
  ASSERT_TRUE(keys.wait_for_exit());

  PtyRun echoing;
  ASSERT_EQ(echoing.spawn({"cat"}), "");
  EXPECT_TRUE(becomes(echoing, InputState::reading_input));
  EXPECT_EQ(echoing.process->hides_typed_line(), false);
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

// Whether `pid` is blocked in read(2), and how many reads it has made, from
// /proc (the test's own view).
bool blocked_in_read(int pid) {
  std::ifstream syscall("/proc/" + std::to_string(pid) + "/syscall");
  std::string number;
  return syscall >> number && number == "0";
}
long reads_made(int pid) {
  std::ifstream io("/proc/" + std::to_string(pid) + "/io");
  for (std::string key; io >> key;) {
    long value = 0;
    io >> value;
    if (key == "syscr:") return value;
  }
  return -1;
}

TEST(InputProbe, UnreadOutputIsBusyEvenWhenTheProgramReads) {
  // A wait's timer may run before the read handler: the program is back at
  // its prompt, but what it printed is still in the master. Not "waiting"
  // until that output has been read.
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "read x; printf later; read y"}), "");
  ASSERT_TRUE(becomes(run, InputState::reading_input));
  int pid = run.process->process_id().value_or(-1);
  long before = reads_made(pid);
  run.process->write("go\n");  // written at once; the loop does not run below
  // It can block again only in `read y`, after printing "later" (no event for
  // that: poll /proc).
  auto again = [&] { return reads_made(pid) > before && blocked_in_read(pid); };
  auto deadline = std::chrono::steady_clock::now() + test_util::kDeadline;
  while (!again() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(again());
  EXPECT_EQ(run.process->input_state(), InputState::busy);
  ASSERT_TRUE(run.run_until([&] { return run.output.find("later") != std::string::npos; }));
  EXPECT_TRUE(becomes(run, InputState::reading_input));
  run.process->write("done\n");
  ASSERT_TRUE(run.wait_for_exit());
}

TEST(InputProbe, ReaderThatLeftTheSessionIsReadingInput) {
  // `su user -c CMD` runs CMD in a session of its own (setsid) on the same
  // terminal and waits for it: the foreground (su) sits in wait4 while CMD's
  // password prompt or REPL reads the slave on fd 0.
  PtyRun run;
  ASSERT_EQ(run.spawn({"setsid", "-w", "sh", "-c", "read x; echo got $x"}), "");
  EXPECT_TRUE(becomes(run, InputState::reading_input));
  run.process->write("yes\n");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_NE(run.output.find("got yes"), std::string::npos);
}

TEST(InputProbe, SleeperThatLeftTheSessionIsBusy) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"setsid", "-w", "sleep", "5"}), "");
  int pid = *run.process->process_id();
  // setsid forks (it leads its group) and waits: busy once its child sleeps.
  auto child_sleeps = [&] {
    std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) +
                           "/children");
    int child = 0;
    if (!(children >> child)) return false;
    std::ifstream comm("/proc/" + std::to_string(child) + "/comm");
    std::string name;
    auto info = test_util::state_and_parent(child);
    return comm >> name && name == "sleep" && info && info->first == 'S';
  };
  ASSERT_TRUE(run.run_until(child_sleeps));
  EXPECT_EQ(run.process->input_state(), InputState::busy);
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

// Blocks in poll, select or epoll_wait on `what` ("terminal": fd 0, the
// PTY; "pipe": a pipe nobody writes, like an event loop waiting on a socket
// or a timer) while fd 0, 1 and 2 are the terminal.
const char* kWaitReady = R"(
import os, select, sys
r, w = os.pipe()
fd = 0 if sys.argv[2] == "terminal" else r
if sys.argv[1] == "poll":
    p = select.poll(); p.register(fd, select.POLLIN); p.poll(30000)
elif sys.argv[1] == "select":
    select.select([fd], [], [], 30)
else:
    e = select.epoll(); e.register(fd, select.EPOLLIN); e.poll(30)
)";

bool blocked_in_wait_for_readiness(int pid) {
  std::ifstream syscall("/proc/" + std::to_string(pid) + "/syscall");
  long number = -1;
  if (!(syscall >> number)) return false;
  for (long wait_call : {7, 23, 270, 271, 232, 281, 441, 72, 73, 22})
    if (number == wait_call) return true;
  return false;
}

class WaitForReadiness : public ::testing::TestWithParam<const char*> {};

TEST_P(WaitForReadiness, OnThePipeIsBusyOnTheTerminalIsReadingInput) {
  // node's setTimeout, asyncio, curl and man's pipeline wait this way with the
  // terminal on fd 0-2: that is not waiting for input.
  for (const char* what : {"pipe", "terminal"}) {
    SCOPED_TRACE(std::string(GetParam()) + " on the " + what);
    PtyRun run;
    ASSERT_EQ(run.spawn({"python3", "-c", kWaitReady, GetParam(), what}), "");
    int pid = *run.process->process_id();
    ASSERT_TRUE(run.run_until([&] { return blocked_in_wait_for_readiness(pid); }));
    auto wanted = std::string(what) == "pipe" ? InputState::busy : InputState::reading_input;
    EXPECT_TRUE(becomes(run, wanted));
    for (int i = 0; i < 5; ++i) {
      run.run_until([] { return false; }, std::chrono::milliseconds(20));
      EXPECT_EQ(run.process->input_state(), wanted);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(InputProbe, WaitForReadiness,
                         ::testing::Values("poll", "select", "epoll"));

TEST(InputProbe, AProgramStoppedByCtrlZIsSuspendedUntilResumed) {
  // No job-control shell runs above the program: ctrl-z stops it and nothing
  // would ever continue it, so the probe must say so (not "busy").
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "read x; echo got $x"}), "");
  ASSERT_TRUE(becomes(run, InputState::reading_input));
  run.process->write("\x1a");  // ctrl-z: SIGTSTP to the foreground group
  EXPECT_TRUE(becomes(run, InputState::suspended));
  ASSERT_TRUE(run.process->resume_foreground());
  EXPECT_TRUE(becomes(run, InputState::reading_input));
  run.process->write("on\n");
  ASSERT_TRUE(run.wait_for_output("got on"));
}

TEST(InputProbe, ResumingARunningProgramSendsNothing) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"cat"}), "");
  ASSERT_TRUE(becomes(run, InputState::reading_input));
  EXPECT_FALSE(run.process->resume_foreground());
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
