// Where the text view's stream may be cut into pages (and mapped back from
// text lines to bytes): declared in text_view.hpp.
#include <algorithm>
#include <vector>

#include "session/line_escape.hpp"
#include "session/text_units.hpp"
#include "session/text_view.hpp"

namespace agentty::session {

using text_units::bytes_of;
using text_units::printed_on_row;
using text_units::reaches_back;
using text_units::scan_unit;
using text_units::Unit;
using text_units::UnitKind;

namespace {

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
  // After a LF with text that a move up follows (nothing between but
  // sequences that leave the cursor where it is): where a frame of a
  // display redrawn in place starts.
  std::size_t before_frame = 0;
  bool at_row_start = false;
  bool capped = false;
  while (pos < n) {
    const Unit unit = scan_unit(p + pos, n - pos);
    if (!unit.complete && more_may_follow) break;
    const std::size_t end = pos + unit.length;
    if (end > max_bytes && pos > 0) {
      capped = true;
      break;
    }
    const std::string_view bytes = raw.substr(pos, unit.length);
    const LineEscape escape = unit.kind == UnitKind::kEscape ? line_escape(bytes) : LineEscape{};
    if (at_row_start && escape.up > 0) before_frame = after_lf;
    if (unit.kind == UnitKind::kLf || unit.kind == UnitKind::kCrLf) {
      at_row_start = text;
    } else if (unit.kind != UnitKind::kCr &&
               (unit.kind != UnitKind::kEscape || escape.op != LineOp::kNone)) {
      at_row_start = false;
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
    } else if (reaches_back(unit.kind, bytes)) {
      overwrite_line = true;
    }
    text = printed_on_row(text, unit.kind, bytes);
    pos = end;
    if (pos >= max_bytes) {
      capped = pos < n;
      break;
    }
  }
  if (!capped) return pos;
  // A page that ends with a whole frame: the next page's first frame reads
  // whole too (its move up reaches before the page, so it reads appended),
  // where a cut inside a frame leaves the frame's rest above the next one.
  if (before_frame > max_bytes / 2 && before_frame < pos) return before_frame;
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

}  // namespace agentty::session
