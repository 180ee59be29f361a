// Test helpers for differential checks of the text view against libvterm:
// the rows a text reads as, and the rows (scrollback first) a Screen shows.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "session/char_width.hpp"
#include "session/screen.hpp"
#include "session/text_view.hpp"

namespace agentty::session {

// A text line as a terminal row shows it: TABs as the blanks they span,
// trailing blanks dropped.
inline std::string as_row(const std::string& line) {
  std::string out;
  std::size_t column = 0;
  for (std::size_t i = 0; i < line.size();) {
    const auto c = static_cast<unsigned char>(line[i]);
    const std::size_t length = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (c == '\t') {
      const std::size_t stop = (column / 8 + 1) * 8;
      out.append(stop - column, ' ');
      column = stop;
      ++i;
      continue;
    }
    char32_t cp = length == 1 ? c : c & (0x7f >> length);
    for (std::size_t k = 1; k < length; ++k) cp = (cp << 6) | (line[i + k] & 0x3f);
    column += static_cast<std::size_t>(char_width(cp));
    out.append(line, i, length);
    i += length;
  }
  out.erase(out.find_last_not_of(' ') + 1);
  return out;
}

// The rows of a text, without the empty ones at its end.
inline std::vector<std::string> rows_of_text(const std::string& text) {
  std::vector<std::string> rows;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    rows.push_back(as_row(text.substr(start, end - start)));
    start = end + 1;
  }
  while (!rows.empty() && rows.back().empty()) rows.pop_back();
  return rows;
}

inline std::vector<std::string> text_rows(const std::string& raw, TextTerminal terminal = {}) {
  return rows_of_text(to_text(raw, {}, terminal));
}

// The same for bytes written from the top left of a fresh terminal.
inline std::vector<std::string> fresh_text_rows(const std::string& raw, TextTerminal terminal) {
  return rows_of_text(to_text(raw, {}, TerminalSizes{{0, terminal}}, TextStart::top_left()));
}

// libvterm's scrollback and rows.
inline std::vector<std::string> terminal_rows(const std::string& raw,
                                              pty::TerminalSize size = {300, 60}) {
  Screen screen(size);
  screen.feed(raw);
  ScreenSnapshot snapshot = screen.snapshot(10000);
  std::vector<std::string> rows = std::move(snapshot.scrollback);
  rows.insert(rows.end(), snapshot.lines.begin(), snapshot.lines.end());
  while (!rows.empty() && rows.back().empty()) rows.pop_back();
  return rows;
}

}  // namespace agentty::session
