// The prompt hook typed after a login a person does (login_hook.hpp), with a
// real Registry and real local shells under PTYs on a loop of their own
// thread. An SSH login hold is Execution::hold_for_login / end_login_hold,
// as the registry calls them for a pending SSH channel (the real SSH path is
// covered end to end in tests/e2e/ssh.test.mjs); the shell starts without
// the hook, like a remote login shell.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>

#include <algorithm>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>

#include "base/random_id.hpp"
#include "mcp/tool.hpp"
#include "mcp/tools/login_hook.hpp"
#include "session/policy.hpp"
#include "session/shell_integration.hpp"
#include "support/tool_fixture.hpp"

namespace agentty::mcp {
namespace {
namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr const char* kHookMarker = "__agentty_precmd";

class LoginHook : public test_support::ToolFixture {
 protected:
  // A session running `script` under bash with the integration open gives a
  // remote login shell (no hook yet), held for a login like a pending SSH
  // channel; the hook is set to follow the login.
  std::shared_ptr<session::Execution> start_held(const std::string& script) {
    session::ExecutionSpec spec;
    spec.kind = session::ExecutionKind::session;
    spec.argv = {"/bin/bash", "-c", script};
    spec.env = {{"HOME", state_dir_.string()}};
    spec.command_text = "login shell";
    // All in one coroutine on the loop: no output is read before the
    // integration is set.
    return loop_.await_on_loop(
        [&]() -> boost::asio::awaitable<std::shared_ptr<session::Execution>> {
          auto started = co_await registry_->start_local(spec);
          EXPECT_TRUE(started) << started.error();
          if (!started) co_return nullptr;
          auto execution = started.value();
          execution->set_shell_integration(
              std::make_unique<session::ShellIntegration>(session::ShellKind::bash, random_hex(8)));
          execution->hold_for_login("test login needs a password");
          tools::type_hook_after_login(io_, execution);
          co_return execution;
        });
  }

  // The person types the password and the login ends in one turn of the
  // loop, so everything printed after it is the shell's, as over SSH.
  void log_in(const std::shared_ptr<session::Execution>& execution) {
    on_loop([&] {
      EXPECT_TRUE(execution->write("pw\r", session::InputSource::human));
      execution->end_login_hold();
      return 0;
    });
  }

  // Waits (event-driven, in the wait tool) until the output has been quiet for `quiet`.
  void wait_idle(const std::string& id, std::chrono::milliseconds quiet) {
    auto waited = call("wait", {{"execution_id", id},
                                {"until", "idle"},
                                {"idle_ms", quiet.count()},
                                {"since_seq", 1},
                                {"timeout_ms", 30000}});
    EXPECT_EQ(waited.content.value("wait_result", ""), "idle") << waited.content.dump();
  }

  std::string raw_output(const std::shared_ptr<session::Execution>& execution) {
    return on_loop([&] { return execution->log().copy_range(1, execution->log().latest_seq()); });
  }

  json run(const std::string& id, const std::string& command) {
    return call("execute", {{"session", id}, {"command", command}, {"side_effects", {"NONE"}}})
        .content;
  }

  // Only the registry and the test hold it: the hook's coroutine has let go.
  // Nothing announces a coroutine's end, so this polls (generous deadline).
  bool released_by_hook(const std::shared_ptr<session::Execution>& execution) {
    auto deadline = std::chrono::steady_clock::now() + 15s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (on_loop([&] { return execution.use_count(); }) == 2) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
};

// The login: a hidden read standing for the password prompt, then the shell.
const std::string kLogin = R"(read -rs -p "password: " pw; echo; )";
const std::string kShell = "exec /bin/bash --norc --noprofile -i";

TEST_F(LoginHook, TypedOnlyOnceTheLoginEndsThenCommandsHaveExactExitCodes) {
  auto execution = start_held(kLogin + kShell);
  ASSERT_TRUE(execution);
  const std::string id = execution->id();
  expect_output(id, "password: $");
  wait_idle(id, 1500ms);  // quiet at the login prompt: nothing may be typed there
  EXPECT_EQ(raw_output(execution).find(kHookMarker), std::string::npos);

  log_in(execution);
  auto failed = run(id, "false");
  EXPECT_EQ(failed.value("status", ""), "completed") << failed.dump();
  EXPECT_EQ(failed.value("exit_code", -1), 1) << failed.dump();
  EXPECT_EQ(failed.value("boundaries", ""), "exact");
  auto ok = run(id, "echo ok");
  EXPECT_EQ(ok.value("exit_code", -1), 0) << ok.dump();
  EXPECT_EQ(ok.value("output", ""), "ok\n");
  EXPECT_TRUE(released_by_hook(execution));
}

TEST_F(LoginHook, NeverTypedIntoAPasswordPromptAfterTheLogin) {
  // A remote rc that asks for a secret before the shell starts.
  auto execution = start_held(
      kLogin + R"(read -rs -p "Vault password: " answer; echo "got:$answer"; )" + kShell);
  ASSERT_TRUE(execution);
  const std::string id = execution->id();
  expect_output(id, "^password: $");
  log_in(execution);
  expect_output(id, "Vault password: $");
  wait_idle(id, 1500ms);  // quiet, released, reading: only the password prompt stops it
  EXPECT_EQ(raw_output(execution).find(kHookMarker), std::string::npos);

  ASSERT_TRUE(on_loop([&] { return execution->write("s3cret\r", session::InputSource::human); }));
  expect_output(id, "got:s3cret\\r?\\n");
  auto r = run(id, "(exit 7)");
  EXPECT_EQ(r.value("exit_code", -1), 7) << r.dump();
  EXPECT_TRUE(released_by_hook(execution));
}

TEST_F(LoginHook, AnExecutionThatEndsDuringTheLoginGetsNothingAndIsLetGo) {
  auto execution = start_held(kLogin + kShell);
  ASSERT_TRUE(execution);
  const std::string id = execution->id();
  expect_output(id, "password: $");
  // The agent may end a login-held execution (a takeover would refuse it).
  auto stopped = call("stop", {{"execution_id", id}, {"signal", "SIGKILL"}});
  EXPECT_FALSE(stopped.is_error) << stopped.content.dump();
  EXPECT_TRUE(on_loop([&] { return execution->finished(); }));
  EXPECT_TRUE(released_by_hook(execution));
  EXPECT_EQ(on_loop([&] { return execution->changed().waiter_count(); }), 0u);
  EXPECT_EQ(raw_output(execution).find(kHookMarker), std::string::npos);
}

TEST_F(LoginHook, WaitsForAPersonHoldingTheTerminalAfterTheLogin) {
  auto execution = start_held(kLogin + kShell);
  ASSERT_TRUE(execution);
  const std::string id = execution->id();
  expect_output(id, "password: $");
  ASSERT_TRUE(on_loop([&] { return execution->take_over("person", std::nullopt); }));
  log_in(execution);  // releases the takeover made for the login
  ASSERT_TRUE(on_loop([&] { return execution->take_over("person", std::nullopt); }));
  expect_output(id, "^bash.*[$#] $");  // bash's default prompt (no rc files)
  wait_idle(id, 1500ms);
  EXPECT_EQ(raw_output(execution).find(kHookMarker), std::string::npos);
  ASSERT_TRUE(on_loop([&] { return execution->release("person"); }));
  auto r = run(id, "false");
  EXPECT_EQ(r.value("exit_code", -1), 1) << r.dump();
  EXPECT_TRUE(released_by_hook(execution));
}

}  // namespace
}  // namespace agentty::mcp
