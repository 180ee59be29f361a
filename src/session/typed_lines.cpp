#include "session/typed_lines.hpp"

#include "session/text_view.hpp"

namespace agentty::session {

namespace {

void erase_last_char(std::string& line) {
  while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xc0) == 0x80) line.pop_back();
  if (!line.empty()) line.pop_back();
}

void erase_last_word(std::string& line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  while (!line.empty() && line.back() != ' ') line.pop_back();
}

}  // namespace

TypedLines::Split TypedLines::split(std::string_view pending, std::string_view typed) {
  Split out;
  std::string line(pending);
  for (char c : typed) {
    switch (c) {
      case '\r':
      case '\n':
        out.lines.push_back(to_text(line));
        line.clear();
        break;
      case '\x03':  // ctrl-c
      case '\x15':  // ctrl-u
        line.clear();
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

}  // namespace agentty::session
