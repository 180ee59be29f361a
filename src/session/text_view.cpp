#include "session/text_view.hpp"

#include "base/utf8.hpp"
#include "session/line_escape.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace agentty::session {
namespace {

enum class UnitKind { kPrintable, kInvalid, kEscape, kLf, kCrLf, kCr, kBackspace, kTab, kControl };

struct Unit {
  std::size_t length = 0;
  UnitKind kind = UnitKind::kControl;
  bool complete = true;
};

constexpr unsigned char kEsc = 0x1b;
constexpr std::size_t kMaxCsiBytes = 4096;

bool in_range(unsigned char c, unsigned lo, unsigned hi) {
  return c >= lo && c <= hi;
}
bool is_printable_ascii(unsigned char c) {
  return c >= 0x20 && c < 0x7f;
}

// CSI: parameters and intermediates, then a final byte. Any other byte ends
// the sequence before it (the terminal would execute or print that byte).
Unit scan_csi(const unsigned char* p, std::size_t n) {
  for (std::size_t i = 2; i < n; ++i) {
    if (in_range(p[i], 0x40, 0x7e)) return {i + 1, UnitKind::kEscape};
    if (!in_range(p[i], 0x20, 0x3f) || i + 1 >= kMaxCsiBytes) return {i, UnitKind::kEscape};
  }
  return {n, UnitKind::kEscape, false};
}

// OSC, DCS, SOS, PM, APC: a string up to ST (or BEL for OSC).
Unit scan_string(const unsigned char* p, std::size_t n, bool bel_ends) {
  for (std::size_t i = 2; i < n; ++i) {
    const unsigned char c = p[i];
    if (c == 0x07 && bel_ends) return {i + 1, UnitKind::kEscape};
    if (c == 0x18 || c == 0x1a) return {i + 1, UnitKind::kEscape};
    if (c == kEsc) {
      if (i + 1 >= n) return {n, UnitKind::kEscape, false};
      return {p[i + 1] == '\\' ? i + 2 : i, UnitKind::kEscape};
    }
    if (i + 1 >= kMaxSequenceBytes) return {i + 1, UnitKind::kEscape};
  }
  return {n, UnitKind::kEscape, false};
}

Unit scan_escape(const unsigned char* p, std::size_t n) {
  if (n < 2) return {1, UnitKind::kEscape, false};
  const unsigned char b = p[1];
  switch (b) {
    case '[':
      return scan_csi(p, n);
    case ']':
      return scan_string(p, n, true);
    case 'P':
    case 'X':
    case '^':
    case '_':
      return scan_string(p, n, false);
    default:
      break;
  }
  if (in_range(b, 0x20, 0x2f)) {  // ESC intermediates final: ESC ( B, ESC # 8 ...
    std::size_t i = 2;
    while (i < n && in_range(p[i], 0x20, 0x2f) && i < kMaxCsiBytes) ++i;
    if (i >= n) return {n, UnitKind::kEscape, false};
    return {in_range(p[i], 0x30, 0x7e) ? i + 1 : i, UnitKind::kEscape};
  }
  if (in_range(b, 0x30, 0x7e)) return {2, UnitKind::kEscape};  // ESC =, ESC 7, ESC M ...
  return {1, UnitKind::kEscape};                               // lone ESC
}

// UTF-8; an invalid sequence is its maximal valid prefix (at least one
// byte), shown as one U+FFFD.
Unit utf8_unit(const unsigned char* p, std::size_t n) {
  const Utf8Scan scan = scan_utf8(p, n);
  return {scan.length, scan.valid ? UnitKind::kPrintable : UnitKind::kInvalid, !scan.truncated};
}

Unit scan_unit(const unsigned char* p, std::size_t n) {
  const unsigned char c = p[0];
  if (is_printable_ascii(c)) return {1, UnitKind::kPrintable};
  if (c >= 0x80) return utf8_unit(p, n);
  switch (c) {
    case '\n':
    case '\v':  // a terminal moves down for VT and FF as for LF
    case '\f':
      return {1, UnitKind::kLf};
    case '\r':
      if (n < 2) return {1, UnitKind::kCr, false};
      return p[1] == '\n' ? Unit{2, UnitKind::kCrLf} : Unit{1, UnitKind::kCr};
    case 0x08:
      return {1, UnitKind::kBackspace};
    case '\t':
      return {1, UnitKind::kTab};
    case kEsc:
      return scan_escape(p, n);
    default:
      return {1, UnitKind::kControl};
  }
}

const unsigned char* bytes_of(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// A unit whose effect depends on the line written before it (it moves back
// over it, erases or repeats part of it, or ends it only when it holds
// text): a page that starts with it would not read as part of the whole.
bool reaches_back(UnitKind kind, std::string_view unit) {
  if (kind == UnitKind::kCr || kind == UnitKind::kBackspace) return true;
  if (kind != UnitKind::kEscape) return false;
  switch (line_escape(unit).op) {
    case LineOp::kLeft:
    case LineOp::kRight:  // blanks that become text only if text follows
    case LineOp::kColumn:
    case LineOp::kBackTab:
    case LineOp::kEraseToStart:
    case LineOp::kEraseLine:
    case LineOp::kRepeat:
    case LineOp::kRowKeepColumn:
    case LineOp::kRowToColumn:
    case LineOp::kRestore:
      return true;
    default:
      return false;
  }
}

// A unit that prints something on its line, so a LF after it ends a line
// the text view writes, not an empty one it holds back.
bool shows_text(UnitKind kind) {
  return kind == UnitKind::kPrintable || kind == UnitKind::kInvalid || kind == UnitKind::kTab;
}

// Whether anything was printed on the row `unit` leaves the cursor on, given
// whether anything was before it: TextConverter's printed_, from the bytes.
bool printed_on_row(bool printed, UnitKind kind, std::string_view unit) {
  if (kind == UnitKind::kLf || kind == UnitKind::kCrLf) return false;
  if (kind == UnitKind::kEscape) {
    switch (line_escape(unit).op) {
      case LineOp::kRowKeepColumn:
      case LineOp::kRowToColumn:
      case LineOp::kRestore:
      case LineOp::kNewLine:
        return false;
      default:
        break;
    }
  }
  return printed || shows_text(kind);
}

// Whether the line cut at `pos` goes on (within `reach` bytes of raw) to a
// unit that reaches back (see reaches_back) and so could not reach across
// the cut. Empty lines do not end the search: a move up may take them back
// (TextConverter holds them). Only chooses between two safe cuts.
bool overwrites_ahead(std::string_view raw, std::size_t pos, std::size_t reach) {
  const unsigned char* p = bytes_of(raw);
  const std::size_t end = std::min(raw.size(), pos + reach);
  bool text = false;  // on the line ahead
  for (std::size_t i = pos; i < end;) {
    const Unit unit = scan_unit(p + i, raw.size() - i);
    if (unit.kind == UnitKind::kLf || unit.kind == UnitKind::kCrLf) {
      if (text) return false;
    } else if (reaches_back(unit.kind, raw.substr(i, unit.length))) {
      return true;
    }
    text = printed_on_row(text, unit.kind, raw.substr(i, unit.length));
    i += unit.length;
  }
  return false;
}

}  // namespace

std::size_t unit_length(std::string_view raw) {
  return raw.empty() ? 0 : scan_unit(bytes_of(raw), raw.size()).length;
}

std::size_t complete_unit_length(std::string_view raw) {
  if (raw.empty()) return 0;
  const Unit unit = scan_unit(bytes_of(raw), raw.size());
  return unit.complete ? unit.length : 0;
}

std::size_t safe_page_length(std::string_view raw, std::size_t max_bytes, bool more_may_follow) {
  const unsigned char* p = bytes_of(raw);
  const std::size_t n = raw.size();
  std::size_t pos = 0;
  std::size_t after_lf = 0;        // end of the last LF unit taken that ended text
  bool overwrite_line = false;     // a unit that reaches back since that LF
  std::size_t after_empty_lf = 0;  // end of the last LF unit that ended an empty line
  bool text = false;               // a unit that shows text since the last LF
  bool capped = false;
  while (pos < n) {
    const Unit unit = scan_unit(p + pos, n - pos);
    if (!unit.complete && more_may_follow) break;
    const std::size_t end = pos + unit.length;
    if (end > max_bytes && pos > 0) {
      capped = true;
      break;
    }
    if (unit.kind == UnitKind::kLf || unit.kind == UnitKind::kCrLf) {
      // After an empty line the converter holds it: a move up may take it
      // back, so the line goes on across it.
      if (text) {
        after_lf = end;
        overwrite_line = false;
      } else {
        after_empty_lf = end;
      }
      text = false;
    } else if (reaches_back(unit.kind, raw.substr(pos, unit.length))) {
      overwrite_line = true;
    }
    text = printed_on_row(text, unit.kind, raw.substr(pos, unit.length));
    pos = end;
    if (pos >= max_bytes) {
      capped = pos < n;
      break;
    }
  }
  if (!capped) return pos;
  if (after_lf > 0 && after_lf < pos &&
      (overwrite_line || after_lf > max_bytes / 2 || overwrites_ahead(raw, pos, max_bytes))) {
    return after_lf;
  }
  // Else the end of an empty line in the last half, when nothing further on
  // takes it back.
  if (after_empty_lf > max_bytes / 2 && after_empty_lf < pos &&
      !overwrites_ahead(raw, after_empty_lf, max_bytes)) {
    return after_empty_lf;
  }
  return pos;
}

std::size_t raw_length_through_line(std::string_view raw, std::size_t lines) {
  if (lines == 0) return 0;
  const unsigned char* p = bytes_of(raw);
  TextConverter converter;
  std::string text;
  std::vector<std::size_t> held_ends;  // where each held empty line ended
  std::size_t pos = 0;
  std::size_t before = 0;  // lines written before the last unit
  while (pos < raw.size()) {
    before = converter.lines_ended();
    const std::size_t length = scan_unit(p + pos, raw.size() - pos).length;
    converter.feed(raw.substr(pos, length), text);
    pos += length;
    const std::size_t written = converter.lines_ended();
    if (written >= lines) break;
    if (written > before) held_ends.clear();
    held_ends.resize(std::min(held_ends.size(), converter.held_blank_lines()));
    held_ends.resize(converter.held_blank_lines(), pos);
    before = written;
  }
  // A held empty line (written with the next text, or at the end) ended at
  // its own line end.
  const std::size_t k = lines - before;
  return k <= held_ends.size() ? held_ends[k - 1] : pos;
}

void TextConverter::feed(std::string_view raw, std::string& out) {
  if (pending_.empty()) {
    convert(raw, false, out);
    return;
  }
  std::string joined = std::move(pending_);
  pending_.clear();
  joined.append(raw);
  convert(joined, false, out);
}

void TextConverter::finish(std::string& out) {
  std::string rest = std::move(pending_);
  pending_.clear();
  convert(rest, true, out);
  write_held_lines(out);
  take_open_line(out);
}

void TextConverter::take_open_line(std::string& out) {
  if (printed_) write_held_lines(out);
  out += line_.text();
  line_.clear();
}

void TextConverter::write_held_lines(std::string& out) {
  out.append(held_blank_lines_, '\n');
  lines_ended_ += held_blank_lines_;
  held_blank_lines_ = 0;
}

// A line nothing was printed on is held, not written: the cursor may come
// back over it. (Whether anything was printed, not what is left: so does
// safe_page_length tell, from the bytes alone.)
void TextConverter::end_line(std::string& out) {
  if (printed_) {
    write_held_lines(out);
    out += line_.text();
    out += '\n';
    ++lines_ended_;
  } else {
    ++held_blank_lines_;
  }
  line_.clear();
  printed_ = false;
  changed_row_ = true;
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
  if (end > 0) {
    write_held_lines(out);
    out.append(text, 0, end);
    out += '\n';
    ++lines_ended_;
  } else {
    if (line_.has_text() && up == 0) ++held_blank_lines_;  // a row of spaces: an empty line
    held_blank_lines_ -= std::min(up, held_blank_lines_);
  }
  line_.clear(column);
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
      line_.move_to(action.n);
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
      line_.erase_to_end();
      break;
    case LineOp::kEraseToStart:
      line_.erase_to_start();
      break;
    case LineOp::kEraseLine:
      line_.erase_all();
      break;
    case LineOp::kRepeat:
      line_.repeat(action.n);
      break;
    case LineOp::kRowKeepColumn:
      change_row(line_.column(), action.up, out);
      break;
    case LineOp::kRowToColumn:
      change_row(action.n, action.up, out);
      break;
    case LineOp::kNewLine:
      end_line(out);
      break;
    case LineOp::kSave:
      saved_column_ = line_.column();
      changed_row_ = false;
      held_at_save_ = held_blank_lines_;
      lines_at_save_ = lines_ended_;
      break;
    case LineOp::kRestore:
      // Back to the saved row: another row if one was left since the save,
      // above the empty lines held since (all of them when a line was
      // written since: the save was on it or above).
      if (changed_row_) {
        const std::size_t kept = lines_ended_ == lines_at_save_ ? held_at_save_ : 0;
        change_row(saved_column_, held_blank_lines_ - std::min(kept, held_blank_lines_), out);
      } else {
        line_.move_to(saved_column_);
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
        line_.move_to(0);
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

std::string to_text(std::string_view raw, Charsets charsets) {
  std::string out;
  out.reserve(raw.size());
  TextConverter converter(charsets);
  converter.feed(raw, out);
  converter.finish(out);
  return out;
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
