#include "session/screen_cells.hpp"

#include "base/utf8.hpp"
#include "session/char_width.hpp"
#include "session/wide_stand_ins.hpp"

namespace agentty::session {
namespace {

void trim_trailing_blanks(std::string& line) {
  auto end = line.find_last_not_of(' ');
  line.erase(end == std::string::npos ? 0 : end + 1);
}

// An erased cell with the look it had (a coloured wide character's
// remaining half keeps its background).
void blank(VTermScreenCell& cell) {
  cell.chars[0] = 0;
  cell.width = 1;
}

}  // namespace

void repair_wide_halves(VTermScreenCell* cells, int cols) {
  for (int col = 0; col < cols; ++col) {
    VTermScreenCell& cell = cells[col];
    // A whole wide character's placeholder is stepped over below, so any
    // placeholder met here lost its first half.
    if (cell.chars[0] == kWidePlaceholder) {
      blank(cell);
      continue;
    }
    if (cell.chars[0] == 0) continue;
    const bool wide = char_width(static_cast<char32_t>(without_wide_stand_in(cell.chars[0]))) == 2;
    const bool covers_next = col + 1 < cols && cells[col + 1].chars[0] == kWidePlaceholder;
    if (wide && covers_next) {
      ++col;
    } else if (wide) {
      blank(cell);  // its second half was written over
    } else {
      cell.width = 1;  // a placeholder after it is an orphan, blanked next
    }
  }
}

// Appends one cell's characters; erased cells are a space, placeholders none.
void append_cell_text(std::string& out, const VTermScreenCell& cell) {
  if (cell.chars[0] == kWidePlaceholder) return;
  if (cell.chars[0] == 0) {
    out += ' ';
    return;
  }
  for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i] != 0; ++i) {
    append_utf8(out, without_wide_stand_in(cell.chars[i]));
  }
}

std::string cells_to_text(const VTermScreenCell* cells, int cols) {
  std::string line;
  line.reserve(static_cast<std::size_t>(cols));
  for (int col = 0; col < cols; ++col) append_cell_text(line, cells[col]);
  trim_trailing_blanks(line);
  return line;
}

// SGR parameters (after a reset) that give a cell's attributes and colours.
std::string sgr_for(const VTermScreenCellAttrs& attrs, const VTermColor& fg, const VTermColor& bg) {
  std::string sgr = "\x1b[0";
  if (attrs.bold) sgr += ";1";
  if (attrs.italic) sgr += ";3";
  if (attrs.underline == VTERM_UNDERLINE_SINGLE) sgr += ";4";
  if (attrs.underline == VTERM_UNDERLINE_DOUBLE) sgr += ";21";
  if (attrs.underline == VTERM_UNDERLINE_CURLY) sgr += ";4:3";
  if (attrs.blink) sgr += ";5";
  if (attrs.reverse) sgr += ";7";
  if (attrs.strike) sgr += ";9";
  auto colour = [&sgr](const VTermColor& c, bool is_fg) {
    if (is_fg ? VTERM_COLOR_IS_DEFAULT_FG(&c) : VTERM_COLOR_IS_DEFAULT_BG(&c)) return;
    int base = is_fg ? 30 : 40;
    if (VTERM_COLOR_IS_INDEXED(&c)) {
      int idx = c.indexed.idx;
      if (idx < 8) {
        sgr += ";" + std::to_string(base + idx);
      } else if (idx < 16) {
        sgr += ";" + std::to_string(base + 60 + idx - 8);
      } else {
        sgr += ";" + std::to_string(base + 8) + ";5;" + std::to_string(idx);
      }
    } else {
      sgr += ";" + std::to_string(base + 8) + ";2;" + std::to_string(c.rgb.red) + ";" +
             std::to_string(c.rgb.green) + ";" + std::to_string(c.rgb.blue);
    }
  };
  colour(fg, true);
  colour(bg, false);
  sgr += 'm';
  return sgr;
}

bool same_look(const VTermScreenCell& a, const VTermScreenCell& b) {
  return a.attrs.bold == b.attrs.bold && a.attrs.italic == b.attrs.italic &&
         a.attrs.underline == b.attrs.underline && a.attrs.blink == b.attrs.blink &&
         a.attrs.reverse == b.attrs.reverse && a.attrs.strike == b.attrs.strike &&
         vterm_color_is_equal(&a.fg, &b.fg) && vterm_color_is_equal(&a.bg, &b.bg) &&
         a.fg.type == b.fg.type && a.bg.type == b.bg.type;
}

bool looks_default(const VTermScreenCell& c) {
  return !c.attrs.underline && !c.attrs.reverse && !c.attrs.strike &&
         VTERM_COLOR_IS_DEFAULT_BG(&c.bg);
}

// No attribute and the default colours: text drawn with a reset pen.
bool looks_plain(const VTermScreenCell& c) {
  return looks_default(c) && !c.attrs.bold && !c.attrs.italic && !c.attrs.blink &&
         VTERM_COLOR_IS_DEFAULT_FG(&c.fg);
}

// The last column of `cells` that shows anything (text, or a background,
// underline or reverse video on a blank); -1 for a blank row.
int last_shown_col(const VTermScreenCell* cells, int cols) {
  int last = cols - 1;
  while (last >= 0) {
    const auto& cell = cells[last];
    if ((cell.chars[0] != 0 && cell.chars[0] != ' ') || !looks_default(cell)) break;
    --last;
  }
  return last;
}

// A row as text with SGR sequences where the look changes, from a reset pen
// and back to it at its end (see Screen::styled_lines()).
std::string cells_to_styled(const VTermScreenCell* cells, int cols) {
  int last = last_shown_col(cells, cols);
  std::string line;
  bool styled = false;  // the pen is not the default one
  const VTermScreenCell* pen = nullptr;
  for (int col = 0; col <= last; ++col) {
    const auto& cell = cells[col];
    if (cell.chars[0] == kWidePlaceholder) continue;
    bool plain = looks_plain(cell);
    if (plain ? styled : (!styled || !same_look(cell, *pen))) {
      line += plain ? "\x1b[0m" : sgr_for(cell.attrs, cell.fg, cell.bg);
      styled = !plain;
      pen = &cell;
    }
    append_cell_text(line, cell);
  }
  if (styled) line += "\x1b[0m";
  return line;
}

// A styled line without its SGR sequences: the text cells_to_text() gives
// (cell text never holds ESC, so every ESC starts one of ours).
std::string without_sgr(std::string_view styled) {
  std::string text;
  text.reserve(styled.size());
  for (std::size_t i = 0; i < styled.size(); ++i) {
    if (styled[i] != '\x1b') {
      text += styled[i];
      continue;
    }
    auto end = styled.find('m', i);
    if (end == std::string_view::npos) break;
    i = end;
  }
  trim_trailing_blanks(text);
  return text;
}

}  // namespace agentty::session
