// PtyProcess with real programs on real PTYs: output, exit status, process
// lifetime, environment, cwd, errors, resize and input.
#include "pty/pty_process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/unique_fd.hpp"
#include "pty/pty_test_util.hpp"

namespace agentty::pty {
namespace {

using test_util::children_of_test;
using test_util::fds_of;
using test_util::PtyRun;

TEST(PtyProcess, DeliversOutputAndExitCodeZero) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"echo", "hello pty"}), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.output, "hello pty\r\n");
  EXPECT_EQ(run.exit->code, 0);
  EXPECT_TRUE(run.process->finished());
}

TEST(PtyProcess, ReportsExitCode) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "exit 3"}), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.exit->code, 3);
  EXPECT_FALSE(run.exit->signal);
}

TEST(PtyProcess, ReportsKillingSignal) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "kill -9 $$"}), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.exit->signal, SIGKILL);
  EXPECT_EQ(run.exit->describe(), "killed by signal 9 (SIGKILL)");
}

TEST(PtyProcess, ReportsCoreSignalWithoutDumpingCore) {
  PtyRun run;
  auto dir = std::filesystem::temp_directory_path() / ("agentty-core-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  SpawnOptions options;
  options.argv = {"sh", "-c", "ulimit -c unlimited 2>/dev/null; kill -SEGV $$"};
  options.cwd = dir;
  ASSERT_EQ(run.spawn(options), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.exit->signal, SIGSEGV);
  // The supervisor re-raises with RLIMIT_CORE 0: at most the program's own core.
  std::filesystem::remove_all(dir);
}

TEST(PtyProcess, OnExitFiresOnceAfterAllOutput) {
  // Output written right before exit must not be lost to the exit race.
  for (int attempt = 0; attempt < 4; ++attempt) {
    PtyRun run;
    ASSERT_EQ(run.spawn({"sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x; exit 0"}), "");
    ASSERT_TRUE(run.wait_for_exit());
    EXPECT_EQ(std::count(run.output_at_exit.begin(), run.output_at_exit.end(), 'x'), 1000000)
        << "attempt " << attempt;
    EXPECT_EQ(run.output_at_exit.size(), 1000000u);
    run.run_until([] { return false; }, std::chrono::milliseconds(50));
    EXPECT_EQ(run.exit_calls, 1);
    EXPECT_EQ(run.output, run.output_at_exit);
  }
}

TEST(PtyProcess, ChildSeesOnlyStandardFds) {
  int leaky = ::open("/dev/null", O_RDONLY);  // deliberately not O_CLOEXEC
  int leaky_pipe[2];
  ASSERT_EQ(::pipe(leaky_pipe), 0);
  PtyRun run;
  ASSERT_EQ(run.spawn({"cat"}), "");
  // Once cat waits for input its start-up (ld.so opening libraries) is over.
  ASSERT_TRUE(
      run.run_until([&] { return run.process->input_state() == InputState::reading_input; }));
  int program = *run.process->process_id();
  EXPECT_EQ(fds_of(program), (std::vector<std::string>{"0", "1", "2"}));
  int supervisor = test_util::state_and_parent(program)->second;
  EXPECT_EQ(test_util::state_and_parent(supervisor)->second, getpid());
  EXPECT_EQ(fds_of(supervisor), (std::vector<std::string>{"0", "1", "2"}));
  ::close(leaky);
  ::close(leaky_pipe[0]);
  ::close(leaky_pipe[1]);
}

TEST(PtyProcess, StdinDataIsAFileOnFdZero) {
  PtyRun run;
  ASSERT_EQ(run.spawn(test_util::stdin_file_probe()), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.output, test_util::kStdinFileProbeOutput);
  EXPECT_EQ(run.exit->code, 0);
}

TEST(PtyProcess, ProgramLeadsForegroundGroup) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"cat"}), "");
  int pid = *run.process->process_id();
  EXPECT_EQ(run.process->process_group(), pid);
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_EQ(run.process->foreground_process_group(), pid);
  EXPECT_NE(::getsid(pid), ::getsid(0));
}

TEST(PtyProcess, EnvironmentHasOverlayAndAgentDefaults) {
  ::setenv("AGENTTY_PARENT_VAR", "inherited", 1);
  ::setenv("PAGER", "less", 1);
  ::setenv("MANPAGER", "less", 1);
  ::setenv("COLUMNS", "999", 1);
  PtyRun run;
  SpawnOptions options;
  options.argv = {"sh", "-c",
                  "echo "
                  "\"[$TERM][$PAGER][$GIT_PAGER][$MANPAGER][$AGENTTY_PARENT_VAR][$OVERLAY][${"
                  "COLUMNS-unset}]\""};
  options.env = {{"OVERLAY", "two words"}};
  ASSERT_EQ(run.spawn(options), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.output, "[xterm-256color][cat][cat][cat][inherited][two words][unset]\r\n");
  ::unsetenv("AGENTTY_PARENT_VAR");
  ::unsetenv("PAGER");
  ::unsetenv("MANPAGER");
  ::unsetenv("COLUMNS");
}

TEST(PtyProcess, OverlayOverridesPagerDefaults) {
  PtyRun run;
  SpawnOptions options;
  options.argv = {"sh", "-c", "echo \"[$PAGER][$GIT_PAGER]\""};
  options.env = {{"PAGER", "more"}};
  ASSERT_EQ(run.spawn(options), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.output, "[more][cat]\r\n");
}

TEST(PtyProcess, NoPagerDefaultsWithoutAgentDefaults) {
  ::unsetenv("PAGER");
  ::unsetenv("GIT_PAGER");
  PtyRun run;
  SpawnOptions options;
  options.argv = {"sh", "-c", "echo \"[${PAGER-unset}][${GIT_PAGER-unset}]\""};
  options.agent_defaults = false;
  ASSERT_EQ(run.spawn(options), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.output, "[unset][unset]\r\n");
}

TEST(PtyProcess, RunsInRequestedCwd) {
  auto dir = std::filesystem::canonical(std::filesystem::temp_directory_path());
  PtyRun run;
  SpawnOptions options;
  options.argv = {"pwd"};
  options.cwd = dir;
  ASSERT_EQ(run.spawn(options), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.output, dir.string() + "\r\n");
}

TEST(PtyProcess, BadCwdIsAClearErrorAndLeavesNothing) {
  PtyRun run;
  SpawnOptions options;
  options.argv = {"pwd"};
  options.cwd = "/nope/agentty";
  EXPECT_EQ(run.spawn(options), "cwd '/nope/agentty': No such file or directory");
  options.cwd = "/proc/self/stat";
  EXPECT_EQ(run.spawn(options), "cwd '/proc/self/stat': Not a directory");
  EXPECT_EQ(children_of_test(false), std::vector<int>{});
}

TEST(PtyProcess, MissingProgramIsAClearErrorAndLeavesNoZombie) {
  PtyRun run;
  // A PATH of its own: execvp reports EACCES when a PATH directory may not be
  // searched (/root/... in root's PATH kept by `su user`).
  SpawnOptions missing;
  missing.argv = {"nosuchprog-agentty"};
  missing.env = {{"PATH", "/usr/bin:/bin"}};
  EXPECT_EQ(run.spawn(missing),
            "cannot run 'nosuchprog-agentty': No such file or directory (execvp)");
  auto plain = std::filesystem::temp_directory_path() /
               ("agentty-not-executable-" + std::to_string(getpid()));
  std::ofstream(plain) << "echo should not run\n";
  std::filesystem::permissions(
      plain, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(run.spawn({plain.string()}),
            "cannot run '" + plain.string() + "': Permission denied (execvp)");
  std::filesystem::remove(plain);
  EXPECT_EQ(children_of_test(false), std::vector<int>{});
}

TEST(PtyProcess, RunsScriptWithoutShebangUnderSh) {
  auto script =
      std::filesystem::temp_directory_path() / ("agentty-noshebang-" + std::to_string(getpid()));
  {
    std::ofstream out(script);
    out << "echo from script \"$1\"\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  PtyRun run;
  ASSERT_EQ(run.spawn({script.string(), "arg1"}), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.output, "from script arg1\r\n");
  std::filesystem::remove(script);
}

TEST(PtyProcess, BackgroundDescendantKeepsChannelAlive) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "(sleep 1; echo late) & echo early"}), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_NE(run.output_at_exit.find("early"), std::string::npos);
  EXPECT_NE(run.output_at_exit.find("late"), std::string::npos);
  EXPECT_EQ(run.exit->code, 0);
}

TEST(PtyProcess, StrayOutsideTheGroupDoesNotHoldExitForever) {
  // A process in its own session keeps the slave open; on_exit still fires
  // (after the drain grace) once the program's group is empty.
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "setsid sleep 30 & echo \"stray $!\"; exit 5"}), "");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.exit->code, 5);
  auto at = run.output.find("stray ");
  ASSERT_NE(at, std::string::npos);
  int stray = std::atoi(run.output.c_str() + at + 6);
  ASSERT_GT(stray, 0);
  EXPECT_EQ(::kill(stray, 0), 0);  // it outlived the execution
  ::kill(stray, SIGKILL);
}

TEST(PtyProcess, StrayOutsideTheGroupDelaysTheExitOnlyUntilOutputIsQuiet) {
  // `setsid server &`, `ssh -f`: a person gets the prompt back at once; the
  // agent waited the whole 2 s grace for an end of output that never comes.
  // Timed from the last output, not from the spawn: a loaded machine can take
  // a second to start sh, which is no part of the wait at the end.
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "setsid sleep 30 & echo \"stray $!\"; echo last words"}), "");
  ASSERT_TRUE(run.wait_for_output("last words"));
  auto last_output = std::chrono::steady_clock::now();
  ASSERT_TRUE(run.wait_for_exit());
  auto took = std::chrono::steady_clock::now() - last_output;
  EXPECT_LT(took, std::chrono::milliseconds(1500));
  EXPECT_NE(run.output_at_exit.find("last words"), std::string::npos);
  auto at = run.output.find("stray ");
  ASSERT_NE(at, std::string::npos);
  ::kill(std::atoi(run.output.c_str() + at + 6), SIGKILL);
}

TEST(PtyProcess, SigkillEndsProgramThatIgnoresSigterm) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c",
                       "trap '' TERM; echo ready; while read line; do echo \"got $line\"; done"}),
            "");
  ASSERT_TRUE(run.wait_for_output("ready"));
  run.process->send_signal(SIGTERM);
  run.process->write("ping\n");
  ASSERT_TRUE(run.wait_for_output("got ping"));  // alive after SIGTERM
  EXPECT_FALSE(run.process->finished());
  run.process->send_signal(SIGKILL);
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.exit->signal, SIGKILL);
}

// `kill -STOP $PPID` stops the supervisor, which then reaped nothing: the
// channel never ended, whatever was sent.
TEST(PtyProcess, EndingSignalContinuesAStoppedSupervisor) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "kill -STOP $PPID; echo stopped-it; exec sleep 600"}), "");
  ASSERT_TRUE(run.wait_for_output("stopped-it"));
  run.process->send_signal(SIGTERM);
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.exit->signal, SIGTERM);
}

// A paused channel reads nothing: the program blocks writing, and once
// resumed every byte arrives, in order.
TEST(PtyProcess, PausedOutputHoldsTheProgramAndLosesNothing) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "echo go; seq 1 200000; echo end"}), "");
  ASSERT_TRUE(run.wait_for_output("go"));
  EXPECT_TRUE(run.process->pause_output(true));
  const std::size_t at_pause = run.output.size();
  run.run_until([] { return false; }, std::chrono::milliseconds(300));
  EXPECT_EQ(run.output.size(), at_pause);
  EXPECT_FALSE(run.exit);  // blocked writing to its terminal
  run.process->pause_output(false);
  ASSERT_TRUE(run.wait_for_exit());
  std::size_t from = run.output.find("go\r\n") + 4;
  for (int expected = 1; expected <= 200000; ++expected) {
    const std::string line = std::to_string(expected) + "\r\n";
    ASSERT_EQ(run.output.compare(from, line.size(), line), 0) << "line " << expected;
    from += line.size();
  }
  EXPECT_EQ(run.output.substr(from), "end\r\n");
}

// Output comes in calls of at most the slice the consumer set, and a pause
// asked for inside the callback stops the reads at once: the screen model's
// pace overshot its limit by a whole 64 KiB read before. Without a slice a
// whole read (up to the terminal's ~4 KiB buffer) is one call.
TEST(PtyProcess, PauseInTheCallbackStopsWithinASlice) {
  using namespace std::chrono_literals;
  boost::asio::io_context io;
  SpawnOptions options;
  options.argv = {"sh", "-c", "exec yes 0123456789"};
  auto spawned = spawn_pty_process(io, options);
  ASSERT_TRUE(spawned) << spawned.error();
  auto process = std::move(spawned.value());
  const int pid = *process->process_id();
  // Nobody reads yet: the terminal's buffer fills and the program blocks.
  for (int i = 0; i < 500; ++i) {
    auto info = test_util::state_and_parent(pid);
    if (info && info->first == 'S') break;
    std::this_thread::sleep_for(10ms);
  }
  std::size_t received = 0;
  std::size_t largest = 0;
  int calls = 0;
  bool pause_in_callback = true;
  // Below what one read of a flood brings (the terminal's ~4 KiB buffer).
  constexpr std::size_t kSlice = 2048;
  process->set_output_slice(kSlice);
  process->start({[&](std::string_view bytes) {
                    ++calls;
                    received += bytes.size();
                    largest = std::max(largest, bytes.size());
                    if (pause_in_callback) process->pause_output(true);
                  },
                  [](ExitStatus) {}});
  const auto deadline = std::chrono::steady_clock::now() + 300ms;
  while (std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(20ms);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_LE(largest, kSlice);
  pause_in_callback = false;
  process->pause_output(false);
  while (received < 1'000'000 && io.run_one_for(5s) > 0) io.restart();
  EXPECT_GE(received, 1'000'000u);
  EXPECT_LE(largest, kSlice);
  // Back to whole reads: calls larger than the slice come again
  // (a flood fills the terminal's buffer, so reads bring more than it).
  process->set_output_slice(std::string::npos);
  largest = 0;
  const std::size_t before = received;
  while (received < before + 4'000'000 && io.run_one_for(5s) > 0) io.restart();
  EXPECT_GT(largest, kSlice);
  EXPECT_LE(largest, PtyChannel::kMaxOutputSlice);
}

TEST(PtyProcess, SigtermEndsAGroupStoppedWithCtrlZ) {
  // ctrl-z stops the program (no job control to resume it); SIGTERM stays
  // pending until it runs again, so stop waited out its grace for SIGKILL.
  PtyRun run;
  ASSERT_EQ(run.spawn({"sleep", "30"}), "");
  int pid = *run.process->process_id();
  ASSERT_TRUE(run.run_until([&] {
    auto info = test_util::state_and_parent(pid);
    return info && info->first == 'S';
  }));
  run.process->write("\x1a");  // ctrl-z: SIGTSTP to the foreground group
  ASSERT_TRUE(run.run_until([&] {
    auto info = test_util::state_and_parent(pid);
    return info && info->first == 'T';
  }));
  run.process->send_signal(SIGTERM);
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.exit->signal, SIGTERM);
}

TEST(PtyProcess, NothingOfTheGroupSurvivesSigkill) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "sleep 1000 & sleep 1000 & echo ready; wait"}), "");
  int group = run.process->process_group();
  ASSERT_TRUE(run.wait_for_output("ready"));
  run.process->send_signal(SIGKILL);
  ASSERT_TRUE(run.wait_for_exit());
  errno = 0;
  EXPECT_EQ(::kill(-group, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(children_of_test(true), std::vector<int>{});
}

// A job that job control moved into a group of its own, in the terminal's
// session; its pid, pinned by a pidfd that turns readable when it ends.
struct SessionJob {
  pid_t pid = -1;
  UniqueFd pidfd;
};
SessionJob start_job_in_own_group(PtyRun& run) {
  SessionJob job;
  // `set -m`: job control, so the job gets a group of its own, as in a shell.
  if (!run.spawn({"sh", "-c", "set -m; sleep 600 & echo \"job=$!=\"; wait"}).empty()) return job;
  if (!run.wait_for_output("=\r\n")) return job;
  auto at = run.output.find("job=");
  job.pid = std::atoi(run.output.c_str() + at + 4);
  job.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, job.pid, 0)));
  return job;
}
bool ends_within_deadline(const UniqueFd& pidfd) {
  struct pollfd ended {
    pidfd.get(), POLLIN, 0
  };
  return ::poll(&ended, 1,
                static_cast<int>(std::chrono::milliseconds(test_util::kDeadline).count())) == 1;
}

TEST(PtyProcess, SigkillEndsJobsInOtherGroupsOfTheSession) {
  PtyRun run;
  auto job = start_job_in_own_group(run);
  ASSERT_TRUE(job.pidfd) << run.output;
  ASSERT_NE(::getpgid(job.pid), run.process->process_group());
  run.process->send_signal(SIGKILL);
  EXPECT_TRUE(ends_within_deadline(job.pidfd));
  ASSERT_TRUE(run.wait_for_exit());
}

TEST(PtyProcess, DestroyingEndsJobsInOtherGroupsOfTheSession) {
  PtyRun run;
  auto job = start_job_in_own_group(run);
  ASSERT_TRUE(job.pidfd) << run.output;
  run.process.reset();
  EXPECT_TRUE(ends_within_deadline(job.pidfd));
}

TEST(PtyProcess, SigtermEndsJobsInOtherGroupsOfTheSession) {
  // `cd x && timeout 100 make; ...`: GNU timeout runs in a group of its own;
  // stop's SIGTERM reached only the shell, and timeout and make lived on.
  PtyRun run;
  auto job = start_job_in_own_group(run);
  ASSERT_TRUE(job.pidfd) << run.output;
  run.process->send_signal(SIGTERM);
  EXPECT_TRUE(ends_within_deadline(job.pidfd));
  ASSERT_TRUE(run.wait_for_exit());
}

// Starts `sh -c 'set -m; PREFIX sleep 600 & ...'`, its job's stdio off the
// terminal, and returns once the job's pid is known (the shell then exits).
SessionJob start_job_left_behind(PtyRun& run, const std::string& prefix) {
  SessionJob job;
  std::string script =
      "set -m; " + prefix + "sleep 600 </dev/null >/dev/null 2>&1 & echo \"job=$!=\"";
  if (!run.spawn({"sh", "-c", script}).empty()) return job;
  if (!run.wait_for_output("=\r\n")) return job;
  job.pid = std::atoi(run.output.c_str() + run.output.find("job=") + 4);
  job.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, job.pid, 0)));
  return job;
}

TEST(PtyProcess, AJobInAGroupOfItsOwnKeepsTheChannelAlive) {
  // Like `server &` in the program's own group: the execution runs on, so
  // stop can end it; it ended at once, leaving the job an orphan.
  PtyRun run;
  auto job = start_job_left_behind(run, "");
  ASSERT_TRUE(job.pidfd) << run.output;
  EXPECT_FALSE(run.run_until([&] { return run.exit.has_value(); }, std::chrono::milliseconds(700)));
  ::kill(job.pid, SIGKILL);
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(run.exit->code, 0);
}

TEST(PtyProcess, AJobThatIgnoresTheHangupDoesNotHoldTheChannel) {
  // nohup: it means to outlive the terminal.
  PtyRun run;
  auto job = start_job_left_behind(run, "nohup ");
  ASSERT_TRUE(job.pidfd) << run.output;
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_EQ(::kill(job.pid, 0), 0);
  ::kill(job.pid, SIGKILL);
}

TEST(PtyProcess, ResizeIsSeenByTheProgram) {
  PtyRun run;
  SpawnOptions options;
  options.argv = {"sh", "-c", "stty size; echo ready; read line; stty size"};
  ASSERT_EQ(run.spawn(options), "");
  ASSERT_TRUE(run.wait_for_output("ready"));
  EXPECT_NE(run.output.find("40 120"), std::string::npos);
  run.process->resize({100, 30});
  EXPECT_EQ(run.process->size(), (TerminalSize{100, 30}));
  run.process->write("\n");
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_NE(run.output.find("30 100"), std::string::npos) << run.output;
}

TEST(PtyProcess, ResizeSendsSigwinchToForegroundGroup) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"bash", "-c",
                       "trap 'echo winch $(stty size)' WINCH; echo ready; "
                       "while :; do sleep 0.05; done"}),
            "");
  ASSERT_TRUE(run.wait_for_output("ready"));
  run.process->resize({90, 25});
  ASSERT_TRUE(run.wait_for_output("winch 25 90"));
}

TEST(PtyProcess, LargeInputIsQueuedNotLost) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "stty raw -echo; echo ready; head -c 300000 | wc -c"}), "");
  ASSERT_TRUE(run.wait_for_output("ready"));
  run.process->write(std::string(300000, 'a'));
  ASSERT_TRUE(run.wait_for_exit());
  EXPECT_NE(run.output.find("300000"), std::string::npos) << run.output;
}

TEST(PtyProcess, DestructorKillsLiveGroupAndReaps) {
  PtyRun run;
  ASSERT_EQ(run.spawn({"sh", "-c", "sleep 1000 & exec sleep 1000"}), "");
  int group = run.process->process_group();
  EXPECT_EQ(::kill(-group, 0), 0);
  run.process.reset();
  errno = 0;
  EXPECT_EQ(::kill(-group, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(children_of_test(false), std::vector<int>{});
  EXPECT_FALSE(run.exit);  // no callback after destruction
}

TEST(PtyProcess, DestroyingFromOnOutputIsSafe) {
  PtyRun run;
  SpawnOptions options;
  options.argv = {"sh", "-c", "echo one; exec sleep 1000"};
  auto spawned = spawn_pty_process(run.io, options);
  ASSERT_TRUE(spawned.ok()) << spawned.error();
  run.process = std::move(spawned.value());
  run.process->start({[&](std::string_view) { run.process.reset(); }, {}});
  ASSERT_TRUE(run.run_until([&] { return run.process == nullptr; }));
  EXPECT_EQ(children_of_test(false), std::vector<int>{});
}

}  // namespace
}  // namespace agentty::pty
