// SshConnectionPool against a real OpenSSH sshd: target parsing, ssh config
// aliases, host key policy, authentication errors, and dead connections.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "pty/command_end_marker.hpp"
#include "ssh_test_util.hpp"

namespace agentty::pty {
namespace {

using namespace test_util;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SshTargetTest, ParsesTheUsualForms) {
  auto plain = SshTarget::parse("box");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->host, "box");
  EXPECT_EQ(plain->user, "");
  EXPECT_EQ(plain->port, 0);
  auto full = SshTarget::parse("deploy@10.0.0.5:2222");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->user, "deploy");
  EXPECT_EQ(full->host, "10.0.0.5");
  EXPECT_EQ(full->port, 2222);
  auto v6 = SshTarget::parse("me@[::1]:22");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->describe(), "me@[::1]:22");
  EXPECT_FALSE(SshTarget::parse("host:99999"));
  EXPECT_FALSE(SshTarget::parse("host:"));
  EXPECT_FALSE(SshTarget::parse("@host"));
  EXPECT_FALSE(SshTarget::parse("::1:22"));
  EXPECT_FALSE(SshTarget::parse(""));
}

TEST(SshQuoteTest, QuotesForAPosixShell) {
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

// Runs `shell -c line` with stdin from /dev/null and returns its stdout.
std::string run_shell(const std::string& shell, const std::string& line) {
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<char*> argv{const_cast<char*>(shell.c_str()), const_cast<char*>("-c"),
                          const_cast<char*>(line.c_str()), nullptr};
  pid_t pid = -1;
  int spawned = ::posix_spawn(&pid, shell.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; spawned == 0 && (n = ::read(out[0], buffer, sizeof buffer)) > 0;)
    output.append(buffer, static_cast<std::size_t>(n));
  ::close(out[0]);
  if (spawned == 0) ::waitpid(pid, nullptr, 0);
  return output;
}

// The line agentty sends an SSH server gives the command exactly these bytes
// on its standard input, in each POSIX shell a login shell may be.
TEST(SshStandardInputTest, EveryByteArrivesInEachShell) {
  std::string data;
  for (int byte = 0; byte < 256; ++byte) data += static_cast<char>(byte);
  data += "'\\0000%b%s\\c\\n end";
  auto line = with_standard_input("od -An -v -tx1 # a comment", data);
  ASSERT_TRUE(line);
  // The same bytes through a file, for comparison.
  const std::string file = ::testing::TempDir() + "agentty-stdin-bytes";
  std::ofstream(file, std::ios::binary) << data;
  const std::string expected = run_shell("/bin/sh", "od -An -v -tx1 < " + file);
  ASSERT_GT(expected.size(), 3 * data.size());
  for (const std::string shell : {"/bin/sh", "/bin/bash", "/usr/bin/zsh"}) {
    if (::access(shell.c_str(), X_OK) != 0) continue;
    EXPECT_EQ(run_shell(shell, *line), expected) << shell;
  }
  std::remove(file.c_str());
  EXPECT_FALSE(with_standard_input("cat", std::string(kMaxRemoteCommandBytes, 'x')));
}

// The command keeps its own line numbers (in the shell's messages) whatever
// lines the data has, as `$SHELL -c COMMAND` would run it without stdin.
TEST(SshStandardInputTest, CommandLinesKeepTheirNumbers) {
  auto line = with_standard_input("true\nno-such-cmd-8a 2>&1; cat", "a\nb\n\nc\n");
  ASSERT_TRUE(line);
  const std::vector<std::pair<std::string, std::string>> shells = {
      {"/bin/sh", "/bin/sh: 2: no-such-cmd-8a: not found\n"},
      {"/bin/bash", "/bin/bash: line 2: no-such-cmd-8a: command not found\n"},
      {"/usr/bin/zsh", "zsh:2: command not found: no-such-cmd-8a\n"}};
  for (const auto& [shell, message] : shells) {
    if (::access(shell.c_str(), X_OK) != 0) continue;
    EXPECT_EQ(run_shell(shell, *line), message + "a\nb\n\nc\n") << shell;
  }
}

// Only an `&` that puts a job in the background adds the wait.
TEST(SshBackgroundJobsTest, OnlyABackgroundAmpersandAddsTheWait) {
  for (const std::string command : {"server &", "sleep 60 & echo started", "a&b",
                                    "nohup x >log 2>&1 &", "x &\ny", "(sleep 1; echo a) &"}) {
    const auto line = waiting_for_background_jobs(command);
    EXPECT_TRUE(line.starts_with("trap '")) << line;
    EXPECT_TRUE(line.ends_with("' EXIT; " + command)) << line;
  }
  for (const std::string command :
       {"a && b", "make 2>&1 | tee log", "ls &>/dev/null", "x |& y", "echo 'a & b'",
        "echo \"a & b\"", "echo a\\&b", "true # not & a job", "cat <&3", "echo x >&2"}) {
    EXPECT_EQ(waiting_for_background_jobs(command), command) << command;
  }
}

// The shell marks the command's end, then waits for the jobs it left (whose
// output comes before it ends) and ends with the command's own status, in
// each shell a login shell may be.
TEST(SshBackgroundJobsTest, TheShellMarksTheEndWaitsForItsJobsAndKeepsItsStatus) {
  const std::string line = waiting_for_background_jobs("(sleep 0.2; echo job) & echo cmd; exit 3");
  for (const std::string shell : {"/bin/sh", "/bin/bash", "/usr/bin/zsh"}) {
    if (::access(shell.c_str(), X_OK) != 0) continue;
    EXPECT_EQ(run_shell(shell, "( " + line + " ); echo status=$?"),
              "cmd\n" + std::string(kCommandEndMarker) + "job\nstatus=3\n")
        << shell;
  }
}

// An agent names a remote directory as a person would type it: "~/dir" is
// under the remote home, in each shell a login shell may be; nothing else
// in it is expanded.
TEST(SshEnterDirectoryTest, TildeIsTheRemoteHome) {
  const std::string home = ::testing::TempDir() + "agentty-home-$x 'q'";
  std::filesystem::create_directories(home + "/sub dir");
  const std::string saved = std::getenv("HOME") ? std::getenv("HOME") : "";
  ::setenv("HOME", home.c_str(), 1);
  for (const std::string shell : {"/bin/sh", "/bin/bash", "/usr/bin/zsh"}) {
    if (::access(shell.c_str(), X_OK) != 0) continue;
    EXPECT_EQ(run_shell(shell, enter_directory_or_exit("~") + "; pwd"), home + "\n") << shell;
    EXPECT_EQ(run_shell(shell, enter_directory_or_exit("~/sub dir") + "; pwd"), home + "/sub dir\n")
        << shell;
    EXPECT_EQ(run_shell(shell, enter_directory_or_exit("/tmp/~") + " 2>/dev/null; echo ran"), "")
        << shell;
  }
  ::setenv("HOME", saved.c_str(), 1);
  std::filesystem::remove_all(home);
}

class SshConnectionTest : public ::testing::Test {
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
  // Some tests kill or stop sshd: leave it running for the next one.
  void TearDown() override {
    if (restart_sshd_) sshd_->restart();
  }

  SshRun open(SshConnectionPool& pool, const std::string& command, SshTarget target) {
    SshRun r;
    r.open(io_, pool, std::move(target), exec_launch(command));
    return r;
  }
  SshRun open(SshConnectionPool& pool, const std::string& command) {
    return open(pool, command, fixture_target(*sshd_));
  }

  static SshdFixture* sshd_;
  boost::asio::io_context io_;
  bool restart_sshd_ = false;
};

SshdFixture* SshConnectionTest::sshd_ = nullptr;

TEST_F(SshConnectionTest, UnknownHostIsRefusedWithFingerprintThenAcceptedAndRecorded) {
  SshOptions options = fixture_options(*sshd_);
  options.known_hosts = sshd_->dir() + "/empty_known_hosts";
  std::ofstream(options.known_hosts).flush();
  {
    SshConnectionPool pool(io_, options);
    SshRun r = open(pool, "exit 0");
    ASSERT_FALSE(r.opened);
    EXPECT_EQ(r.open_error_kind, SshErrorKind::host_key_unknown);
    EXPECT_NE(r.open_error.find(sshd_->host_fingerprint()), std::string::npos) << r.open_error;
    EXPECT_NE(r.open_error.find("AGENTTY_SSH_ACCEPT_NEW=1"), std::string::npos);
    // The directory first: a fresh account has no ~/.ssh for >> to write into.
    EXPECT_NE(r.open_error.find("mkdir -p -m 700 " + sshd_->dir() + " && ssh-keyscan -p " +
                                std::to_string(sshd_->port())),
              std::string::npos)
        << r.open_error;
    EXPECT_EQ(pool.connection_count(), 0u);
  }
  options.accept_new = true;
  {
    SshConnectionPool pool(io_, options);
    SshRun r = open(pool, "exit 0");
    ASSERT_TRUE(r.opened) << r.open_error;
  }
  const std::string key_body = sshd_->host_public_key().substr(0, 80);  // "ssh-ed25519 AAAA..."
  EXPECT_NE(read_text(options.known_hosts).find(key_body.substr(12, 60)), std::string::npos);
  options.accept_new = false;  // now known: no policy needed
  SshConnectionPool pool(io_, options);
  SshRun r = open(pool, "exit 0");
  EXPECT_TRUE(r.opened) << r.open_error;
}

TEST_F(SshConnectionTest, ChangedHostKeyIsRefused) {
  SshOptions options = fixture_options(*sshd_);
  options.known_hosts = sshd_->dir() + "/changed_known_hosts";
  options.accept_new = true;  // must not matter for a changed key
  std::ofstream(options.known_hosts)
      << sshd_->known_hosts_line(read_text(sshd_->wrong_key() + ".pub"));
  SshConnectionPool pool(io_, options);
  SshRun r = open(pool, "exit 0");
  ASSERT_FALSE(r.opened);
  EXPECT_EQ(r.open_error_kind, SshErrorKind::host_key_changed);
  EXPECT_NE(r.open_error.find("HOST KEY CHANGED"), std::string::npos) << r.open_error;
  EXPECT_NE(r.open_error.find(sshd_->host_fingerprint()), std::string::npos);
}

// The changed-key refusal names the command that removes the old key: for
// port 22 known_hosts has the bare name, and `-R '[host]:22'` removed nothing.
TEST(SshKnownHostsName, BareOnPort22BracketedElsewhere) {
  EXPECT_EQ(known_hosts_name("example.org", 22), "example.org");
  EXPECT_EQ(known_hosts_name("127.0.0.1", 2222), "[127.0.0.1]:2222");
}

// libssh expands ~ from the password database, not $HOME: the BindAddress
// check must read the ~/.ssh/config libssh will read.
TEST(SshLibsshHome, PasswordDatabaseHomeWinsOverHOME) {
  const passwd* entry = ::getpwuid(::getuid());
  ASSERT_NE(entry, nullptr);
  const char* saved = std::getenv("HOME");
  const std::string restore = saved ? saved : "";
  ::setenv("HOME", "/nonexistent-agentty-home", 1);
  const std::string home = libssh_home();
  if (saved)
    ::setenv("HOME", restore.c_str(), 1);
  else
    ::unsetenv("HOME");
  EXPECT_EQ(home, entry->pw_dir);
}

TEST_F(SshConnectionTest, WrongClientKeyIsRefusedClearly) {
  SshOptions options = fixture_options(*sshd_);
  options.identity_files = {sshd_->wrong_key()};
  SshConnectionPool pool(io_, options);
  SshRun r = open(pool, "exit 0");
  ASSERT_FALSE(r.opened);
  EXPECT_EQ(r.open_error_kind, SshErrorKind::auth_failed);
  EXPECT_NE(r.open_error.find("no key was accepted"), std::string::npos) << r.open_error;
  EXPECT_NE(r.open_error.find(sshd_->wrong_key()), std::string::npos);
}

// A port that answers but is not an SSH server's (here: an HTTP reply).
TEST_F(SshConnectionTest, APortThatIsNotSshIsNamedAsTheLikelyCause) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  std::thread server([listener] {
    int client = ::accept(listener, nullptr, nullptr);
    if (client < 0) return;
    const char reply[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
    [[maybe_unused]] auto ignored = ::write(client, reply, sizeof reply - 1);
    ::close(client);
  });
  SshConnectionPool pool(io_, fixture_options(*sshd_));
  SshRun r = open(pool, "exit 0", SshTarget{"127.0.0.1", "root", ntohs(address.sin_port)});
  server.join();
  ::close(listener);
  ASSERT_FALSE(r.opened);
  EXPECT_NE(r.open_error.find("is that port an SSH server's?"), std::string::npos) << r.open_error;
}

TEST_F(SshConnectionTest, PasswordOnlyLoginWithoutHumanLoginIsRefused) {
  SshdFixture password_sshd(SshdFixture::Config{.password_auth = true});
  SshOptions options = fixture_options(password_sshd);
  options.identity_files = {password_sshd.wrong_key()};
  options.human_login = false;  // on (the default), see ssh_login_test.cpp
  SshConnectionPool pool(io_, options);
  SshRun r = open(pool, "exit 0", fixture_target(password_sshd));
  ASSERT_FALSE(r.opened);
  EXPECT_EQ(r.open_error_kind, SshErrorKind::needs_human_auth) << r.open_error;
}

TEST_F(SshConnectionTest, HostNameIsResolvedByAsioAndKnownHostsMatchesTheName) {
  // known_hosts names only [127.0.0.1]:PORT: "localhost" is an unknown host
  // (matched by the name typed, not by the address it resolved to)...
  SshOptions options = fixture_options(*sshd_);
  SshConnectionPool pool(io_, options);
  SshTarget by_name{"localhost", SshdFixture::login_user(), sshd_->port()};
  SshRun unknown = open(pool, "exit 0", by_name);
  ASSERT_FALSE(unknown.opened);
  EXPECT_EQ(unknown.open_error_kind, SshErrorKind::host_key_unknown) << unknown.open_error;
  EXPECT_NE(unknown.open_error.find("localhost"), std::string::npos) << unknown.open_error;
  // ...and once the name is known, it connects (every resolved address is
  // tried: ::1 first on most systems, where nothing listens).
  std::ofstream(sshd_->known_hosts(), std::ios::app)
      << "[localhost]:" << sshd_->port() << " " << sshd_->host_public_key();
  SshRun known = open(pool, "echo by-name", by_name);
  ASSERT_TRUE(known.opened) << known.open_error;
  ASSERT_TRUE(known.wait_exit(io_));
  EXPECT_NE(known.output.find("by-name"), std::string::npos);
}

TEST_F(SshConnectionTest, ConfigAliasSuppliesHostPortUserAndKey) {
  SshOptions options = fixture_options(*sshd_);
  options.identity_files.clear();  // the alias names the key
  options.config_file = sshd_->dir() + "/alias_config";
  std::ofstream(options.config_file)
      << "Host testbox\n  HostName 127.0.0.1\n  Port " << sshd_->port() << "\n  User "
      << SshdFixture::login_user() << "\n  IdentityFile " << sshd_->client_key() << "\n";
  SshConnectionPool pool(io_, options);
  SshRun r = open(pool, "whoami", SshTarget{"testbox", "", 0});
  ASSERT_TRUE(r.opened) << r.open_error;
  ASSERT_TRUE(r.wait_exit(io_));
  EXPECT_NE(r.output.find(SshdFixture::login_user()), std::string::npos);
  // An explicit port overrides the alias's (nothing listens on port 1).
  SshRun overridden = open(pool, "exit 0", SshTarget{"testbox", "", 1});
  EXPECT_FALSE(overridden.opened);
  EXPECT_EQ(overridden.open_error_kind, SshErrorKind::connect_failed) << overridden.open_error;
}

// open(host) types the hook for the account's login shell (sh gets its
// PS1 marks, bash and zsh the hook line): the host names it, for each
// channel of a connection.
TEST_F(SshConnectionTest, TheLoginShellIsTheAccountsAsThePasswordDatabaseSays) {
  SshConnectionPool pool(io_, fixture_options(*sshd_));
  const passwd* account = ::getpwuid(::getuid());
  ASSERT_NE(account, nullptr);
  // bash and zsh name themselves (also as /bin/sh); another shell is its path.
  const std::string path = account->pw_shell;
  const std::string name = path.substr(path.rfind('/') + 1);
  const std::string expected = name == "bash" || name == "zsh" ? name : path;
  for (int call = 0; call < 2; ++call) {
    SshRun r = open(pool, "exit 0");
    ASSERT_TRUE(r.opened) << r.open_error;
    std::optional<std::optional<std::string>> said;
    boost::asio::co_spawn(
        io_, [&]() -> boost::asio::awaitable<void> { said = co_await r.channel->login_shell(); },
        boost::asio::detached);
    ASSERT_TRUE(run_until(io_, [&] { return said.has_value(); }));
    EXPECT_EQ(*said, std::optional<std::string>(expected)) << "call " << call;
  }
  EXPECT_EQ(pool.connection_count(), 1u);
}

TEST_F(SshConnectionTest, KilledServerFailsTheChannelAndTheNextOpenReconnects) {
  restart_sshd_ = true;
  SshConnectionPool pool(io_, fixture_options(*sshd_));
  SshRun r = open(pool, "echo ready; sleep 100");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  sshd_->signal_sshd_tree(SIGKILL);
  ASSERT_TRUE(r.wait_exit(io_, 20s));
  EXPECT_EQ(r.exit->code, 255);
  ASSERT_TRUE(r.channel->failure_reason());
  EXPECT_NE(r.channel->failure_reason()->find("lost"), std::string::npos);
  EXPECT_EQ(pool.connection_count(), 0u);
  sshd_->restart();
  SshRun again = open(pool, "exit 4");
  ASSERT_TRUE(again.opened) << again.open_error;
  ASSERT_TRUE(again.wait_exit(io_));
  EXPECT_EQ(again.exit->code, 4);
  EXPECT_EQ(pool.connection_count(), 1u);
}

TEST_F(SshConnectionTest, SilentServerFailsWithinTheKeepaliveWindow) {
  restart_sshd_ = true;
  SshOptions options = fixture_options(*sshd_);
  options.keepalive = std::chrono::seconds(1);
  options.keepalive_max_missed = 2;
  SshConnectionPool pool(io_, options);
  SshRun r = open(pool, "echo ready; sleep 100");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  sshd_->signal_sshd_tree(SIGSTOP);  // the TCP peer stays, but nothing answers
  const auto stopped_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(r.wait_exit(io_, 30s));
  const auto waited = std::chrono::steady_clock::now() - stopped_at;
  EXPECT_LT(waited, std::chrono::seconds(8));  // 2 s of silence + 1 s tick + slack for load
  EXPECT_EQ(r.exit->code, 255);
  ASSERT_TRUE(r.channel->failure_reason());
  EXPECT_NE(r.channel->failure_reason()->find("keepalive"), std::string::npos);
  EXPECT_EQ(pool.connection_count(), 0u);
}

// An open that nothing answers on a pooled connection that has gone silent
// (the link hung) failed as "timed out waiting ... to open a session
// channel" although the keepalives gave the connection up moments later and
// a fresh one would have worked: silent for two keepalive intervals by the
// open's deadline, the connection is given up and the open made anew.
TEST_F(SshConnectionTest, OpenOnAConnectionThatWentSilentIsMadeOnAFreshOne) {
  restart_sshd_ = true;
  SshOptions options = fixture_options(*sshd_);
  options.keepalive = std::chrono::seconds(1);
  options.keepalive_max_missed = 60;  // the keepalives alone would wait a minute
  options.connect_timeout = std::chrono::seconds(4);
  SshConnectionPool pool(io_, options);
  SshRun first = open(pool, "exit 0");
  ASSERT_TRUE(first.opened) << first.open_error;
  ASSERT_TRUE(first.wait_exit(io_));
  sshd_->signal_connection_servers(SIGSTOP);  // the pooled connection's server
  SshRun second = open(pool, "exit 3");
  ASSERT_TRUE(second.opened) << second.open_error;
  ASSERT_TRUE(second.wait_exit(io_));
  EXPECT_EQ(second.exit->code, 3);
}

TEST_F(SshConnectionTest, ShutdownFailsOpenChannels) {
  SshConnectionPool pool(io_, fixture_options(*sshd_));
  SshRun r = open(pool, "echo ready; sleep 100");
  ASSERT_TRUE(r.wait_output(io_, "ready"));
  pool.shutdown();
  ASSERT_TRUE(r.wait_exit(io_, 10s));
  EXPECT_EQ(r.exit->code, 255);
  EXPECT_TRUE(r.channel->failure_reason());
  SshRun refused = open(pool, "exit 0");
  EXPECT_EQ(refused.open_error_kind, SshErrorKind::shut_down);
}

}  // namespace
}  // namespace agentty::pty
