// The text view's live area (see text_view.hpp): the lines a move up takes
// back out of `out`, and the rows below the cursor they become until the
// cursor goes through them again or leaves them.
#include <algorithm>

#include "session/text_view.hpp"

namespace agentty::session {
namespace {

bool blank(std::string_view row) {
  return row.find_first_not_of(' ') == std::string_view::npos;
}

}  // namespace

std::size_t TextConverter::rows_of(std::string_view line, std::size_t cols) {
  const std::size_t columns = TextLine::columns_of(line);
  return std::max<std::size_t>(1, (columns + cols - 1) / cols);
}

// Lines written into another string, or into this one before someone else
// changed it, are not this conversion's to take back.
void TextConverter::check_written_lines(const std::string& out) {
  if (&out != written_into_ || out.size() != written_size_) forget_rows();
}

// After a move or change it does not follow, the view no longer knows where
// the cursor is among the rows, so it takes none back.
void TextConverter::forget_rows() {
  held_unplaced_ = held_blank_lines_;
  written_.clear();
  hidden_below_ = 0;
  unheld_above_ = 0;
  unheld_blank_ = false;
}

// A row the view no longer knows, in a scroll region it followed: it cannot
// count the rows while the region lasts (a LF at its bottom scrolls it).
void TextConverter::lose_row() {
  forget_rows();
  if (!region_bottom_) return;
  region_bottom_.reset();
  region_top_ = 0;
  in_unknown_region_ = true;
}

// The cursor is on `row` of a screen whose other rows are not the view's to
// take back: the rows below it blank, those above not its lines (blank too
// on a screen just cleared).
void TextConverter::know_row(std::size_t row, bool blank_above) {
  if (!terminal_.known()) return;
  row = std::min(row, terminal_.rows - 1);
  unheld_above_ = row;
  unheld_blank_ = blank_above;
  hidden_below_ = terminal_.rows - 1 - row;
}

void TextConverter::start_at(const TextStart& start) {
  if (!terminal_.known()) return;
  in_unknown_region_ = start.in_unknown_region;
  if (!start.row || in_unknown_region_) return;
  know_row(*start.row, false);
  region_bottom_ = start.region_bottom;
  region_top_ = start.region_top;
  saved_row_ = start.saved_row;
  saved_column_ = start.saved_column;
  changed_row_ = saved_row_ != start.row;  // a restore goes back up or down
}

TextStart TextConverter::position(const std::string& out) const {
  TextStart at;
  at.in_unknown_region = in_unknown_region_;
  at.row = cursor_row(out);
  if (!at.row) return at;
  at.saved_row = saved_row_;
  at.saved_column = saved_column_;
  at.region_bottom = region_bottom_;
  at.region_top = region_top_;
  return at;
}

void TextConverter::written_line_at(std::size_t offset, std::size_t rows) {
  if (!terminal_.known()) return;
  written_.push_back({offset, terminal_.cols, rows});
  if (written_.size() > terminal_.rows) written_.pop_front();
}

void TextConverter::set_terminal(TextTerminal terminal) {
  // A resize moves the rows as the terminal sees fit (rows scrolled away
  // or back): the blank rows known around the cursor are no longer known.
  if (terminal.cols != terminal_.cols || terminal.rows != terminal_.rows) {
    hidden_below_ = 0;
    unheld_above_ = 0;
  }
  terminal_ = terminal;
  region_bottom_.reset();  // a resize resets the scroll region
  region_top_ = 0;
  in_unknown_region_ = false;
  if (!terminal_.known()) forget_rows();
  while (written_.size() > terminal_.rows) written_.pop_front();
}

void TextConverter::move_row(const LineEscape& action, std::size_t column, std::string& out) {
  if (action.row > 0 && move_to_row(action.row - 1, column, out)) return;
  if (action.up > 0 && take_back(action.up, action.scrolls_at_top, column, out)) return;
  // Where the row is known a move down stops at the bottom row (libvterm's
  // does so in a scroll region too).
  const std::optional<std::size_t> row = action.down > 0 ? cursor_row(out) : std::nullopt;
  if (action.down > 0 && (!below_.empty() || hidden_below_ > 0 || row)) {
    move_down(row ? std::min(action.down, terminal_.rows - 1 - *row) : action.down, column, out);
    return;
  }
  // Back over the empty lines held only (the held-lines rule) the view
  // still knows where the lines it wrote are; after any other move it does
  // not follow (a row by number, a move up past what it holds) they no
  // longer lie above the cursor in order, and none may be taken back.
  const std::optional<std::size_t> target = landing_row(action, out);
  // Past the top row the cursor stops there.
  const std::size_t up = target && action.row == 0 ? *cursor_row(out) - *target : action.up;
  // (Those held before the view lost the row are not rows it knows.)
  const bool over_held_lines =
      action.row == 0 && up > 0 &&
      up + std::min(held_unplaced_, held_blank_lines_) <= held_blank_lines_ &&
      line_.text().empty() && below_.empty();
  change_row(column, up, out);
  if ((action.row > 0 || action.up > 0) && !over_held_lines) {
    // Into the blank rows of a screen just cleared (the alternate screen,
    // `clear`), from where nothing was drawn since, the view still knows
    // the row: the rows it leaves are blank too. A row by number it knows
    // anyway (a program's `clear` in a session goes above the lines the
    // answer holds), taking the rows below as blank. After a move up
    // anywhere else the rows below would hold what it wrote, which it
    // cannot go through again (as empty lines).
    const bool over_blank_rows = unheld_blank_ && written_.empty() && below_.empty();
    if (target && (over_blank_rows || action.row > 0)) {
      forget_rows();
      know_row(*target, over_blank_rows);
    } else {
      lose_row();
    }
  }
}

// The row a move up or to a row by number lands on, where the view knows
// the cursor's row (a move up stops at the top row; ESC M scrolls there).
std::optional<std::size_t> TextConverter::landing_row(const LineEscape& action,
                                                      const std::string& out) const {
  const std::optional<std::size_t> row = cursor_row(out);
  if (!row) return std::nullopt;
  if (action.row > 0) return std::min(action.row - 1, terminal_.rows - 1);
  // ESC M at the top row, or at a region's top, scrolls instead.
  if (action.scrolls_at_top && (action.up > *row || (region_bottom_ && *row == region_top_)))
    return std::nullopt;
  return *row - std::min(action.up, *row);
}

// The cursor's row on the screen (0: the top), when the view knows it: the
// rows it holds above the cursor (the empty lines held, the lines in
// written_) and below it (below_) span the whole terminal, so they were
// written down to its bottom row (a LF there scrolls the screen, the cursor
// stays) and the cursor is as many rows above that as there are below it.
// A wrapped open line counts its rows above and below the cursor's, where
// the view knows which that is (open_rows); else the row is not known.
std::optional<std::size_t> TextConverter::cursor_row(const std::string& out) const {
  if (!terminal_.known() || in_unknown_region_) return std::nullopt;
  const std::optional<OpenRows> open = open_rows();
  if (!open) return std::nullopt;
  std::size_t below = hidden_below_ + (open->rows - 1 - open->row);
  for (const std::string& row : below_) below += rows_of(row, terminal_.cols);
  if (below >= terminal_.rows) return std::nullopt;
  const std::size_t needed = terminal_.rows - 1 - below;
  // Empty lines held before the view lost the row are not above it.
  std::size_t above =
      held_blank_lines_ - std::min(held_unplaced_, held_blank_lines_) + unheld_above_ + open->row;
  std::size_t end = out.size();
  for (auto line = written_.rbegin(); line != written_.rend() && above < needed; ++line) {
    above += rows_taken(*line, std::string_view(out).substr(line->offset, end - 1 - line->offset));
    end = line->offset;
  }
  if (above < needed) return std::nullopt;
  return needed;
}

// The rows above the cursor, nearest first, are the empty lines held, then
// the lines in written_, newest first.
bool TextConverter::take_back(std::size_t up, bool scrolls_at_top, std::size_t column,
                              std::string& out) {
  if (!terminal_.known()) return false;
  const std::string open = line_.text();
  if (TextLine::columns_of(open) > terminal_.cols) return move_up_in_line(up, column);
  // Past the top row a terminal's cursor stops there (a display taller than
  // the terminal: the rows above are in the scrollback). ESC M scrolls
  // instead, which the view cannot follow. Where the view does not know the
  // cursor's row, a move up further than the lines it holds is a row move
  // as without the size (below).
  const std::optional<std::size_t> row = cursor_row(out);
  if (scrolls_at_top && row && region_bottom_ && *row == region_top_) return false;
  if (row && up > *row) {
    if (scrolls_at_top) return false;
    up = *row;
    if (up == 0) {
      line_.move_to(column);
      return true;
    }
  }
  // Back over the empty lines below a prompt only: the held-lines rule.
  if (open.empty() && below_.empty() && up <= held_blank_lines_) return false;
  const std::size_t held = held_blank_lines_;
  std::size_t first = written_.size();  // the first line taken back
  std::string target;
  std::size_t target_cols = terminal_.cols;
  std::size_t target_rows = 1;
  std::deque<std::string> rows;  // between the target and the open line
  if (up > held) {
    std::size_t remaining = up - held;
    std::size_t end = out.size();
    while (remaining > 0 && first > 0) {
      --first;
      const WrittenLine& line = written_[first];
      const std::size_t taken =
          rows_taken(line, std::string_view(out).substr(line.offset, end - 1 - line.offset));
      if (taken > remaining) return false;  // inside a wrapped line
      remaining -= taken;
      end = line.offset;
    }
    if (remaining > 0) return false;  // above the lines held
    for (std::size_t k = first; k < written_.size(); ++k) {
      const std::size_t start = written_[k].offset;
      const std::size_t next = k + 1 < written_.size() ? written_[k + 1].offset : out.size();
      std::string line = out.substr(start, next - 1 - start);
      if (k == first) {
        target_rows = rows_taken(written_[k], line);
        target = std::move(line);
        target_cols = written_[k].cols;
      } else {
        rows.push_back(std::move(line));
      }
    }
    rows.insert(rows.end(), held, std::string());
    lines_ended_ -= written_.size() - first;
    out.resize(written_[first].offset);
    written_.resize(first);
    held_blank_lines_ = 0;
  } else {
    rows.assign(up - 1, std::string());
    held_blank_lines_ = held - up;
  }
  rows.push_back(open);
  rows.insert(rows.end(), std::make_move_iterator(below_.begin()),
              std::make_move_iterator(below_.end()));
  below_ = std::move(rows);
  // On a line wider than the terminal (written at its width): on its
  // first row.
  wrapped_.reset();
  if (target_rows > 1 && target_cols == terminal_.cols) wrapped_ = OpenRows{0, target_rows};
  // Its rows are as wide as the terminal, where the cursor stops.
  line_.assign(target, wrapped_ ? std::min(column, terminal_.cols - 1) : column);
  printed_ = !target.empty();
  changed_row_ = true;
  return true;
}

// A move to a row given by number (CSI H, CSI d, a restore), where the view
// knows the cursor's row: as a move up or down by the difference. A full
// screen of rows redrawn from the top (top, watch on the normal screen) or
// a status line drawn on the bottom row between a save and a restore reads
// as the screen shows it.
bool TextConverter::move_to_row(std::size_t row, std::size_t column, std::string& out) {
  const std::optional<std::size_t> current = cursor_row(out);
  if (!current) return false;
  row = std::min(row, terminal_.rows - 1);
  if (row == *current) {
    line_.move_to(column_on_row(column));
    return true;
  }
  if (row > *current) {
    for (const std::string& below : below_) {
      if (rows_of(below, terminal_.cols) > 1) return false;  // rows the view cannot count
    }
    move_down(row - *current, column, out);
    return true;
  }
  const std::size_t up = *current - row;
  if (take_back(up, false, column, out)) return true;
  if (!line_.text().empty() || !below_.empty() || up > held_blank_lines_) return false;
  change_row(column, up, out);  // back over empty lines only
  return true;
}

// CSI 2J over the live area or where the view knows the cursor's row
// (`clear` is CSI H CSI 2J): what the rows showed stays in the text (a
// person read it before it went), as the view keeps what scrolls away. The
// cursor stays on its row, now of a blank screen.
void TextConverter::erase_screen(std::string& out) {
  const std::optional<std::size_t> row = cursor_row(out);
  const std::size_t column = line_.column();
  end_live_rows(false, out);
  forget_rows();
  line_.clear(column);
  wrapped_.reset();
  printed_ = false;
  if (row) know_row(*row, true);
}

// To or from the alternate screen: the rows the view holds are not on the
// screen the program draws on next, so none may be taken back (a full-screen
// program's CSI H must not go back over the output before it), and the line
// at the cursor ends. The cursor stays (?1049 h saves it, l restores it), so
// where the view knew its row it goes on knowing it: a program that redraws
// parts of its alternate screen (watch) reads as its frames.
void TextConverter::switch_screen(const LineEscape& action, std::string& out) {
  if (!terminal_.known()) return;  // the line goes on, as without rows
  std::optional<std::size_t> row = cursor_row(out);
  std::size_t column = line_.column();
  if (action.cursor_saved && action.n == 1) {
    saved_row_ = row;
    saved_column_ = column;
  } else if (action.cursor_saved) {
    row = saved_row_;
    column = saved_column_;
  }
  change_row(column, 0, out);
  // Empty lines passed over on the alternate screen are not on the normal
  // one (ncurses leaves with the cursor on the bottom row).
  if (action.n == 0) held_blank_lines_ = 0;
  forget_rows();
  if (row) know_row(*row, action.n == 1);
}

// CSI L, M, S, T: the rows at and around the cursor move under it. The line
// there and the rows below are written as they were; the cursor's row stays.
void TextConverter::shift_rows(std::string& out) {
  if (!terminal_.known()) return;
  const std::optional<std::size_t> row = cursor_row(out);
  change_row(line_.column(), 0, out);
  forget_rows();
  if (row) know_row(*row, false);
}

// ESC c: a blank screen, the cursor at its top left, no scroll region.
void TextConverter::reset_screen(std::string& out) {
  change_row(0, 0, out);
  forget_rows();
  region_bottom_.reset();
  region_top_ = 0;
  in_unknown_region_ = false;
  saved_row_.reset();
  saved_column_ = 0;
  know_row(0, true);
}

// CSI t ; b r. In a region a LF at its bottom row scrolls the region and
// leaves the rows under it (apt's progress line on the last row) and above
// it (a split pane's header): followed where the view knows the cursor's
// row when the region is set, so those rows are already among the ones it
// counts around the cursor.
void TextConverter::set_scroll_region(std::size_t top, std::size_t bottom, std::string& out) {
  region_bottom_.reset();
  region_top_ = 0;
  in_unknown_region_ = false;
  const std::size_t last = bottom == 0 ? terminal_.rows : std::min(bottom, terminal_.rows);
  if (last == terminal_.rows && top <= 1) return;  // the whole screen
  if (cursor_row(out) && std::max<std::size_t>(top, 1) < last) {
    region_top_ = std::max<std::size_t>(top, 1) - 1;
    region_bottom_ = last - 1;
  } else {
    in_unknown_region_ = true;
  }
}

// After a region that starts below the top row scrolls, the line that left
// its top is gone (on a VT100): the lines the view may take back are those
// in the region, and the rows above it are not its to take back.
void TextConverter::keep_region_lines(const std::string& out) {
  const std::size_t rows = *region_bottom_ - region_top_;  // above the cursor, in the region
  std::size_t above = std::min(held_blank_lines_, rows);
  std::size_t end = out.size();
  std::size_t kept = 0;
  for (auto line = written_.rbegin(); line != written_.rend(); ++line, ++kept) {
    const std::size_t taken =
        rows_taken(*line, std::string_view(out).substr(line->offset, end - 1 - line->offset));
    if (above + taken > rows) break;
    above += taken;
    end = line->offset;
  }
  written_.erase(written_.begin(), written_.end() - static_cast<std::ptrdiff_t>(kept));
  unheld_above_ = region_top_ + rows - above;
  unheld_blank_ = false;
}

void TextConverter::blank_rows_below() {
  hidden_below_ += below_.size();
  below_.clear();
}

void TextConverter::move_down(std::size_t down, std::size_t column, std::string& out) {
  if (move_down_in_line(down, column)) return;
  if (down == 0) {
    line_.move_to(column);
    return;
  }
  // Blank rows under the live area that the move reaches become its rows.
  if (down > below_.size()) {
    const std::size_t blank = std::min(down - below_.size(), hidden_below_);
    below_.insert(below_.end(), blank, std::string());
    hidden_below_ -= blank;
  }
  end_row(line_.text(), out, open_line_rows());
  for (std::size_t k = 1; k < down && !below_.empty(); ++k) {
    end_row(below_.front(), out);
    below_.pop_front();
  }
  wrapped_.reset();
  if (below_.empty()) {  // past the bottom row: a new line
    line_.clear(column);
    printed_ = false;
  } else {
    line_.assign(below_.front(), column);
    printed_ = !below_.front().empty();
    below_.pop_front();
  }
  changed_row_ = true;
}

// A row of the live area, as the view writes a line a row move ends: its
// text without the spaces at its end, or an empty line held.
void TextConverter::end_row(std::string_view text, std::string& out, std::size_t rows) {
  const std::size_t end = text.find_last_not_of(' ') + 1;  // npos + 1 == 0
  if (end == 0) {
    ++held_blank_lines_;
    return;
  }
  write_held_lines(out);
  written_line_at(out.size(), rows);
  out.append(text.substr(0, end));
  out += '\n';
  ++lines_ended_;
}

// Leaves the live area: the row at the cursor and those below it are
// written as rows a move ends, without the blank ones at the bottom (a
// display erased and not drawn again). At the end of the output a bottom
// row with text stays the open line (the output's last line had no LF), and
// the cursor's row, ended before, reads as a LF ends it (a prompt keeps its
// trailing space).
void TextConverter::end_live_rows(bool at_end, std::string& out) {
  std::deque<std::string> rows = std::move(below_);
  below_.clear();
  hidden_below_ = 0;
  unheld_above_ = 0;
  const bool bottom_blank = rows.empty() || blank(rows.back());
  while (!rows.empty() && blank(rows.back())) rows.pop_back();
  std::string open;
  if (at_end && !bottom_blank) {
    open = std::move(rows.back());
    rows.pop_back();
  }
  const std::string current = line_.text();
  if (!rows.empty() || !open.empty() || !blank(current)) {
    if (!at_end || blank(current)) {
      end_row(current, out, open_line_rows());
    } else {
      write_held_lines(out);
      written_line_at(out.size(), open_line_rows());
      out += current;
      out += '\n';
      ++lines_ended_;
    }
  }
  for (const std::string& row : rows) end_row(row, out);
  line_.assign(open, 0);
  wrapped_.reset();
  printed_ = !open.empty();
}

}  // namespace agentty::session
