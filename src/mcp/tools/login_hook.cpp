#include "mcp/tools/login_hook.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <regex>

#include "mcp/tools/foreground_program.hpp"
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
      if (!co_await type_hook(*execution))
        spdlog::warn("{}: the prompt hook was refused", execution->id());
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
  // A space first, as the hook line has: kept out of the history.
  return line.empty() ? line : " " + line;
}

// `line` (a typed hook line) followed by a command that moves the cursor
// from below its echo back to the start of the prompt's first row and erases
// from there (CPL, ED): typed at a prompt that ends at `prompt_col` of a
// `cols`-wide terminal, the prompt's last row and the echo take `rows` rows;
// the rows above for a multi-line prompt are counted by the shell, which
// prints that count in a mark (session::kPromptLinesMark) first. The line is
// made never to end exactly at the margin, where terminals differ on when
// they wrap. Unchanged when it holds a byte whose width on the screen is not
// one column.
std::string erasing_its_echo(const std::string& line, int prompt_col, int cols,
                             const std::string& nonce) {
  const bool plain =
      std::all_of(line.begin(), line.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (!plain || cols <= 0 || prompt_col < 0) return line;
  const auto col = static_cast<std::size_t>(prompt_col);
  const auto width = static_cast<std::size_t>(cols);
  const std::string mark =
      std::string("\\033]133;") + session::kPromptLinesMark + ";%s;n=" + nonce + "\\007";
  const std::string count = "${#" + std::string(session::kPromptLinesVar) + "}";
  for (std::size_t rows = 1; rows < 10000; ++rows) {
    std::string erasing = line + "; printf '" + mark + "\\033[%sF\\033[J' " + count + " $((" +
                          std::to_string(rows) + "+" + count + "))";
    if ((col + erasing.size()) % width == 0) erasing += ' ';
    // Enter moves below the echo's last row.
    if ((col + erasing.size()) / width + 1 == rows) return erasing;
  }
  return line;
}

// Where the cursor's line starts in the log (after the newest newline), then
// where each line above it starts, newest first: a multi-line prompt's rows.
std::vector<std::uint64_t> cursor_line_starts(const session::OutputLog& log) {
  constexpr std::uint64_t kLookBack = 4096;
  constexpr std::size_t kMaxLines = 16;
  const auto end = log.latest_seq();
  const auto begin = std::max(log.first_retained_seq(), end > kLookBack ? end - kLookBack : 1);
  const std::string tail = log.copy_range(begin, end);
  std::vector<std::uint64_t> starts;
  auto at = tail.size();  // the end of the line looked at (exclusive)
  while (starts.size() < kMaxLines) {
    const auto newline = at == 0 ? std::string::npos : tail.rfind('\n', at - 1);
    if (newline == std::string::npos) break;
    starts.push_back(begin + newline + 1);
    at = newline;
  }
  // The log's first byte starts a line too; with no newline at all, the
  // cursor's line is taken to start where the look-back does.
  if (starts.size() < kMaxLines && (begin == 1 || starts.empty())) starts.push_back(begin);
  return starts;
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

namespace {

// Types `hook`, a line that (re)installs a prompt hook; see type_hook.
Expected<void> type_line(session::Execution& execution, const std::string& hook) {
  auto* shell = execution.shell();
  if (shell == nullptr) return make_error("this execution has no shell integration");
  shell->rearming();
  // A person who logs in with ssh sees no hook: its echo is erased from the
  // screen and left out of the agent's text.
  const std::string line = erasing_its_echo(hook, execution.screen().cursor().col,
                                            execution.size().cols, shell->nonce());
  auto line_starts = cursor_line_starts(execution.log());
  // The line erased first: nothing half-typed is prepended to the hook line.
  auto typed = execution.write(std::string(shell->clear_line_keys()) + line + "\r",
                               session::InputSource::agent);
  if (!typed) return make_error(typed.error());
  shell->hide_typed_hook(std::move(line_starts));
  return {};
}

// Types `prefix` and the line that (re)installs the marks in `program`, the
// shell at the terminal. sh (dash, ash) has no prompt hooks and refuses the
// bash/zsh line as a syntax error: it gets marks in its PS1 (an account
// whose login shell is sh, the session's own sh after its PS1 was reset, `sh`
// started in or exec'ed by a bash or zsh session). Anything else (bash, zsh,
// a shell `exec`ed by an sh session, a shell not known) reads the hook line.
Expected<void> type_hook_line(session::Execution& execution, const std::string& prefix,
                              const std::optional<std::string>& program) {
  auto* shell = execution.shell();
  if (shell == nullptr) return make_error("this execution has no shell integration");
  return type_line(execution,
                   prefix + (is_plain_sh(program) ? session::sh_rearm_line(shell->nonce())
                                                  : session::hook_line(shell->nonce())));
}

// The name of a shell given as a path.
std::optional<std::string> base_name(const std::optional<std::string>& path) {
  if (!path) return std::nullopt;
  return path->substr(path->rfind('/') + 1);
}

}  // namespace

boost::asio::awaitable<bool> type_hook(session::Execution& execution) {
  if (execution.shell() == nullptr) co_return false;
  const std::string nonce(execution.shell()->nonce());
  // On a host the hook goes in a file there, and the short line typed
  // sources it in bash and zsh or gives sh its marked PS1: the shell that
  // reads the line chooses (an account's .profile may exec another shell
  // than its $SHELL), and the echo to erase is ~330 bytes, not ~1.6 KB.
  if (auto file = co_await execution.put_temp_file(session::hook_line(nonce))) {
    const bool typed =
        !execution.finished() && !execution.held() &&
        type_line(execution, start_state(execution) + session::hook_dispatch_line(*file, nonce))
            .ok();
    // The typed line removes the file; a person took over meanwhile, or the
    // shell ended: nothing else would.
    if (!typed) co_await execution.remove_temp_file(*file);
    co_return typed;
  }
  // Else the line for the shell named: the host's probe, where it found the
  // login shell by its tag (a server that refused LC_AGENTTY_TERMINAL: not
  // before the hook reports the shell's pid), else the account's $SHELL.
  auto program = execution.foreground_program();
  if (!program) program = base_name(co_await execution.login_shell());
  if (execution.finished() || execution.held()) co_return false;
  co_return type_hook_line(execution, start_state(execution), program).ok();
}

Expected<void> retype_hook(session::Execution& execution) {
  return type_hook_line(execution, "", execution.foreground_program());
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
