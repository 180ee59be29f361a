#include "mcp/tools/login_hook.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <regex>

#include "pty/ssh_target.hpp"
#include "session/execution.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;
using Clock = steady_clock;

// Conditions no event announces (output quiet for a while) are re-checked this often.
constexpr milliseconds kRecheck{50};

// Waits for a change of the execution or `until`, whichever comes first.
boost::asio::awaitable<void> sleep_on(session::Execution& execution, Clock::time_point until) {
  co_await execution.changed().wait_until(std::min(until, Clock::now() + kRecheck));
}

// Holds `execution` (so its change signal outlives the waits) until the
// hook is typed or there is nothing left to wait for.
boost::asio::awaitable<void> hook_after_login(std::shared_ptr<session::Execution> execution) {
  // The login is a person's: it ends with a shell, or the execution fails.
  // Its length is theirs (bounded by the server's LoginGraceTime), so only
  // state changes wake this; the deadline is just a re-check.
  while (!execution->finished() && execution->login_held())
    co_await execution->changed().wait_until(Clock::now() + minutes(1));
  auto deadline = Clock::now() + kAfterLogin;
  // The login's last echo is older: wait for the shell's own first output.
  auto logged_in_at = execution->log().latest_seq();
  while (!execution->finished()) {
    auto* shell = execution->shell();
    if (shell == nullptr || shell->marks_seen() > 0) co_return;  // armed already (rearm)
    bool shell_spoke = execution->log().latest_seq() > logged_in_at;
    if (execution->held()) {
      deadline = Clock::now() + kAfterLogin;  // a person is at the terminal: theirs until released
    } else if (shell_spoke && can_type_hook(*execution)) {
      if (!type_hook(*execution)) spdlog::warn("{}: the prompt hook was refused", execution->id());
      co_return;
    } else if (Clock::now() >= deadline) {
      spdlog::info("{}: no quiet prompt after the login; the prompt hook was not typed",
                   execution->id());
      co_return;
    }
    co_await sleep_on(*execution, deadline);
  }
}

// open(host)'s env and cwd, set in the login shell by the hook's line: an
// SSH server accepts only the variables its AcceptEnv names, and a login
// shell starts in the home directory.
std::string start_state(session::Execution& execution) {
  const auto& spec = execution.spec();
  std::string line;
  if (spec.host.empty()) return line;  // a local shell got them when it started
  for (const auto& [name, value] : spec.env)
    line += "export " + name + "=" + pty::shell_quote(value) + "; ";
  // A directory that cannot be entered ends the session (open says so), as
  // execute(host, cwd) runs nothing: never a session quietly elsewhere.
  if (!spec.cwd.empty()) line += pty::enter_directory_or_exit(spec.cwd) + "; ";
  return line;
}

}  // namespace

bool shows_secret_prompt(session::Execution& execution) {
  if (execution.echo_enabled() == true) return false;
  auto snapshot = execution.screen().snapshot();
  auto row = snapshot.cursor.row;
  if (row < 0 || row >= static_cast<int>(snapshot.lines.size())) return true;  // unknown: careful
  static const std::regex secret(
      R"((pass(word|phrase)?|PIN|OTP|token|verification|secret|key)[^\n]*[:?]\s*$)",
      std::regex::icase);
  return std::regex_search(snapshot.lines[row], secret);
}

bool can_type_hook(session::Execution& execution) {
  return !execution.finished() && !execution.held() && execution.waiting_for_input() &&
         !shows_secret_prompt(execution);
}

bool type_hook(session::Execution& execution) {
  auto* shell = execution.shell();
  if (shell == nullptr) return false;
  shell->rearming();
  // ctrl-u first: nothing half-typed is prepended to the hook line.
  auto typed = execution.write(
      "\x15" + start_state(execution) + session::bash_hook_line(shell->nonce()) + "\r",
      session::InputSource::agent);
  return static_cast<bool>(typed);
}

void type_hook_after_login(boost::asio::io_context& io,
                           std::shared_ptr<session::Execution> execution) {
  boost::asio::co_spawn(io, hook_after_login(std::move(execution)), [](std::exception_ptr error) {
    if (!error) return;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      spdlog::error("prompt hook after login: {}", e.what());
    }
  });
}

}  // namespace agentty::mcp::tools
