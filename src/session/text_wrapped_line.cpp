// The text view's wrapped open line (see text_view.hpp): a line wider than
// the terminal takes several rows. Where a row move lands on one (a
// session's long command line, homed over by `clear` or a scroll region),
// the view follows which of its rows the cursor is on, so it goes on
// knowing the cursor's row on the screen; moves and erases along a row
// stay on that row, as a terminal's do.
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

// Where the cursor's row starts in the open line (0 unless it wraps).
std::size_t TextConverter::row_start() const {
  const std::optional<OpenRows> at = wrapped_ ? open_rows() : std::nullopt;
  return at ? at->row * terminal_.cols : 0;
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
  const std::optional<OpenRows> at = wrapped_ ? open_rows() : std::nullopt;
  if (!at) return false;
  const std::size_t in_line = at->rows - 1 - at->row;
  if (down > in_line) {
    down -= in_line;
    return false;
  }
  if (down > 0) changed_row_ = true;
  wrapped_ = OpenRows{at->row + down, at->rows};
  line_.move_to(wrapped_->row * terminal_.cols + std::min(column, terminal_.cols - 1));
  return true;
}

// Whether the cursor is on a row of a wrapped line above its last.
bool TextConverter::inside_wrapped_line() const {
  const std::optional<OpenRows> at = wrapped_ ? open_rows() : std::nullopt;
  return at && at->row + 1 < at->rows;
}

// CSI K on a row of a wrapped line above its last erases that row only.
void TextConverter::erase_to_row_end() {
  const std::optional<OpenRows> at = wrapped_ ? open_rows() : std::nullopt;
  const std::size_t column = line_.column();
  const std::size_t row_end = at ? (at->row + 1) * terminal_.cols : 0;
  if (at && at->row + 1 < at->rows && column < row_end) {
    line_.erase_cells(row_end - column);
  } else {
    line_.erase_to_end();
  }
}

}  // namespace agentty::session
