// Helpers for the SSH backend tests: drive the io_context until a condition
// holds (or a generous deadline passes) while channels run against the real
// sshd of SshdFixture.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "pty/ssh_channel.hpp"
#include "pty/ssh_connection.hpp"
#include "sshd_fixture.hpp"

namespace agentty::pty::test_util {

using namespace std::chrono_literals;
using OpenResult = SshExpected<std::unique_ptr<SshChannel>>;

inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds limit = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (io.stopped()) io.restart();
    if (io.run_one_for(50ms) == 0 && io.stopped()) io.restart();
  }
  return true;
}

inline SshOptions fixture_options(const SshdFixture& sshd) {
  SshOptions options;
  options.known_hosts = sshd.known_hosts();
  options.config_file = sshd.ssh_config();
  options.identity_files = {sshd.client_key()};
  return options;
}

inline SshTarget fixture_target(const SshdFixture& sshd) {
  return SshTarget{"127.0.0.1", SshdFixture::login_user(), sshd.port()};
}

// One remote program: its output, and how it ended.
struct SshRun {
  std::unique_ptr<SshChannel> channel;
  std::string output;
  std::optional<ExitStatus> exit;
  int exit_calls = 0;
  std::string open_error;
  std::optional<SshErrorKind> open_error_kind;
  bool opened = false;
  bool open_done = false;

  void start_open(boost::asio::io_context& io, SshConnectionPool& pool, SshTarget target,
                  SshLaunch launch) {
    boost::asio::co_spawn(
        io,
        [this, &pool, target = std::move(target),
         launch = std::move(launch)]() mutable -> boost::asio::awaitable<void> {
          auto result = co_await pool.open_channel(std::move(target), std::move(launch));
          open_done = true;
          if (!result) {
            open_error = result.error();
            open_error_kind = result.failure().kind;
            co_return;
          }
          opened = true;
          channel = std::move(result).value();
          channel->start({[this](std::string_view bytes) { output.append(bytes); },
                          [this](ExitStatus status) {
                            exit = status;
                            ++exit_calls;
                          }});
        },
        boost::asio::detached);
  }

  // Opens and starts; returns false (with open_error) when opening failed.
  bool open(boost::asio::io_context& io, SshConnectionPool& pool, SshTarget target,
            SshLaunch launch) {
    start_open(io, pool, std::move(target), std::move(launch));
    run_until(io, [&] { return open_done; });
    return opened;
  }

  bool wait_exit(boost::asio::io_context& io, std::chrono::milliseconds limit = 60s) {
    return run_until(
        io, [&] { return exit.has_value(); }, limit);
  }
  bool wait_output(boost::asio::io_context& io, const std::string& text,
                   std::chrono::milliseconds limit = 60s) {
    return run_until(
               io, [&] { return output.find(text) != std::string::npos || exit; }, limit) &&
           output.find(text) != std::string::npos;
  }
};

// A local user with a known password, for password and keyboard-interactive
// logins: created with useradd + chpasswd (root only; ok() is false
// otherwise) and deleted again. The name is unique per process.
class ThrowawayUser {
 public:
  ThrowawayUser() : name_("agtpw" + std::to_string(::getpid())) {
    password_ = "Pw-" + std::to_string(::getpid()) + "-x7Qz";
    if (::geteuid() != 0) return;
    std::system(("userdel " + name_ + " >/dev/null 2>&1").c_str());  // a leftover of a crash
    ok_ = std::system(("useradd -M -d /tmp -s /bin/sh " + name_).c_str()) == 0 &&
          std::system(("printf '%s:%s\\n' " + name_ + " '" + password_ + "' | chpasswd").c_str()) ==
              0;
  }
  ~ThrowawayUser() {
    if (::geteuid() == 0) std::system(("userdel " + name_ + " >/dev/null 2>&1").c_str());
  }
  ThrowawayUser(const ThrowawayUser&) = delete;
  ThrowawayUser& operator=(const ThrowawayUser&) = delete;

  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  const std::string& password() const { return password_; }

 private:
  std::string name_;
  std::string password_;
  bool ok_ = false;
};

inline SshLaunch exec_launch(std::string command, TerminalSize size = {}) {
  SshLaunch launch;
  launch.command = std::move(command);
  launch.size = size;
  return launch;
}

}  // namespace agentty::pty::test_util
