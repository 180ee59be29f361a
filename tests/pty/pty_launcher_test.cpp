// PtyLauncher and its spare supervisor with real programs on real PTYs: a
// program run in a spare behaves exactly as a freshly spawned one (output,
// exit status, cwd, environment, size, fds, errors), a dead spare is replaced,
// and nothing is left running or as a zombie.
#include "pty/pty_launcher.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "pty/pty_test_util.hpp"
#include "pty/supervisor_protocol.hpp"
#include "support/loop_thread.hpp"

namespace agentty::pty {
namespace {

using test_util::children_of_test;
using test_util::kDeadline;

// Runs launcher.launch() on `io` until it has answered.
Expected<std::unique_ptr<PtyProcess>> launch_now(boost::asio::io_context& io, PtyLauncher& launcher,
                                                 SpawnOptions options) {
  std::optional<Expected<std::unique_ptr<PtyProcess>>> answer;
  test_support::spawn_with_result(io, launcher.launch(std::move(options)),
                                  [&](auto got) { answer.emplace(std::move(got)); });
  auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!answer && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  if (!answer) return make_error("launch did not answer within the deadline");
  return std::move(*answer);
}

struct Launched {
  std::string error;
  std::string output;
  std::optional<ExitStatus> exit;
};

class PtyLauncherTest : public ::testing::Test {
 protected:
  boost::asio::io_context io;
  PtyLauncher launcher{io};

  // Launches, runs the loop until the program has ended (and the posted
  // refill has run), and returns what it printed.
  Launched run(SpawnOptions options) {
    Launched result;
    auto process = launch_now(io, launcher, std::move(options));
    if (!process) {
      result.error = process.error();
      launcher.prepare_spare();
      settle();
      return result;
    }
    process.value()->start({[&](std::string_view bytes) { result.output.append(bytes); },
                            [&](ExitStatus status) { result.exit = status; }});
    auto deadline = std::chrono::steady_clock::now() + kDeadline;
    while (!result.exit && std::chrono::steady_clock::now() < deadline) {
      io.restart();
      io.run_one_for(std::chrono::milliseconds(50));
    }
    launcher.prepare_spare();  // as the Registry does when a program ends
    settle();
    return result;
  }
  Launched run(std::vector<std::string> argv) {
    SpawnOptions options;
    options.argv = std::move(argv);
    return run(std::move(options));
  }
  // Runs whatever is ready now (the refill prepare_spare posts).
  void settle() {
    io.restart();
    io.poll();
  }
  // Waits until our child `pid`, killed, is a zombie (we have not reaped it).
  void wait_until_dead(pid_t pid) {
    auto deadline = std::chrono::steady_clock::now() + kDeadline;
    while (test_util::state_and_parent(pid)->first != 'Z' &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // A spare is waiting (made by a first launch).
  pid_t ready_spare() {
    if (!launcher.spare_pid()) {
      EXPECT_EQ(run({"true"}).error, "");
    }
    EXPECT_TRUE(launcher.spare_pid().has_value());
    return launcher.spare_pid().value_or(-1);
  }
};

TEST_F(PtyLauncherTest, MakesASpareWhenAskedAndRunsTheNextProgramInIt) {
  EXPECT_FALSE(launcher.spare_pid().has_value());  // none before any program ended
  auto first = run({"echo", "first"});
  EXPECT_EQ(first.output, "first\r\n");
  pid_t spare = launcher.spare_pid().value_or(-1);
  ASSERT_GT(spare, 0);
  auto second = run({"sh", "-c", "echo second; exit 7"});
  EXPECT_EQ(second.output, "second\r\n");
  ASSERT_TRUE(second.exit.has_value());
  EXPECT_EQ(second.exit->code, 7);
  // The spare was used (its supervisor has ended with the program) and replaced.
  EXPECT_NE(launcher.spare_pid().value_or(spare), spare);
  EXPECT_EQ(::kill(spare, 0), -1);
}

TEST_F(PtyLauncherTest, ASpareRunsWithTheRequestedDirectoryEnvironmentAndSize) {
  ready_spare();
  auto dir = std::filesystem::temp_directory_path() / ("agentty-spare-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  SpawnOptions options;
  options.argv = {"sh", "-c", "pwd; echo \"$FOO|$TERM|$PAGER\"; stty size; ls -1 /proc/$$/fd"};
  options.cwd = dir.string();
  options.env = {{"FOO", "bar baz"}};
  options.size = {101, 33};
  auto launched = run(options);
  EXPECT_EQ(launched.output,
            dir.string() + "\r\nbar baz|xterm-256color|cat\r\n33 101\r\n0\r\n1\r\n2\r\n");
  std::filesystem::remove_all(dir);
}

TEST_F(PtyLauncherTest, ASpareGivesTheProgramItsStdinFile) {
  ready_spare();
  auto launched = run(test_util::stdin_file_probe());
  EXPECT_EQ(launched.error, "");
  EXPECT_EQ(launched.output, test_util::kStdinFileProbeOutput);
  // The next one reads the terminal again.
  auto next = run({"sh", "-c", "test -t 0 && echo stdin-is-the-terminal"});
  EXPECT_EQ(next.output, "stdin-is-the-terminal\r\n");
}

TEST_F(PtyLauncherTest, ASpareGivesTheSameErrorsAsAFreshSpawn) {
  ready_spare();
  SpawnOptions missing;
  missing.argv = {"nosuchprog-agentty"};
  missing.env = {{"PATH", "/usr/bin:/bin"}};  // every directory searchable (else EACCES)
  EXPECT_EQ(run(missing).error,
            "cannot run 'nosuchprog-agentty': No such file or directory (execvp)");
  ready_spare();
  SpawnOptions options;
  options.argv = {"true"};
  options.cwd = "/nope/agentty";
  EXPECT_EQ(run(options).error, "cwd '/nope/agentty': No such file or directory");
  ready_spare();
  EXPECT_EQ(run(SpawnOptions{}).error, "no program to run");
  // Only the current spare and the maker are children; nothing failed is left as a zombie.
  // (spare_pid() first: it waits for the forked spare to say its pid.)
  std::vector<int> expected{launcher.spare_pid().value_or(-1), launcher.maker_pid().value_or(-1)};
  std::sort(expected.begin(), expected.end());
  auto children = children_of_test(false);
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children, expected);
}

// A spare's program process stopped (SIGSTOP) cannot take its instruction:
// the launch waits for it, and the loop must go on serving meanwhile.
TEST_F(PtyLauncherTest, AProgramSlowToStartLeavesTheLoopRunning) {
  pid_t spare = ready_spare();
  ASSERT_GT(spare, 0);
  // The spare forks its program's process as soon as it has set up.
  pid_t waiting = -1;
  auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (waiting <= 0 && std::chrono::steady_clock::now() < deadline) {
    std::ifstream children("/proc/" + std::to_string(spare) + "/task/" + std::to_string(spare) +
                           "/children");
    if (!(children >> waiting)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GT(waiting, 0);
  ASSERT_EQ(::kill(waiting, SIGSTOP), 0);
  // Were the launch to block the loop, this lets it go on after the
  // deadline, so the test fails instead of hanging.
  std::promise<void> continued;
  std::thread rescue([&, done = continued.get_future()] {
    if (done.wait_for(kDeadline) == std::future_status::timeout) ::kill(waiting, SIGCONT);
  });

  std::optional<Expected<std::unique_ptr<PtyProcess>>> answer;
  test_support::spawn_with_result(io, launcher.launch({{"echo", "late"}, {}, {}, {}, true, {}}),
                                  [&](auto got) { answer.emplace(std::move(got)); });
  bool served = false;
  boost::asio::post(io, [&] { served = true; });
  io.restart();
  while (!served) io.run_one();
  EXPECT_FALSE(answer.has_value());  // still waiting for the stopped process

  EXPECT_EQ(::kill(waiting, SIGCONT), 0);
  continued.set_value();
  rescue.join();
  while (!answer && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(*answer) << answer->error();
  std::string output;
  std::optional<ExitStatus> exit;
  answer->value()->start({[&](std::string_view bytes) { output.append(bytes); },
                          [&](ExitStatus status) { exit = status; }});
  while (!exit && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(output, "late\r\n");
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->code, 0);
}

TEST_F(PtyLauncherTest, ASpareKilledFromOutsideIsReplacedAndTheProgramStillRuns) {
  pid_t spare = ready_spare();
  ASSERT_EQ(::kill(spare, SIGKILL), 0);
  wait_until_dead(spare);
  auto launched = run({"echo", "still runs"});
  EXPECT_EQ(launched.error, "");
  EXPECT_EQ(launched.output, "still runs\r\n");
  EXPECT_EQ(children_of_test(true), std::vector<int>{});  // the dead spare was reaped
}

// The spare's program process, forked ahead and waiting for the instruction.
pid_t waiting_program_of(pid_t spare) {
  auto path = "/proc/" + std::to_string(spare) + "/task/" + std::to_string(spare) + "/children";
  auto deadline = std::chrono::steady_clock::now() + kDeadline;
  int child = 0;
  while (child <= 0 && std::chrono::steady_clock::now() < deadline) {
    std::istringstream(test_util::read_text_file(path)) >> child;
    if (child <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return child;
}

bool ends_within_deadline(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return ::kill(pid, 0) != 0;
}

TEST_F(PtyLauncherTest, ASparesWaitingProgramDiesWithItsSupervisor) {
  pid_t spare = ready_spare();
  pid_t waiting = waiting_program_of(spare);
  ASSERT_GT(waiting, 0);
  ASSERT_EQ(::kill(spare, SIGKILL), 0);
  EXPECT_TRUE(ends_within_deadline(waiting));  // PR_SET_PDEATHSIG: no orphan left waiting
  EXPECT_EQ(run({"echo", "still runs"}).output, "still runs\r\n");
  EXPECT_EQ(children_of_test(true), std::vector<int>{});
}

TEST_F(PtyLauncherTest, ASpareWhoseWaitingProgramWasKilledIsReplaced) {
  pid_t spare = ready_spare();
  pid_t waiting = waiting_program_of(spare);
  ASSERT_GT(waiting, 0);
  ASSERT_EQ(::kill(waiting, SIGKILL), 0);
  wait_until_dead(spare);  // the supervisor follows its program
  auto launched = run({"echo", "still runs"});
  EXPECT_EQ(launched.error, "");
  EXPECT_EQ(launched.output, "still runs\r\n");
  EXPECT_EQ(children_of_test(true), std::vector<int>{});
}

TEST_F(PtyLauncherTest, DestroyingTheLauncherEndsAndReapsTheSpareAndTheMaker) {
  pid_t spare = -1;
  pid_t maker = -1;
  {
    boost::asio::io_context own_io;
    PtyLauncher own(own_io);
    own.prepare_spare();
    own_io.poll();
    spare = own.spare_pid().value_or(-1);
    maker = own.maker_pid().value_or(-1);
    ASSERT_GT(spare, 0);
    ASSERT_GT(maker, 0);
  }
  EXPECT_EQ(::kill(spare, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(::kill(maker, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(PtyLauncherTest, SparesAreForkedByTheMakerAsOurOwnChildren) {
  pid_t spare = ready_spare();
  ASSERT_TRUE(launcher.maker_pid().has_value());
  EXPECT_EQ(test_util::state_and_parent(spare)->second, ::getpid());  // CLONE_PARENT
  // A program launched with no spare waiting is forked by the maker too.
  ASSERT_EQ(::kill(spare, SIGKILL), 0);
  wait_until_dead(spare);
  auto launched = run({"sh", "-c", "echo forked; exit 3"});
  EXPECT_EQ(launched.output, "forked\r\n");
  ASSERT_TRUE(launched.exit.has_value());
  EXPECT_EQ(launched.exit->code, 3);
  EXPECT_EQ(children_of_test(true), std::vector<int>{});
}

// A call that arrives before the refill due for an ended program has run
// forks a spare of its own; the refill waits until that launch is done
// instead of forking a second spare that competes with the program starting.
TEST_F(PtyLauncherTest, ARefillDueDuringALaunchWaitsUntilTheLaunchIsDone) {
  ready_spare();
  SpawnOptions holder_options;
  holder_options.argv = {"cat"};
  auto holder = launch_now(io, launcher, holder_options);  // takes the spare
  ASSERT_TRUE(holder) << holder.error();
  ASSERT_FALSE(launcher.spare_pid().has_value());

  std::optional<Expected<std::unique_ptr<PtyProcess>>> answer;
  SpawnOptions options;
  options.argv = {"true"};
  test_support::spawn_with_result(io, launcher.launch(options),
                                  [&](auto got) { answer.emplace(std::move(got)); });
  launcher.prepare_spare();  // due before the launch has run
  auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!answer && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(*answer) << answer->error();
  EXPECT_FALSE(launcher.spare_pid().has_value()) << "a second spare was forked during the launch";
  settle();
  EXPECT_TRUE(launcher.spare_pid().has_value()) << "the deferred refill was not made";
}

TEST_F(PtyLauncherTest, AMakerKilledFromOutsideIsDroppedAndProgramsStillRun) {
  ready_spare();
  pid_t maker = launcher.maker_pid().value_or(-1);
  ASSERT_GT(maker, 0);
  ASSERT_EQ(::kill(maker, SIGKILL), 0);
  wait_until_dead(maker);
  for (int i = 0; i < 3; ++i) {  // the waiting spare, then spares exec'd without the maker
    auto launched = run({"echo", "still runs"});
    EXPECT_EQ(launched.error, "");
    EXPECT_EQ(launched.output, "still runs\r\n");
  }
  EXPECT_FALSE(launcher.maker_pid().has_value());
  EXPECT_TRUE(launcher.spare_pid().has_value());
  EXPECT_EQ(children_of_test(true), std::vector<int>{});  // the dead maker was reaped
}

TEST(PtyLauncher, KeepsNoSpareWhenToldNotTo) {
  boost::asio::io_context io;
  PtyLauncher launcher(io, false);
  ASSERT_TRUE(launch_now(io, launcher, {{"true"}, {}, {}, {}, true, {}}));
  launcher.prepare_spare();
  io.poll();
  EXPECT_FALSE(launcher.spare_pid().has_value());
}

TEST(SupervisorInstruction, RoundTripsAnyArgumentsEnvironmentAndDirectory) {
  supervisor::Instruction sent{
      "/tmp/a dir", {"prog", "", "two words", "line\nbreak", "ü"}, {"A=1", "EMPTY="}};
  std::string message = supervisor::encode(sent);
  std::uint32_t length = 0;
  std::memcpy(&length, message.data(), sizeof length);
  ASSERT_EQ(length, message.size() - sizeof length);
  auto got = supervisor::decode(std::string_view(message).substr(sizeof length));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->cwd, sent.cwd);
  EXPECT_EQ(got->argv, sent.argv);
  EXPECT_EQ(got->env, sent.env);
  auto no_env = supervisor::decode(supervisor::encode({"", {"x"}, {}}).substr(sizeof length));
  ASSERT_TRUE(no_env.has_value());
  EXPECT_EQ(no_env->argv, std::vector<std::string>{"x"});
  EXPECT_TRUE(no_env->env.empty());
}

TEST(SupervisorInstruction, RejectsMalformedPayloads) {
  using std::string_literals::operator""s;
  EXPECT_FALSE(supervisor::decode(""));
  EXPECT_FALSE(
      supervisor::decode("1\0"s
                         "0\0"s
                         "/\0"s
                         "prog"s));  // unterminated
  EXPECT_FALSE(
      supervisor::decode("2\0"s
                         "0\0"s
                         "/\0"s
                         "prog\0"s));  // count mismatch
  EXPECT_FALSE(
      supervisor::decode("0\0"s
                         "0\0"s
                         "/\0"s));  // no program
  EXPECT_FALSE(
      supervisor::decode("x\0"s
                         "0\0"s
                         "/\0"s
                         "prog\0"s));  // not a count
  EXPECT_TRUE(
      supervisor::decode("1\0"s
                         "0\0"s
                         "/\0"s
                         "prog\0"s));
}

}  // namespace
}  // namespace agentty::pty
