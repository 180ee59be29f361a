// The text view's wrapped open line (see text_view.hpp): a line wider than
// the terminal takes several rows. Where a row move lands on one (a
// session's long command line, homed over by `clear` or a scroll region),
// or readline moves the cursor onto its next row, the view follows which
// of its rows the cursor is on, so it goes on knowing the cursor's row on
// the screen; moves and erases along a row stay on that row, as a
// terminal's do.
#include <algorithm>

#include "session/text_view.hpp"

namespace agentty::session {

// The open line's rows and the cursor's among them, where the view knows
// them: a line no wider than the terminal is one row; a wider one only
// while the cursor stays on the row a move put it on (just past its last
// column, the terminal's pending wrap, it still is).
std::optional<TextConverter::OpenRows> TextConverter::open_rows() const {
  const std::size_t cols = terminal_.cols;
  if (!wrapped_) {
    if (TextLine::columns_of(line_.text()) > cols) return std::nullopt;
    return OpenRows{0, 1};
  }
  const std::size_t first = wrapped_->row * cols;
  const std::size_t column = line_.cursor_column();
  if (column < first || column > first + cols) return std::nullopt;
  return OpenRows{wrapped_->row, std::max(wrapped_->rows, rows_of(line_.text(), cols))};
}

// The open line's rows where a move landed on it (or readline's CR).
std::optional<TextConverter::OpenRows> TextConverter::landed_rows() const {
  return wrapped_ ? open_rows() : std::nullopt;
}

// Where the cursor's row starts in the open line (0 unless it wraps).
std::size_t TextConverter::row_start() const {
  const std::optional<OpenRows> at = landed_rows();
  return at ? at->row * terminal_.cols : 0;
}

// The open line's column for `column` on its row `row`: rows are as wide
// as the terminal, where the cursor stops.
std::size_t TextConverter::row_column(std::size_t row, std::size_t column) const {
  return row * terminal_.cols + std::min(column, terminal_.cols - 1);
}

// The open line's column for `column` on the cursor's row.
std::size_t TextConverter::column_on_row(std::size_t column) const {
  return wrapped_ ? row_start() + std::min(column, terminal_.cols - 1) : column;
}

// The cursor's column on its row of the screen.
std::size_t TextConverter::screen_column() {
  const std::size_t column = line_.column();
  return column - std::min(column, row_start());
}

// A move down by `down` rows from a wrapped line goes through its rows
// below the cursor first: true if it ends among them; else `down` is left
// as the rows to go under the line.
bool TextConverter::move_down_in_line(std::size_t& down, std::size_t column) {
  const std::optional<OpenRows> at = landed_rows();
  if (!at) return false;
  const std::size_t in_line = at->rows - 1 - at->row;
  if (down > in_line) {
    down -= in_line;
    return false;
  }
  if (down > 0) changed_row_ = true;
  wrapped_ = OpenRows{at->row + down, at->rows};
  line_.move_to(row_column(wrapped_->row, column));
  return true;
}

// A move up by `up` rows from a row of a wrapped line the view follows:
// true if it ends among the line's rows (readline's CSI A back to the row
// it leaves a command line as wide as the terminal on).
bool TextConverter::move_up_in_line(std::size_t up, std::size_t column) {
  const std::optional<OpenRows> at = landed_rows();
  if (!at || up > at->row) return false;
  if (up > 0) changed_row_ = true;
  wrapped_ = OpenRows{at->row - up, at->rows};
  line_.move_to(row_column(wrapped_->row, column));
  return true;
}

// A CR right after a space that took the line onto a new row goes to that
// row's start, as the terminal's does: readline's way onto the next row at
// the right margin (a space, then CR), after which the rest of a command
// line typed there follows on that row. The rows the line wrapped onto
// were blank ones below the cursor (over rows of a live area, it is not
// followed). Any other CR on a wrapped line the view does not follow goes
// to the line's start: a progress line wider than the terminal reads as
// its last state, not as a terminal's cascade.
void TextConverter::carriage_return() {
  const std::size_t cols = terminal_.cols;
  const std::size_t column = line_.cursor_column();
  if (!landed_rows() && terminal_.known() && below_.empty() && column > cols &&
      column % cols == 1) {
    const std::string& text = line_.text();
    if (TextLine::columns_of(text) == column && text.back() == ' ') {
      const std::size_t rows = column / cols + 1;
      hidden_below_ -= std::min(hidden_below_, rows - std::min(rows, open_line_rows()));
      wrapped_ = OpenRows{rows - 1, rows};
    }
  }
  line_.move_to(row_start());
}

// Whether the cursor is on a row of a wrapped line above its last.
bool TextConverter::inside_wrapped_line() const {
  const std::optional<OpenRows> at = landed_rows();
  return at && at->row + 1 < at->rows;
}

// CSI K on a row of a wrapped line above its last erases that row only.
void TextConverter::erase_to_row_end() {
  const std::optional<OpenRows> at = landed_rows();
  const std::size_t column = line_.column();
  const std::size_t row_end = at ? (at->row + 1) * terminal_.cols : 0;
  if (at && at->row + 1 < at->rows && column < row_end) {
    line_.erase_cells(row_end - column);
  } else {
    line_.erase_to_end();
  }
}

// A LF on a row of a wrapped line above its last, where nothing shows on
// the rows below (readline's space past the margin): the line ends with
// the cursor's row, which must hold text (else the rows the line took
// would not count to the cursor's), and the view goes on knowing the row.
// False where the line stays whole; else `blank_under` is the rows of the
// line under the next row (blank rows the cursor has below it).
bool TextConverter::cut_at_row_end(std::size_t& blank_under) {
  const std::optional<OpenRows> at = landed_rows();
  if (!at || at->row + 1 >= at->rows) return false;
  const std::string text = line_.text();
  TextLine head;
  head.assign(text, (at->row + 1) * terminal_.cols);
  head.erase_to_end();
  const std::string& kept = head.text();
  if (TextLine::columns_of(kept) <= at->row * terminal_.cols || !text.starts_with(kept) ||
      text.find_first_not_of(' ', kept.size()) != std::string::npos)
    return false;
  line_.assign(kept, 0);
  wrapped_ = OpenRows{at->row, at->row + 1};
  blank_under = at->rows - at->row - 2;
  return true;
}

}  // namespace agentty::session
