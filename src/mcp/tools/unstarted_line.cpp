#include "mcp/tools/unstarted_line.hpp"

#include <algorithm>
#include <regex>

#include "session/text_view.hpp"

namespace agentty::mcp::tools {

bool asks_to_correct(session::Execution& execution) {
  auto snapshot = execution.screen().snapshot();
  if (snapshot.cursor.row < 0 || snapshot.cursor.row >= static_cast<int>(snapshot.lines.size()))
    return false;
  static const std::regex question(R"(correct '.*' to '.*' \[nyae\]\? *$)");
  return std::regex_search(snapshot.lines[snapshot.cursor.row], question);
}

const char* const kCorrectionAdvice =
    "zsh asks whether to correct the command's spelling (setopt correct): write input \"n\" "
    "runs it as typed, \"y\" runs the correction, \"a\" drops the line, \"e\" edits it; the "
    "write's answer shows what the command printed. `unsetopt correct correct_all` turns the "
    "question off.";

std::string printed_before_prompt(session::Execution& execution,
                                  const session::ShellCommand& command) {
  constexpr std::uint64_t kMaxBytes = 64 * 1024;  // an error message, not a command's output
  const auto& log = execution.log();
  const auto end = execution.shell()->last_end_mark_begin();
  const auto begin = std::max(command.submitted_seq, log.first_retained_seq());
  if (end <= begin || end - begin > kMaxBytes) return {};
  const std::string bytes = log.copy_range(begin, end);
  std::size_t at = 0;  // past the echo: one line per line of the command
  for (auto lines = 1 + std::count(command.text.begin(), command.text.end(), '\n'); lines > 0;
       --lines) {
    at = bytes.find('\n', at);
    if (at == std::string::npos) return {};
    ++at;
  }
  return session::to_text(std::string_view(bytes).substr(at), log.charsets_at(begin + at));
}

}  // namespace agentty::mcp::tools
