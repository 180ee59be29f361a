// SshChannel against a real OpenSSH sshd: exit codes, byte-exact output,
// terminal input, resize, shell mode, environment, signals and lifetime.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ssh_test_util.hpp"

namespace agentty::pty {
namespace {

using namespace test_util;

class SshChannelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!SshdFixture::unusable_reason()) sshd_ = new SshdFixture();
  }
  static void TearDownTestSuite() {
    delete sshd_;
    sshd_ = nullptr;
  }
  void SetUp() override {
    if (!sshd_) GTEST_SKIP() << *SshdFixture::unusable_reason();
  }

  SshRun run(const std::string& command, TerminalSize size = {}) {
    SshRun r;
    EXPECT_TRUE(r.open(io_, pool_, fixture_target(*sshd_), exec_launch(command, size)))
        << r.open_error;
    return r;
  }

  static SshdFixture* sshd_;
  boost::asio::io_context io_;
  SshConnectionPool pool_{io_, sshd_ ? fixture_options(*sshd_) : SshOptions{}};
};

SshdFixture* SshChannelTest::sshd_ = nullptr;

std::string seq_under_pty(int last) {
  std::string expected;
  for (int i = 1; i <= last; ++i) expected += std::to_string(i) + "\r\n";  // onlcr
  return expected;
}

// What a remote shell that did not exit is doing (sshd runs on this machine):
// its terminal's modes, its signal masks and its children, found by the pid
// the command printed after "ready-".
std::string remote_shell_state(const std::string& output) {
  const auto at = output.find("ready-");
  if (at == std::string::npos) return "(no pid printed)";
  const std::string pid = std::to_string(std::atoi(output.c_str() + at + 6));
  const std::string script =
      "grep -E '^(State|Sig|Shd)' /proc/" + pid + "/status; stty -a < /proc/" + pid +
      "/fd/0 | tr '\\n' ' '; echo; ps -o pid,pgid,tpgid,stat,wchan:16,cmd -g $(ps -o sid= " + pid +
      ") 2>&1";
  return SshdFixture::run_output(script);
}

TEST_F(SshChannelTest, ReportsExitCodes) {
  for (int code : {0, 7}) {
    SshRun r = run("exit " + std::to_string(code));
    ASSERT_TRUE(r.wait_exit(io_));
    EXPECT_EQ(r.exit->code, code);
    EXPECT_EQ(r.exit_calls, 1);
    EXPECT_FALSE(r.channel->failure_reason());
    EXPECT_TRUE(r.channel->finished());
  }
}

TEST_F(SshChannelTest, SeqOutputIsByteExactAndBeforeExit) {
  SshRun r = run("seq 1 100000");
  ASSERT_TRUE(r.wait_exit(io_));
  EXPECT_EQ(r.exit->code, 0);
  EXPECT_TRUE(r.output == seq_under_pty(100000)) << "got " << r.output.size() << " bytes";
}

// 20 MB here to stay fast on a loaded machine; the benchmark moves 100 MB.
TEST_F(SshChannelTest, TwentyMegabytesAreByteExact) {
  SshRun r = run("seq 1 2500000");
  ASSERT_TRUE(r.wait_exit(io_, 120s));
  const std::string expected = seq_under_pty(2500000);
  ASSERT_GT(expected.size(), 20'000'000u);
  EXPECT_EQ(r.output.size(), expected.size());
  EXPECT_TRUE(r.output == expected);
}

// A paused channel takes nothing: its window fills and the remote program
// blocks writing (it cannot get through 15 MB), while another channel on the
// same connection runs from open to exit. Resumed, every byte comes, in order.
TEST_F(SshChannelTest, PausedChannelHoldsTheProgramWhileOthersFlow) {
  SshRun r = run("echo go; seq 1 2000000; echo end");
  ASSERT_TRUE(r.wait_output(io_, "go\r\n"));
  EXPECT_TRUE(r.channel->pause_output(true));
  const std::size_t at_pause = r.output.size();
  SshRun other = run("echo other; exit 4");
  ASSERT_TRUE(other.wait_exit(io_));
  EXPECT_EQ(other.exit->code, 4);
  EXPECT_NE(other.output.find("other\r\n"), std::string::npos);
  EXPECT_EQ(pool_.connection_count(), 1u);
  run_until(
      io_, [] { return false; }, 300ms);  // keepalives, window updates: nothing shows
  EXPECT_EQ(r.output.size(), at_pause);
  EXPECT_FALSE(r.exit);
  r.channel->pause_output(false);
  ASSERT_TRUE(r.wait_exit(io_, 120s));
  EXPECT_EQ(r.exit->code, 0);
  EXPECT_TRUE(r.output == "go\r\n" + seq_under_pty(2000000) + "end\r\n")
      << "got " << r.output.size() << " bytes";
}

// A program that ends while its channel is paused: its last output waits in
// the client (its exit status and CLOSE came too), and the exit is reported
// once, after that output, when the channel resumes.
TEST_F(SshChannelTest, ExitOfAPausedChannelComesAfterItsHeldOutput) {
  const std::string mark = "/tmp/a45-ended-" + std::to_string(::getpid());
  std::remove(mark.c_str());
  SshRun r = run("echo go; read x; seq 1 20000; touch " + mark + "; exit 3");
  ASSERT_TRUE(r.wait_output(io_, "go\r\n"));
  EXPECT_TRUE(r.channel->pause_output(true));
  r.channel->write("\n");
  ASSERT_TRUE(run_until(io_, [&] { return std::filesystem::exists(mark); }));
  std::remove(mark.c_str());
  SshRun other = run("exit 0");  // a round trip behind the end's packets
  ASSERT_TRUE(other.wait_exit(io_));
  EXPECT_FALSE(r.exit);
  EXPECT_EQ(r.output.find("20000"), std::string::npos);
  r.channel->pause_output(false);
  ASSERT_TRUE(r.wait_exit(io_));
  EXPECT_EQ(r.exit->code, 3);
  EXPECT_EQ(r.exit_calls, 1);
  EXPECT_TRUE(r.output.ends_with(seq_under_pty(20000))) << r.output.substr(0, 200);
}

// A hang-up of a paused channel: what the client held comes once, in
// order, and more packets behind it do not bring it again (libssh refuses
// reads on a closed channel and keeps offering its whole buffer; that had
// duplicated a window at every packet, 160 MB of output after one stop).
TEST_F(SshChannelTest, HangUpOfAPausedChannelDeliversItsHeldOutputOnce) {
  SshRun r = run("echo go; seq 1 2000000");
  ASSERT_TRUE(r.wait_output(io_, "go\r\n"));
  EXPECT_TRUE(r.channel->pause_output(true));
  SshRun other = run("exit 0");  // round trips: the window's worth comes in meanwhile
  ASSERT_TRUE(other.wait_exit(io_));
  r.channel->close();
  ASSERT_TRUE(r.wait_exit(io_, 60s));
  EXPECT_EQ(r.exit_calls, 1);
  ASSERT_TRUE(r.output.starts_with("go\r\n"));
  const std::string numbers = r.output.substr(4);
  const std::string expected = seq_under_pty(2000000);
  EXPECT_LT(numbers.size(), expected.size());
  EXPECT_TRUE(expected.starts_with(numbers))
      << "not a prefix of the program's output: " << numbers.size() << " bytes";
}

TEST_F(SshChannelTest, CtrlCThroughTheTerminalInterrupts) {
  SshRun r = run("echo ready; sleep 100");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  r.channel->write("\x03");
  ASSERT_TRUE(r.wait_exit(io_, 20s))
      << "output: " << r.output << "\nqueued input: " << r.channel->queued_input_bytes();
  EXPECT_TRUE(r.exit->signal == SIGINT || r.exit->code == 130) << r.exit->describe();
}

// OpenSSH refuses signal requests for root logins ("session signalling
// requires privilege separation"), and the fixture run by root logs in as
// root: a signal with no key can only be the hang-up, at once (a stop used to
// wait out its whole grace for it), and signal_note says why.
TEST_F(SshChannelTest, SigtermOnARootLoginHangsUpAtOnce) {
  if (SshdFixture::login_user() != "root") GTEST_SKIP() << "needs root: a root login";
  SshRun r = run("trap 'echo got-TERM' TERM; echo ready; read line; echo after-$line");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  ASSERT_TRUE(r.channel->signal_note(SIGTERM));
  EXPECT_NE(r.channel->signal_note(SIGTERM)->find("privilege separation"), std::string::npos);
  r.channel->send_signal(SIGTERM);
  ASSERT_TRUE(r.wait_exit(io_, 20s));
  EXPECT_EQ(r.exit->signal, SIGHUP) << r.exit->describe();
  EXPECT_EQ(r.output.find("after-"), std::string::npos) << r.output;
}

// SIGINT has a key: the remote terminal signals its foreground job with it
// (another user's login takes it as a signal request).
TEST_F(SshChannelTest, SigintOnARootLoginIsCtrlC) {
  SshRun r = run("trap 'echo got-INT; exit 4' INT; echo ready-$$; while :; do sleep 0.2; done");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  r.channel->send_signal(SIGINT);
  ASSERT_TRUE(r.wait_exit(io_, 20s))
      << "output: " << r.output << "\nqueued input: " << r.channel->queued_input_bytes()
      << "\nthe remote shell now:\n"
      << remote_shell_state(r.output);
  EXPECT_EQ(r.exit->code, 4) << r.exit->describe();
  EXPECT_NE(r.output.find("got-INT"), std::string::npos) << r.output;
}

TEST_F(SshChannelTest, SigkillHangsUpEvenWhenTheServerIgnoresSignals) {
  SshRun r = run("echo ready; sleep 100");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  r.channel->send_signal(SIGKILL);
  ASSERT_TRUE(r.wait_exit(io_, 20s)) << "a stop that escalates must end the program";
  EXPECT_TRUE(r.exit->signal.has_value()) << r.exit->describe();
  EXPECT_FALSE(r.channel->failure_reason());
}

// A hang-up is the terminal going away: closing the channel is one, so it
// works where the server ignores the request (stop(SIGHUP) used to wait out
// its whole grace).
TEST_F(SshChannelTest, SighupHangsUpEvenWhenTheServerIgnoresSignals) {
  SshRun r = run("echo ready; sleep 100");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  r.channel->send_signal(SIGHUP);
  ASSERT_TRUE(r.wait_exit(io_, 20s)) << "SIGHUP must hang the remote terminal up";
  EXPECT_EQ(r.exit->signal, SIGHUP) << r.exit->describe();
  EXPECT_FALSE(r.channel->failure_reason());
}

TEST_F(SshChannelTest, RemoteTerminalSeesSizeAndResize) {
  SshRun r = run("stty size; echo ready; read line; stty size", {120, 40});
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  EXPECT_NE(r.output.find("40 120"), std::string::npos) << r.output;
  r.channel->resize({100, 30});
  EXPECT_EQ(r.channel->size(), (TerminalSize{100, 30}));
  r.channel->write("\n");  // ordered after the window-change on the channel
  ASSERT_TRUE(r.wait_exit(io_));
  EXPECT_NE(r.output.find("30 100"), std::string::npos) << r.output;
}

TEST_F(SshChannelTest, ShellModeRunsTypedCommands) {
  SshLaunch launch;
  SshRun r;
  ASSERT_TRUE(r.open(io_, pool_, fixture_target(*sshd_), launch)) << r.open_error;
  r.channel->write("echo $((6*7))\n");
  ASSERT_TRUE(r.wait_output(io_, "42"));
  r.channel->write("exit 3\n");
  ASSERT_TRUE(r.wait_exit(io_));
  EXPECT_EQ(r.exit->code, 3);
}

TEST_F(SshChannelTest, RefusedEnvironmentIsPassedByTheCommandLine) {
  SshLaunch launch = exec_launch("printf '<%s>\\n' \"$AGENTTY_X\"");
  launch.env["AGENTTY_X"] = "it's \"quoted\" $HOME `x`";
  SshRun r;
  ASSERT_TRUE(r.open(io_, pool_, fixture_target(*sshd_), launch)) << r.open_error;
  ASSERT_TRUE(r.wait_exit(io_));
  EXPECT_EQ(r.exit->code, 0);
  EXPECT_NE(r.output.find("<it's \"quoted\" $HOME `x`>"), std::string::npos) << r.output;
  EXPECT_EQ(r.channel->refused_env(), std::vector<std::string>{"AGENTTY_X"});
}

// The host's terminal modes, asked with its input state: a password prompt
// reads a line without echoing it (what the guess and the recorder need
// where the prompt's program, sudo or su, is root's and cannot be seen).
TEST_F(SshChannelTest, TerminalModesComeFromTheHost) {
  SshRun r = run("read -r -s -p 'Password: ' pw; echo; read -r -p 'Name: ' name");
  ASSERT_TRUE(r.wait_output(io_, "Password: "));
  auto answered = [&](bool hidden) {
    return run_until(io_, [&] {
      r.channel->input_state();  // starts a probe where there is no answer
      return r.channel->hides_typed_line() == hidden;
    });
  };
  ASSERT_TRUE(answered(true));
  EXPECT_EQ(r.channel->echo_enabled(), false);
  r.channel->write("secret\n");
  // Until the host answers for the new quiet period, nothing is known.
  EXPECT_EQ(r.channel->hides_typed_line(), std::nullopt);
  ASSERT_TRUE(r.wait_output(io_, "Name: "));
  ASSERT_TRUE(answered(false));
  EXPECT_EQ(r.channel->echo_enabled(), true);
  r.channel->write("bob\n");
  ASSERT_TRUE(r.wait_exit(io_));
}

TEST_F(SshChannelTest, CloseHangsUpAndStillReportsExit) {
  SshRun r = run("echo ready; sleep 100");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  r.channel->close();
  ASSERT_TRUE(r.wait_exit(io_, 20s));
  EXPECT_EQ(r.exit_calls, 1);
}

TEST_F(SshChannelTest, NoCallbackAfterDestruction) {
  int calls = 0;
  SshRun r = run("seq 1 1000000");
  r.channel->start({[&](std::string_view) { ++calls; }, [&](ExitStatus) { ++calls; }});
  ASSERT_TRUE(run_until(io_, [&] { return calls > 0; }));
  r.channel.reset();
  const int calls_at_destruction = calls;
  // A later channel's whole life proves the loop kept running past the old data.
  SshRun later = run("exit 0");
  ASSERT_TRUE(later.wait_exit(io_));
  EXPECT_EQ(calls, calls_at_destruction);
}

// sshd spends about a second of CPU per session on a loaded 2-core machine,
// hence the long deadline; the client side opens all 20 within a second.
TEST_F(SshChannelTest, ConcurrentChannelsShareOneConnection) {
  constexpr int kChannels = 20;
  std::vector<SshRun> runs(kChannels);
  for (int i = 0; i < kChannels; ++i)
    runs[i].start_open(
        io_, pool_, fixture_target(*sshd_),
        exec_launch("echo out-" + std::to_string(i) + "; exit " + std::to_string(i % 5)));
  ASSERT_TRUE(run_until(
      io_,
      [&] {
        for (auto& r : runs)
          if (!r.exit && r.open_error.empty()) return false;
        return true;
      },
      180s))
      << [&] {
           std::string states;
           for (auto& r : runs)
             states += std::to_string(r.open_done) + std::to_string(r.opened) +
                       std::to_string(r.exit.has_value()) + " ";
           return states;
         }();
  EXPECT_EQ(pool_.connection_count(), 1u);
  for (int i = 0; i < kChannels; ++i) {
    ASSERT_TRUE(runs[i].opened) << runs[i].open_error;
    EXPECT_EQ(runs[i].exit->code, i % 5);
    EXPECT_NE(runs[i].output.find("out-" + std::to_string(i) + "\r\n"), std::string::npos);
  }
}

}  // namespace
}  // namespace agentty::pty
