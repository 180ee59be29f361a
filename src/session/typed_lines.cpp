#include "session/typed_lines.hpp"

#include "base/utf8.hpp"
#include "session/text_view.hpp"

namespace agentty::session {

namespace {

constexpr char kContinued = '\n';  // ends the continued part of a pending line

bool editable(const std::string& line) {
  return !line.empty() && line.back() != kContinued;
}

void erase_last_char(std::string& line) {
  while (editable(line) && is_utf8_continuation(line.back())) line.pop_back();
  if (editable(line)) line.pop_back();
}

void erase_last_word(std::string& line) {
  while (editable(line) && line.back() == ' ') line.pop_back();
  while (editable(line) && line.back() != ' ') line.pop_back();
}

void erase_current_line(std::string& line) {
  while (editable(line)) line.pop_back();
}

bool ends_in_continuation(const std::string& line) {
  std::size_t backslashes = 0;
  for (auto c = line.rbegin(); c != line.rend() && *c == '\\'; ++c) ++backslashes;
  return backslashes % 2 == 1;
}

// The command a pending line stands for: its parts joined, as the shell does.
std::string joined(const std::string& line) {
  std::string out;
  for (char c : line)
    if (c != kContinued) out += c;
  return out;
}

}  // namespace

TypedLines::Split TypedLines::split(std::string_view pending, std::string_view typed) {
  Split out;
  std::string line(pending);
  for (char c : typed) {
    switch (c) {
      case '\x05':  // ctrl-e: after ctrl-x, bash's edit-and-execute-command
        if (line.empty() || line.back() != '\x18') {
          line += c;
          break;
        }
        line.pop_back();
        out.lines.push_back(without_escapes(joined(line)));
        line.clear();
        break;
      case '\r':
      case '\n':
      case '\x0f':  // ctrl-o: readline's operate-and-get-next, zsh's accept-line-and-down-history
        if (ends_in_continuation(line)) {
          line.pop_back();
          out.lines.push_back(without_escapes(joined(line)));
          line += kContinued;
          break;
        }
        out.lines.push_back(without_escapes(joined(line)));
        line.clear();
        break;
      case '\x03':  // ctrl-c
        line.clear();
        break;
      case '\x15':  // ctrl-u
        erase_current_line(line);
        break;
      case '\x7f':
      case '\b':
        erase_last_char(line);
        break;
      case '\x17':  // ctrl-w
        erase_last_word(line);
        break;
      default:
        line += c;
    }
  }
  if (line.size() > kMaxPendingBytes) line.erase(0, line.size() - kMaxPendingBytes);
  out.pending = std::move(line);
  return out;
}

std::string_view TypedLines::current_line(std::string_view pending) {
  auto end_of_continued = pending.rfind(kContinued);
  return end_of_continued == std::string_view::npos ? pending
                                                    : pending.substr(end_of_continued + 1);
}

}  // namespace agentty::session
