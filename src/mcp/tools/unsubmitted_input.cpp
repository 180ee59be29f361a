#include "mcp/tools/unsubmitted_input.hpp"

#include "base/utf8.hpp"
#include "session/execution.hpp"
#include "session/text_view.hpp"
#include "session/typed_lines.hpp"

namespace agentty::mcp::tools {

namespace {

constexpr std::size_t kQuotedMax = 60;  // bytes of the pending text a message quotes

std::string_view without_trailing_spaces(std::string_view text) {
  const auto end = text.find_last_not_of(' ');
  return end == std::string_view::npos ? std::string_view{} : text.substr(0, end + 1);
}

}  // namespace

std::optional<std::string> unsubmitted_input(session::Execution& execution) {
  if (execution.finished() || execution.held() || !execution.waiting_for_input())
    return std::nullopt;
  const std::string typed =
      session::without_escapes(session::TypedLines::current_line(execution.agent_typed_line()));
  const auto pending = without_trailing_spaces(typed);
  if (pending.empty()) return std::nullopt;
  // vim, less: what was typed are keys, not a line.
  if (execution.screen_modes().alt_screen) return std::nullopt;
  const auto snapshot = execution.screen().snapshot();
  const auto row = static_cast<std::size_t>(snapshot.cursor.row);
  if (row >= snapshot.lines.size() ||
      !without_trailing_spaces(snapshot.lines[row]).ends_with(pending))
    return std::nullopt;
  const std::size_t from =
      utf8_char_start(pending, pending.size() > kQuotedMax ? pending.size() - kQuotedMax : 0);
  std::string shown(from > 0 ? "..." : "");
  shown += pending.substr(from);
  return "\"" + execution.redacted(shown) + "\"";
}

std::string unsubmitted_input_advice(const std::string& quoted) {
  return quoted +
         " is typed but not submitted: no Enter followed it, and the program waits with it on "
         "its input line. A program that reads lines (a [Y/n] or read prompt, a REPL, a shell) "
         "gets it only at Enter: write newline=true (or keys [\"enter\"]) to submit it, keys "
         "[\"ctrl-u\"] to erase it.";
}

}  // namespace agentty::mcp::tools
