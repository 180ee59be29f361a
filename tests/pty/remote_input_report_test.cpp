// The SSH host probe: reading its output (what each line means for
// input_state), and its script run for real on this machine's /proc against
// a terminal of ours, as sshd would have it (a child of the probe's parent,
// leading the terminal's session).
#include "pty/remote_input_report.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace agentty::pty {
namespace {

using Outcome = RemoteInputReport::Outcome;

std::string report(std::string_view body) {
  return "agentty-probe 1\narch x86_64\nleader 100 tty /dev/pts/3 fg 100\n" + std::string(body) +
         "end\n";
}

TEST(RemoteInputReport, PythonInPselectHoldingTheTerminalIsReading) {
  auto r = read_remote_input_report(
      report("p 100 S 012\nt 100 100 S 270 1 1 poll_schedule_timeout.constprop.0\n"));
  EXPECT_EQ(r.outcome, Outcome::answered);
  EXPECT_EQ(r.state, InputState::reading_input);
  EXPECT_EQ(r.leader, 100);
}

TEST(RemoteInputReport, ReadOnTheTerminalIsReadingAndElsewhereIsNot) {
  EXPECT_EQ(read_remote_input_report(report("p 100 S 012\nt 100 100 S 0 0 1 wait_woken\n")).state,
            InputState::reading_input);
  // read(3) where fd 3 is a pipe: a program reading its data, not the person.
  EXPECT_EQ(read_remote_input_report(report("p 100 S 012\nt 100 100 S 0 3 0 pipe_read\n")).state,
            InputState::busy);
}

TEST(RemoteInputReport, SleepingIsBusy) {
  auto r = read_remote_input_report(report("p 100 S 012\nt 100 100 S 230 0 1 hrtimer_nanosleep\n"));
  EXPECT_EQ(r.state, InputState::busy);
}

TEST(RemoteInputReport, ShellWaitingForItsReadingChildIsReading) {
  auto r =
      read_remote_input_report(report("p 100 S 012\nt 100 100 S 61 ffffffff 0 do_wait\n"
                                      "p 101 S 012\nt 101 101 S 0 0 1 wait_woken\n"));
  EXPECT_EQ(r.state, InputState::reading_input);
}

// `su user -c CMD` (util-linux) runs CMD with setsid on the same terminal:
// the foreground group is su in wait4, and the reader is outside the
// terminal's session ("o" lines: FDS counts the terminal itself, never
// /dev/tty, which is not it for a process that left the session).
TEST(RemoteInputReport, ReaderThatLeftTheSessionIsReading) {
  auto r = read_remote_input_report(
      report("p 100 S 012\nt 100 100 S 61 ffffffff 0 do_wait\no 105 S 012\nt 105 105 S 0 0 1 "
             "wait_woken\n"));
  EXPECT_EQ(r.outcome, Outcome::answered);
  EXPECT_EQ(r.state, InputState::reading_input);
  // Only the wchan to go by (another user's process under Yama): its stdin.
  EXPECT_EQ(read_remote_input_report(report("p 100 S 012\nt 100 100 S 61 ffffffff 0 do_wait\n"
                                            "o 105 S 012\nt 105 105 S - - - n_tty_read\n"))
                .state,
            InputState::reading_input);
}

TEST(RemoteInputReport, ProgramThatLeftTheSessionAndDoesNotReadChangesNothing) {
  const std::string su = "p 100 S 012\nt 100 100 S 61 ffffffff 0 do_wait\n";
  // Sleeping.
  EXPECT_EQ(read_remote_input_report(report(su + "o 105 S 012\nt 105 105 S 230 0 1 "
                                                 "hrtimer_nanosleep\n"))
                .state,
            InputState::busy);
  // A daemon logging to the terminal, polling its sockets: only fd 0 makes
  // a poll a read of the terminal for a program outside its session.
  EXPECT_EQ(read_remote_input_report(
                report(su + "o 105 S 12\nt 105 105 S 7 5 0 poll_schedule_timeout.constprop.0\n"))
                .state,
            InputState::busy);
  // Nothing readable about it: no reason to fall back to the guess.
  EXPECT_EQ(read_remote_input_report(report(su + "o 105 S 012\nt 105 105 S - - - 0\n")).state,
            InputState::busy);
  // The foreground's own answer stands: stopped is still suspended.
  EXPECT_EQ(read_remote_input_report(
                report("p 100 T 012\nt 100 100 T - - - -\no 105 S 012\nt 105 105 S 230 0 1 "
                       "hrtimer_nanosleep\n"))
                .state,
            InputState::suspended);
}

TEST(RemoteInputReport, EveryMemberStoppedIsSuspended) {
  auto r = read_remote_input_report(report("p 100 T 012\nt 100 100 T - - - -\n"));
  EXPECT_EQ(r.state, InputState::suspended);
  EXPECT_EQ(r.foreground_group, 100);  // what resume sends SIGCONT
}

TEST(RemoteInputReport, NoForegroundMemberIsBusy) {
  EXPECT_EQ(read_remote_input_report(report("")).state, InputState::busy);
}

TEST(RemoteInputReport, EpollCountsOnlyWithTheTerminalRegisteredForInput) {
  // node at its prompt: fd 0 in the epoll set with EPOLLIN (events 0x19).
  EXPECT_EQ(read_remote_input_report(report("p 100 S 012\n"
                                            "e 100 100 0 19 1\ne 100 100 9 19 0\n"
                                            "t 100 100 S 281 5 0 ep_poll\n"))
                .state,
            InputState::reading_input);
  // node waiting on a timer, holding the terminal but not reading it.
  EXPECT_EQ(read_remote_input_report(
                report("p 100 S 012\ne 100 100 9 19 0\nt 100 100 S 281 5 0 ep_poll\n"))
                .state,
            InputState::busy);
}

TEST(RemoteInputReport, WithoutTheSyscallFileWchanDecides) {
  // Yama's ptrace_scope >= 1: /proc/<tid>/syscall is not ours to read.
  EXPECT_EQ(read_remote_input_report(report("p 100 S 012\nt 100 100 S - - - n_tty_read\n")).state,
            InputState::reading_input);
  EXPECT_EQ(read_remote_input_report(
                report("p 100 S 012\nt 100 100 S - - - poll_schedule_timeout.constprop.0\n"))
                .state,
            InputState::reading_input);
  EXPECT_EQ(read_remote_input_report(
                report("p 100 S -\nt 100 100 S - - - poll_schedule_timeout.constprop.0\n"))
                .state,
            InputState::busy);
  EXPECT_EQ(
      read_remote_input_report(report("p 100 S 012\nt 100 100 S - - - hrtimer_nanosleep\n")).state,
      InputState::busy);
  // Neither file said anything: the caller guesses.
  EXPECT_EQ(read_remote_input_report(report("p 100 S 012\nt 100 100 S - - - 0\n")).state,
            InputState::unknown);
}

TEST(RemoteInputReport, UnknownArchitectureFallsBackToWchan) {
  auto r = read_remote_input_report(
      "agentty-probe 1\narch riscv64\nleader 7 tty /dev/pts/0 fg 7\np 7 S 012\n"
      "t 7 7 S 63 0 1 n_tty_read\nend\n");
  EXPECT_EQ(r.state, InputState::reading_input);
}

TEST(RemoteInputReport, RunningThreadIsNotReading) {
  EXPECT_EQ(read_remote_input_report(report("p 100 R 012\nt 100 100 R - - - -\n")).state,
            InputState::busy);
}

TEST(RemoteInputReport, HostsThatCannotTellSaySo) {
  auto r = read_remote_input_report("agentty-probe 1\nunsupported FreeBSD\n");
  EXPECT_EQ(r.outcome, Outcome::unsupported);
  EXPECT_EQ(r.detail, "FreeBSD");
  EXPECT_EQ(read_remote_input_report("agentty-probe 1\narch x86_64\nnotfound\n").outcome,
            Outcome::not_found);
}

TEST(RemoteInputReport, WhatAnRcPrintedBeforeTheReportIsSkipped) {
  auto r = read_remote_input_report("Welcome!\n" +
                                    report("p 100 S 012\nt 100 100 S 0 0 1 wait_woken\n"));
  EXPECT_EQ(r.outcome, Outcome::answered);
  EXPECT_EQ(r.state, InputState::reading_input);
}

TEST(RemoteInputReport, CutShortOrForeignOutputIsMalformed) {
  EXPECT_EQ(read_remote_input_report("").outcome, Outcome::malformed);
  EXPECT_EQ(read_remote_input_report("Welcome to the host!\nagentty-probe 1\n").outcome,
            Outcome::malformed);
  // No "end": the host cut it off midway.
  EXPECT_EQ(read_remote_input_report("agentty-probe 1\narch x86_64\nleader 5 tty /dev/pts/1 fg 5\n"
                                     "p 5 S 012\n")
                .outcome,
            Outcome::malformed);
  EXPECT_EQ(read_remote_input_report(report("p x S 012\n")).outcome, Outcome::malformed);
}

// stty -a's words on the host: what the probe cannot see of a program of
// another user (sudo, su at a password prompt: wchan reads "0"), the
// terminal's modes say.
TEST(RemoteInputReport, TerminalModesComeFromStty) {
  const std::string asleep = "p 100 S -\nt 100 100 S - - - 0\n";
  auto prompt = read_remote_input_report(report("modes icanon -echo\n" + asleep));
  EXPECT_EQ(prompt.state, InputState::unknown);
  ASSERT_TRUE(prompt.line_modes);
  EXPECT_EQ(*prompt.line_modes, (LineModes{true, false}));
  EXPECT_TRUE(prompt.line_modes->hides_typed_line());
  // readline: both off, and it draws the typing itself.
  auto readline = read_remote_input_report(report("modes -icanon -echo\n"));
  ASSERT_TRUE(readline.line_modes);
  EXPECT_FALSE(readline.line_modes->hides_typed_line());
  EXPECT_TRUE(readline.line_modes->set_for_line_editor());  // isig unsaid: on
  // A terminal left raw: signals off too, so no line editor reads it.
  auto raw = read_remote_input_report(report("modes -icanon -echo -isig\n"));
  ASSERT_TRUE(raw.line_modes);
  EXPECT_EQ(*raw.line_modes, (LineModes{false, false, false}));
  EXPECT_FALSE(raw.line_modes->set_for_line_editor());
  // No stty on the host, or one that named only one of the two: unknown.
  EXPECT_FALSE(read_remote_input_report(report(asleep)).line_modes);
  EXPECT_FALSE(read_remote_input_report(report("modes -echo\n")).line_modes);
}

// The names the local backend gives (foreground_program, reading_program),
// which the agent's messages use: "git commit" waits while vim reads.
TEST(RemoteInputReport, NamesTheForegroundLeaderAndTheReader) {
  auto r =
      read_remote_input_report(report("p 100 S 012\nn 100 git\nt 100 100 S 61 ffffffff 0 do_wait\n"
                                      "p 101 S 012\nn 101 vim\nt 101 101 S 0 0 1 wait_woken\n"));
  EXPECT_EQ(r.state, InputState::reading_input);
  EXPECT_EQ(r.foreground_program, "git");
  EXPECT_EQ(r.reading_program, "vim");
  // A comm may hold spaces; nobody reading: no reader.
  auto busy = read_remote_input_report(
      report("p 100 S 012\nn 100 tmux: server\nt 100 100 S 230 0 1 hrtimer_nanosleep\n"));
  EXPECT_EQ(busy.foreground_program, "tmux: server");
  EXPECT_FALSE(busy.reading_program);
  // The group's leader gone (`git log | less` once git is done): no name for it.
  auto pipeline =
      read_remote_input_report(report("p 101 S 012\nn 101 less\nt 101 101 S 0 0 1 wait_woken\n"));
  EXPECT_FALSE(pipeline.foreground_program);
  EXPECT_EQ(pipeline.reading_program, "less");
}

TEST(RemoteInputReport, ScriptCarriesTheTagOrTheLeader) {
  EXPECT_TRUE(remote_input_script("0a1b", std::nullopt).starts_with("tag=0a1b leader=\n"));
  EXPECT_TRUE(remote_input_script("", 4242).starts_with("tag= leader=4242\n"));
}

// ---- the script on this machine ----------------------------------------------

// A program on a terminal of its own (forkpty: it leads the terminal's
// session, as sshd's child does), a child of this test process.
struct TerminalProgram {
  pid_t pid = -1;
  int master = -1;
  explicit TerminalProgram(const char* command) {
    pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid == 0) {
      ::execl("/bin/bash", "bash", "-c", command, static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~TerminalProgram() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (master >= 0) ::close(master);
  }
};

// Runs `sh -s` with the script on stdin, as a child of this process (the
// probe's parent is the terminal program's, as on an SSH server).
// `as_user`: the uid (and gid) it runs as, where the test is root.
std::string run_script(const std::string& script, std::optional<uid_t> as_user = std::nullopt) {
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    if (as_user &&
        (::setgroups(0, nullptr) != 0 || ::setgid(*as_user) != 0 || ::setuid(*as_user) != 0))
      ::_exit(126);
    ::execl("/bin/sh", "sh", "-s", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  (void)!::write(in[1], script.data(), script.size());
  ::close(in[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) output.append(buffer, n);
  ::close(out[0]);
  ::waitpid(pid, nullptr, 0);
  return output;
}

// Polls the script until it answers `wanted` (a program starting to read
// has no event to await); the last report either way.
RemoteInputReport probe_until(const std::string& tag, std::optional<int> leader,
                              InputState wanted) {
  RemoteInputReport last;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    last = read_remote_input_report(run_script(remote_input_script(tag, leader)));
    if (last.outcome == Outcome::answered && last.state == wanted) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return last;
}

TEST(RemoteInputScript, FindsTheTaggedTerminalAndSeesASilentRead) {
  TerminalProgram program("export AGENTTY_TERMINAL=feedc0de; read -s secret; echo got");
  ASSERT_GT(program.pid, 0);
  auto r = probe_until("feedc0de", std::nullopt, InputState::reading_input);
  EXPECT_EQ(r.outcome, Outcome::answered);
  EXPECT_EQ(r.state, InputState::reading_input);
  EXPECT_EQ(r.leader, program.pid);
  // `read -s` sets what a password prompt does: a line, not echoed.
  EXPECT_EQ(r.line_modes, (LineModes{true, false}));
}

TEST(RemoteInputScript, NamesTheProgramReadingUnderItsShell) {
  TerminalProgram program("export AGENTTY_TERMINAL=0dd5a1e5; cat; true");
  ASSERT_GT(program.pid, 0);
  auto r = probe_until("0dd5a1e5", std::nullopt, InputState::reading_input);
  EXPECT_EQ(r.state, InputState::reading_input);
  EXPECT_EQ(r.foreground_program, "bash");  // the shell leads the group; cat reads
  EXPECT_EQ(r.reading_program, "cat");
}

TEST(RemoteInputScript, SleepAfterExecIsBusyAndFoundByItsEnvironment) {
  // bash execs the last command: only the environment still carries the tag.
  TerminalProgram program("export AGENTTY_TERMINAL=beefcafe; printf working...; exec sleep 30");
  ASSERT_GT(program.pid, 0);
  auto r = probe_until("beefcafe", std::nullopt, InputState::busy);
  EXPECT_EQ(r.outcome, Outcome::answered);
  EXPECT_EQ(r.state, InputState::busy);
  EXPECT_EQ(r.leader, program.pid);
}

TEST(RemoteInputScript, KnownLeaderNeedsNoTag) {
  TerminalProgram program("read line");
  ASSERT_GT(program.pid, 0);
  auto r = probe_until("", program.pid, InputState::reading_input);
  EXPECT_EQ(r.state, InputState::reading_input);
  EXPECT_EQ(r.line_modes, (LineModes{true, true}));  // an echoed line
  EXPECT_EQ(r.foreground_program, "bash");           // its builtin read
  EXPECT_EQ(r.reading_program, "bash");
}

// `setsid -w` as `su user -c CMD` runs CMD: in a session of its own, on
// the same terminal, while the foreground (setsid) waits for it.
TEST(RemoteInputScript, ReaderThatLeftTheSessionIsReadingInput) {
  TerminalProgram program("export AGENTTY_TERMINAL=5e5510a1; setsid -w bash -c 'read line'");
  ASSERT_GT(program.pid, 0);
  auto r = probe_until("5e5510a1", std::nullopt, InputState::reading_input);
  EXPECT_EQ(r.outcome, Outcome::answered);
  EXPECT_EQ(r.state, InputState::reading_input);
  EXPECT_EQ(r.leader, program.pid);
}

TEST(RemoteInputScript, SleeperThatLeftTheSessionIsBusy) {
  TerminalProgram program("export AGENTTY_TERMINAL=5e5510a2; setsid -w sleep 30");
  ASSERT_GT(program.pid, 0);
  auto r = probe_until("5e5510a2", std::nullopt, InputState::busy);
  EXPECT_EQ(r.outcome, Outcome::answered);
  EXPECT_EQ(r.state, InputState::busy);
}

TEST(RemoteInputScript, AnotherTagIsNotFound) {
  TerminalProgram program("export AGENTTY_TERMINAL=aaaa1111; read line");
  ASSERT_GT(program.pid, 0);
  EXPECT_EQ(
      read_remote_input_report(run_script(remote_input_script("bbbb2222", std::nullopt))).outcome,
      Outcome::not_found);
}

// Whether `pid` runs `name` yet (comm): a program's exec has no event to
// await. Polled up to 20 s, as probe_until: 5 s was the one bound here a
// loaded machine could come near.
bool wait_for_program(pid_t pid, const std::string& name) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string running;
    if (std::getline(comm, running) && running == name) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

// A bare `sudo cmd` on a host: both shells exec, so sudo leads the terminal,
// and its environment (with the tag) is root's. Here root's program and a
// probe run as nobody.
TEST(RemoteInputScript, AnotherUsersProgramLeadingTheTerminalIsFoundWhenAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: runs the probe as another user";
  constexpr uid_t kNobody = 65534;
  const auto probe = [&](const char* tag) {
    return read_remote_input_report(run_script(remote_input_script(tag, std::nullopt), kNobody));
  };
  TerminalProgram program("export AGENTTY_TERMINAL=0dd50d0a; exec sleep 30");
  ASSERT_GT(program.pid, 0);
  ASSERT_TRUE(wait_for_program(program.pid, "sleep"));  // the tag is in its environment only
  auto r = probe("0dd50d0a");
  EXPECT_EQ(r.outcome, Outcome::answered);
  EXPECT_EQ(r.leader, program.pid);
  EXPECT_EQ(r.state, InputState::unknown);  // not the probe's to see
  // Two such terminals cannot be told apart.
  TerminalProgram other("export AGENTTY_TERMINAL=0dd50d0b; exec sleep 30");
  ASSERT_GT(other.pid, 0);
  ASSERT_TRUE(wait_for_program(other.pid, "sleep"));
  EXPECT_EQ(probe("0dd50d0a").outcome, Outcome::not_found);
}

}  // namespace
}  // namespace agentty::pty
