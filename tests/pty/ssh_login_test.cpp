// Login by a person: a real sshd that accepts only a password (or PAM's
// keyboard-interactive) for a throwaway local user. The channel shows the
// prompt, takes the typed answer through write(), never shows it, and runs
// the command once logged in. Needs root (useradd, chpasswd, sshd): skipped
// otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <optional>

#include "ssh_test_util.hpp"

namespace agentty::pty {
namespace {

using namespace test_util;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class SshLoginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: useradd, chpasswd and sshd";
    user_.emplace();
    ASSERT_TRUE(user_->ok()) << "useradd/chpasswd failed";
  }

  void start_sshd(SshdFixture::Config config) {
    sshd_.emplace(config);
    options_ = fixture_options(*sshd_);
    options_.identity_files = {sshd_->wrong_key()};  // keys are tried and refused first
    pool_.emplace(io_, options_);
  }

  SshTarget target() const { return SshTarget{"127.0.0.1", user_->name(), sshd_->port()}; }
  std::string prompt() const { return user_->name() + "@127.0.0.1's password: "; }

  // Opens `command` and expects a pending channel waiting for a person.
  void open_pending(SshRun& run, const std::string& command) {
    run.start_open(io_, *pool_, target(), exec_launch(command));
    ASSERT_TRUE(run_until(io_, [&] { return run.open_done; }));
    ASSERT_TRUE(run.opened) << run.open_error << "\n" << sshd_->log();
    EXPECT_TRUE(run.channel->awaiting_login());
    EXPECT_NE(run.channel->login_reason().find("take over and type it"), std::string::npos)
        << run.channel->login_reason();
  }

  boost::asio::io_context io_;
  std::optional<ThrowawayUser> user_;
  std::optional<SshdFixture> sshd_;
  SshOptions options_;
  std::optional<SshConnectionPool> pool_;
};

TEST_F(SshLoginTest, PasswordTypedAtTheTerminalLogsInAndIsNeverShown) {
  start_sshd({.password_auth = true});
  SshRun r;
  open_pending(r, "echo in-as-$(id -un)");
  int login_done = 0;
  r.channel->on_login_done([&] { ++login_done; });
  ASSERT_TRUE(r.wait_output(io_, prompt())) << r.output;
  EXPECT_EQ(r.channel->echo_enabled(), std::optional<bool>(false));

  r.channel->write("wrong-guess-1\r");
  ASSERT_TRUE(r.wait_output(io_, "Permission denied, please try again.\r\n" + prompt()))
      << r.output;
  EXPECT_EQ(login_done, 0);
  // Typed in pieces, with a correction, as a person would.
  r.channel->write(user_->password().substr(0, 3));
  r.channel->write("zz\x7f\x7f");
  r.channel->write(user_->password().substr(3) + "\r");
  ASSERT_TRUE(r.wait_exit(io_)) << r.output;
  EXPECT_EQ(r.exit->code, 0) << r.output;
  EXPECT_FALSE(r.channel->failure_reason());
  EXPECT_NE(r.output.find("in-as-" + user_->name()), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(user_->password()), std::string::npos);
  EXPECT_EQ(r.output.find("wrong-guess"), std::string::npos);
  EXPECT_EQ(r.output.find("zz"), std::string::npos);
  EXPECT_EQ(login_done, 1);
  EXPECT_FALSE(r.channel->awaiting_login());
}

TEST_F(SshLoginTest, LaterOpensReuseTheConnectionWithoutAnotherLogin) {
  start_sshd({.password_auth = true});
  SshRun first, second;
  open_pending(first, "echo one");
  ASSERT_TRUE(first.wait_output(io_, prompt()));
  // Opened while the first waits: pending too, and shows the same prompt.
  open_pending(second, "echo two");
  ASSERT_TRUE(second.wait_output(io_, prompt()));
  second.channel->write(user_->password() + "\r");  // answered in the second terminal
  ASSERT_TRUE(first.wait_exit(io_)) << first.output;
  ASSERT_TRUE(second.wait_exit(io_)) << second.output;
  EXPECT_EQ(first.exit->code, 0);
  EXPECT_EQ(second.exit->code, 0);
  EXPECT_NE(first.output.find("one"), std::string::npos);
  EXPECT_NE(second.output.find("two"), std::string::npos);
  SshRun third;
  ASSERT_TRUE(third.open(io_, *pool_, target(), exec_launch("echo three"))) << third.open_error;
  EXPECT_FALSE(third.channel->awaiting_login());
  ASSERT_TRUE(third.wait_exit(io_));
  EXPECT_NE(third.output.find("three"), std::string::npos);
  EXPECT_EQ(pool_->connection_count(), 1u);
}

TEST_F(SshLoginTest, ThreeWrongPasswordsFailWithAClearReason) {
  start_sshd({.password_auth = true});
  SshRun r;
  open_pending(r, "echo never");
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ASSERT_TRUE(run_until(io_, [&] { return count(r.output, prompt()) == std::size_t(attempt); }))
        << r.output;
    r.channel->write("nope\r");
  }
  ASSERT_TRUE(r.wait_exit(io_)) << r.output;
  EXPECT_EQ(r.exit->code, 255);
  ASSERT_TRUE(r.channel->failure_reason());
  EXPECT_NE(r.channel->failure_reason()->find("permission denied after 3 attempts"),
            std::string::npos)
      << *r.channel->failure_reason();
  EXPECT_EQ(r.output.find("never"), std::string::npos);
  EXPECT_EQ(pool_->connection_count(), 0u);  // the next open starts afresh
}

TEST_F(SshLoginTest, CtrlCCancelsTheLogin) {
  start_sshd({.password_auth = true});
  SshRun r;
  open_pending(r, "echo never");
  ASSERT_TRUE(r.wait_output(io_, prompt()));
  r.channel->write("half\x03");
  ASSERT_TRUE(r.wait_exit(io_)) << r.output;
  EXPECT_EQ(r.exit->code, 255);
  ASSERT_TRUE(r.channel->failure_reason());
  EXPECT_NE(r.channel->failure_reason()->find("cancelled the login"), std::string::npos);
}

TEST_F(SshLoginTest, StopWhileWaitingEndsWithTheSignal) {
  start_sshd({.password_auth = true});
  SshRun r;
  open_pending(r, "echo never");
  ASSERT_TRUE(r.wait_output(io_, prompt()));
  r.channel->send_signal(SIGTERM);
  ASSERT_TRUE(r.wait_exit(io_));
  EXPECT_EQ(r.exit->signal, SIGTERM);
  EXPECT_EQ(r.exit_calls, 1);
  // Nobody waits for the login any more: the connection gives up.
  EXPECT_TRUE(run_until(io_, [&] { return pool_->connection_count() == 0; }));
}

TEST_F(SshLoginTest, KeyboardInteractiveThroughPam) {
  start_sshd({.password_auth = false, .keyboard_interactive = true, .use_pam = true});
  SshRun r;
  open_pending(r, "echo kbd-$(id -un)");
  // PAM's own prompt, hidden.
  ASSERT_TRUE(r.wait_output(io_, "Password: ")) << r.output << sshd_->log();
  EXPECT_EQ(r.channel->echo_enabled(), std::optional<bool>(false));
  r.channel->write(user_->password() + "\r");
  ASSERT_TRUE(r.wait_exit(io_)) << r.output;
  EXPECT_EQ(r.exit->code, 0) << r.output << sshd_->log();
  EXPECT_NE(r.output.find("kbd-" + user_->name()), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(user_->password()), std::string::npos);
}

}  // namespace
}  // namespace agentty::pty
