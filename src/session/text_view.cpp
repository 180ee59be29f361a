#include "session/text_view.hpp"

#include "base/utf8.hpp"
#include "session/line_escape.hpp"
#include "session/text_units.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace agentty::session {

using text_units::bytes_of;
using text_units::is_printable_ascii;
using text_units::kEsc;
using text_units::scan_unit;
using text_units::shows_text;
using text_units::Unit;
using text_units::UnitKind;

void TextConverter::feed(std::string_view raw, std::string& out) {
  if (written_into_ != nullptr) check_written_lines(out);
  if (pending_.empty()) {
    convert(raw, false, out);
  } else {
    std::string joined = std::move(pending_);
    pending_.clear();
    joined.append(raw);
    convert(joined, false, out);
  }
  written_into_ = &out;
  written_size_ = out.size();
}

void TextConverter::finish(std::string& out) {
  if (written_into_ != nullptr) check_written_lines(out);
  std::string rest = std::move(pending_);
  pending_.clear();
  convert(rest, true, out);
  if (!below_.empty()) end_live_rows(true, out);
  write_held_lines(out);
  take_open_line(out);
}

// below_ is empty here: finish() ends the live rows first, and explore, the
// one other caller, gives no size.
void TextConverter::take_open_line(std::string& out) {
  if (printed_) write_held_lines(out);
  out += line_.text();
  line_.clear();
  wrapped_.reset();
  written_.clear();  // the next line does not start where the last one ended
}

void TextConverter::write_held_lines(std::string& out) {
  if (terminal_.known()) {
    const std::size_t start = out.size();
    // Those held before the view lost the row are not lines above it.
    const std::size_t from =
        std::max(held_unplaced_, held_blank_lines_ - std::min(held_blank_lines_, terminal_.rows));
    for (std::size_t k = from; k < held_blank_lines_; ++k) written_line_at(start + k);
  }
  out.append(held_blank_lines_, '\n');
  lines_ended_ += held_blank_lines_;
  held_blank_lines_ = 0;
  held_unplaced_ = 0;
}

// A line nothing was printed on is held, not written: the cursor may come
// back over it. (Whether anything was printed, not what is left: so does
// safe_page_length tell, from the bytes alone.)
void TextConverter::end_line(std::string& out) {
  // In a scroll region a LF at its bottom scrolls it: the cursor and the
  // rows under it stay. Under the region, on the last row, a LF only
  // returns the cursor to the row's start (the view's LF is CR LF).
  const std::optional<std::size_t> row = region_bottom_ ? cursor_row(out) : std::nullopt;
  if (row == terminal_.rows - 1 && region_bottom_ != row) {
    line_.move_to(row_start());
    return;
  }
  // A LF on a row of a wrapped line above its last goes to the next of its
  // rows: the line ends as the view ends lines, on a row it cannot count
  // unless the rows below hold nothing (readline's wrap).
  const bool inside_wrapped = inside_wrapped_line();
  const bool scrolls = row && row == region_bottom_;
  std::size_t blank_under = 0;  // rows of the line under the next one
  const bool cut = inside_wrapped && !scrolls && cut_at_row_end(blank_under);
  const std::size_t rows_shown = open_line_rows();
  if (printed_) {
    write_held_lines(out);
    written_line_at(out.size(), rows_shown);
    out += line_.text();
    out += '\n';
    ++lines_ended_;
  } else {
    ++held_blank_lines_;
  }
  changed_row_ = true;
  if (scrolls && region_top_ > 0) keep_region_lines(out);
  wrapped_.reset();
  if (cut) {  // onto a blank row the line took, more under it
    line_.clear();
    printed_ = false;
    if (below_.empty()) {
      hidden_below_ += blank_under;
    } else {
      below_.insert(below_.begin(), blank_under, std::string());
    }
    return;
  }
  if (!scrolls && !below_.empty()) {  // onto the next row of the live area
    line_.assign(below_.front(), 0);
    printed_ = !below_.front().empty();
    below_.pop_front();
  } else {
    // Onto a blank row, not past the bottom: the line took its rows (but
    // those it had on the screen already).
    if (!scrolls && hidden_below_ > 0 && terminal_.known()) {
      const std::size_t rows = rows_of(line_.text(), terminal_.cols);
      hidden_below_ -= std::min(hidden_below_, rows + 1 - std::min(rows, rows_shown));
    }
    line_.clear();
    printed_ = false;
  }
  if (inside_wrapped) lose_row();
}

// A move to another row: the view has no rows, so the line written so far
// ends there (as if with LF), unless it holds no text; the cursor keeps the
// column the terminal gives it. Spaces at its end are dropped: a full-screen
// program pads the rows it draws with them (vim's `~` rows: a whole row of
// spaces each), which no one reads, and `screen` does not show them either.
// A move up by `up` rows from a line with no text goes back over the empty
// lines held above it (prompt_toolkit reserves rows for its menus so).
void TextConverter::change_row(std::size_t column, std::size_t up, std::string& out) {
  const std::string& text = line_.text();
  const std::size_t end = text.find_last_not_of(' ') + 1;  // npos + 1 == 0
  if (!below_.empty()) {
    end_live_rows(false, out);  // to a row it does not know
  } else if (end > 0) {
    write_held_lines(out);
    written_line_at(out.size(), open_line_rows());
    out.append(text, 0, end);
    out += '\n';
    ++lines_ended_;
  } else {
    if (line_.has_text() && up == 0) ++held_blank_lines_;  // a row of spaces: an empty line
    const std::size_t over = std::min(up, held_blank_lines_);
    held_blank_lines_ -= over;
    held_unplaced_ = std::min(held_unplaced_, held_blank_lines_);
    hidden_below_ += over;  // still rows on the screen
  }
  line_.clear(column);
  wrapped_.reset();
  printed_ = false;
  changed_row_ = true;
}

void TextConverter::apply_escape(std::string_view unit, std::string& out) {
  const LineEscape action = line_escape(unit);
  switch (action.op) {
    case LineOp::kNone:
      break;
    case LineOp::kLeft:
      line_.move_left(action.n);
      break;
    case LineOp::kRight:
      line_.move_right(action.n);
      break;
    case LineOp::kColumn:
      line_.move_to(column_on_row(action.n));
      break;
    case LineOp::kBackTab:
      line_.back_tab(action.n);
      break;
    case LineOp::kTab:
      for (std::size_t k = 0; k < std::min(action.n, TextLine::kMaxColumn / 8); ++k) line_.tab();
      break;
    case LineOp::kInsert:
      line_.insert_blanks(action.n);
      break;
    case LineOp::kDelete:
      line_.delete_cells(action.n);
      break;
    case LineOp::kEraseCells:
      line_.erase_cells(action.n);
      break;
    case LineOp::kEraseToEnd:
      // Just past the last column (the terminal's pending wrap) the cursor
      // is on that column, which the erase blanks: readline's " ESC[K"
      // where a wide character does not fit leaves no space. (At the start
      // of a wrapped line's row a move put it on, it is not.)
      if (terminal_.known()) {
        const std::size_t column = line_.cursor_column();
        if (column > row_start() && column % terminal_.cols == 0) line_.move_left(1);
      }
      if (action.below) {
        line_.erase_to_end();
        blank_rows_below();
      } else {
        erase_to_row_end();
      }
      break;
    case LineOp::kEraseToStart:
      line_.erase_to_start();
      break;
    case LineOp::kEraseLine:
      if (action.below && (!below_.empty() || cursor_row(out))) {
        erase_screen(out);
      } else {
        line_.erase_all();
      }
      break;
    case LineOp::kRepeat:
      line_.repeat(action.n);
      break;
    case LineOp::kRowKeepColumn:
      move_row(action, screen_column(), out);
      break;
    case LineOp::kRowToColumn:
      move_row(action, action.n, out);
      break;
    case LineOp::kNewLine:
      end_line(out);
      break;
    case LineOp::kScreenSwitch:
      switch_screen(action, out);
      break;
    case LineOp::kShiftRows:
      shift_rows(out);
      break;
    case LineOp::kReset:
      reset_screen(out);
      break;
    case LineOp::kScrollRegion: {
      // It also puts the cursor home, where a program moves it on or
      // restores it from: followed where the row is known. Home above the
      // rows the view holds (but blank ones), it no longer counts the rows
      // (nor from the lines in the region, which scroll it): a restore to a
      // row saved by number finds it again. Nor across a region it did not
      // follow.
      const bool known = cursor_row(out).has_value();
      set_scroll_region(action.n, action.row, out);
      if (!terminal_.known()) break;  // the line goes on, as without rows
      if (!known || !move_to_row(0, 0, out)) {
        // Over the blank rows of a screen just cleared it still knows it.
        const bool over_blank_rows = known && unheld_blank_ && written_.empty() && below_.empty();
        change_row(0, 0, out);
        forget_rows();
        if (over_blank_rows) {
          know_row(0, true);
        } else if (region_bottom_) {
          in_unknown_region_ = true;
        }
      }
      break;
    }
    case LineOp::kSave:
      saved_column_ = screen_column();
      saved_row_ = cursor_row(out);
      changed_row_ = false;
      held_at_save_ = held_blank_lines_;
      lines_at_save_ = lines_ended_;
      break;
    case LineOp::kRestore:
      // Back to the saved row: another row if one was left since the save,
      // above the empty lines held since (all of them when a line was
      // written since: the save was on it or above).
      if (changed_row_ && saved_row_ && move_to_row(*saved_row_, saved_column_, out)) {
        // the row the save was on, where the view knows the rows between
      } else if (changed_row_) {
        const std::size_t kept = lines_ended_ == lines_at_save_ ? held_at_save_ : 0;
        change_row(saved_column_, held_blank_lines_ - std::min(kept, held_blank_lines_), out);
        if (saved_row_) {  // saved where the view knew the row: that row, as a CUP's
          forget_rows();
          know_row(*saved_row_, false);
          if (region_bottom_) in_unknown_region_ = false;  // a region it follows again
          // The empty lines held at the save are the rows right above it.
          if (held_blank_lines_ <= unheld_above_) {
            unheld_above_ -= held_blank_lines_;
            held_unplaced_ = 0;
          }
        } else {
          lose_row();  // saved on a row it did not know
        }
      } else {
        line_.move_to(column_on_row(saved_column_));
      }
      break;
  }
}

// Printable ASCII in a set other than ASCII: each byte as the set draws it.
void TextConverter::put_in_charset(std::string_view run) {
  for (std::size_t k = 0; k < run.size(); ++k) {
    const std::string_view glyph = charsets_.glyph(run[k]);
    if (glyph.empty()) {
      line_.put_ascii(run.substr(k, 1));
    } else {
      line_.put(glyph);
    }
  }
}

void TextConverter::convert(std::string_view raw, bool final, std::string& out) {
  const unsigned char* p = bytes_of(raw);
  const std::size_t n = raw.size();
  std::size_t i = 0;
  while (i < n) {
    // Fast path: a run of printable ASCII.
    if (is_printable_ascii(p[i])) {
      std::size_t j = i + 1;
      while (j < n && is_printable_ascii(p[j])) ++j;
      printed_ = true;
      if (charsets_.plain()) {
        line_.put_ascii(raw.substr(i, j - i));
      } else {
        put_in_charset(raw.substr(i, j - i));
      }
      i = j;
      continue;
    }
    const Unit unit = scan_unit(p + i, n - i);
    if (!unit.complete && !final) {
      pending_.assign(raw.substr(i));
      return;
    }
    const std::string_view bytes = raw.substr(i, unit.length);
    printed_ = printed_ || shows_text(unit.kind);
    switch (unit.kind) {
      case UnitKind::kPrintable:
        // A C1 control written as UTF-8 (U+0080..U+009F: Windows-1252
        // quotes read as Latin-1) shows nothing, as in tmux and `screen`.
        if (bytes.size() == 2 && p[i] == 0xC2 && p[i + 1] <= 0x9F) break;
        line_.put(bytes);
        break;
      case UnitKind::kTab:
        line_.tab();
        break;
      case UnitKind::kInvalid:
        line_.put(kReplacementCharacter);
        break;
      case UnitKind::kLf:
      case UnitKind::kCrLf:
        end_line(out);
        break;
      case UnitKind::kCr:
        carriage_return();
        break;
      case UnitKind::kBackspace:
        line_.move_left(1);
        break;
      case UnitKind::kEscape:
        charsets_.apply(bytes);
        apply_escape(bytes, out);
        break;
      case UnitKind::kControl:
        charsets_.apply(bytes);  // SO, SI
        break;
    }
    i += unit.length;
  }
}

std::size_t advance_charsets(std::string_view raw, Charsets& charsets, bool more_may_follow) {
  const unsigned char* p = bytes_of(raw);
  const std::size_t n = raw.size();
  std::size_t i = 0;
  while (i < n) {
    // Only ESC (every escape sequence starts a unit with it), SO and SI
    // select sets; no other unit holds one of them but a string sequence,
    // which starts with ESC and is skipped whole.
    const unsigned char c = p[i];
    if (c > kEsc || (c != kEsc && c != 0x0e && c != 0x0f)) {
      ++i;
      continue;
    }
    const Unit unit = scan_unit(p + i, n - i);
    if (!unit.complete && more_may_follow) break;
    charsets.apply(raw.substr(i, unit.length));
    i += unit.length;
  }
  return i;
}

std::string to_text(std::string_view raw, Charsets charsets, TextTerminal terminal) {
  std::string out;
  out.reserve(raw.size());
  TextConverter converter(charsets, terminal);
  converter.feed(raw, out);
  converter.finish(out);
  return out;
}

namespace {

// Feeds `raw` to a converter made for `sizes` (the first one's terminal).
void feed_sized(TextConverter& converter, std::string_view raw, const TerminalSizes& sizes,
                std::string& out) {
  if (sizes.empty()) {
    converter.feed(raw, out);
    return;
  }
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::size_t from = k == 0 ? 0 : std::min(sizes[k].offset, raw.size());
    const std::size_t to =
        k + 1 < sizes.size() ? std::min(sizes[k + 1].offset, raw.size()) : raw.size();
    if (k > 0) converter.set_terminal(sizes[k].terminal);
    converter.feed(raw.substr(from, to - std::min(from, to)), out);
  }
}

}  // namespace

std::string to_text(std::string_view raw, Charsets charsets, const TerminalSizes& sizes,
                    const TextStart& start) {
  std::string out;
  out.reserve(raw.size());
  TextConverter converter(charsets, sizes.empty() ? TextTerminal{} : sizes[0].terminal);
  converter.start_at(start);
  feed_sized(converter, raw, sizes, out);
  converter.finish(out);
  return out;
}

TextStart text_start_after(std::string_view raw, Charsets charsets, const TerminalSizes& sizes,
                           const TextStart& start) {
  std::string out;
  TextConverter converter(charsets, sizes.empty() ? TextTerminal{} : sizes[0].terminal);
  converter.start_at(start);
  feed_sized(converter, raw, sizes, out);
  return converter.position(out);
}

TerminalSizes sizes_within(const TerminalSizes& sizes, std::size_t from, std::size_t to) {
  TerminalSizes within;
  for (const TerminalFrom& size : sizes) {
    if (size.offset >= to && !within.empty()) break;
    const std::size_t at = size.offset > from ? size.offset - from : 0;
    if (!within.empty() && within.back().offset == at) within.pop_back();
    within.push_back({at, size.terminal});
  }
  return within;
}

std::string without_escapes(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  const unsigned char* p = bytes_of(raw);
  for (std::size_t i = 0; i < raw.size();) {
    const Unit unit = scan_unit(p + i, raw.size() - i);
    switch (unit.kind) {
      case UnitKind::kPrintable:
      case UnitKind::kTab:
        out.append(raw, i, unit.length);
        break;
      case UnitKind::kInvalid:
        out += kReplacementCharacter;
        break;
      case UnitKind::kLf:  // VT and FF (ctrl-k, ctrl-l) are keys, not line ends
      case UnitKind::kCrLf:
        if (raw[i + unit.length - 1] == '\n') out += '\n';
        break;
      default:
        break;
    }
    i += unit.length;
  }
  return out;
}

}  // namespace agentty::session
