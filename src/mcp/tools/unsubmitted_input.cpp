#include "mcp/tools/unsubmitted_input.hpp"

#include <algorithm>

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

// Whether the screen shows `pending` at the end of the line the cursor is
// on, also where that line wrapped onto the cursor's row from rows above
// (a long answer on a narrow terminal: the cursor's row holds only its end).
bool shown_before_cursor(const session::ScreenSnapshot& snapshot, std::string_view pending) {
  const auto row = static_cast<std::size_t>(snapshot.cursor.row);
  if (row >= snapshot.lines.size()) return false;
  std::string line(without_trailing_spaces(snapshot.lines[row]));
  const std::size_t cols = std::max(snapshot.cols, 1);
  for (std::size_t above = 1; above <= row && line.size() < pending.size() + cols; ++above) {
    if (line.ends_with(pending)) return true;
    const std::string& previous = snapshot.lines[row - above];
    if (previous.size() < cols / 2) break;  // not a row the line wrapped from
    line = previous + line;
  }
  return line.ends_with(pending);
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
  // A password prompt shows nothing of it: say how long, never what.
  if (execution.hides_typed_line() == std::optional<bool>(true))
    return "hidden input (" +
           std::to_string(std::count_if(pending.begin(), pending.end(),
                                        [](char c) { return (c & 0xC0) != 0x80; })) +
           " characters, not shown)";
  if (!shown_before_cursor(execution.screen().snapshot(), pending)) return std::nullopt;
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
