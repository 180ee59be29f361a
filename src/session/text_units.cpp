#include "session/text_units.hpp"

#include "base/utf8.hpp"
#include "session/line_escape.hpp"
#include "session/text_view.hpp"

namespace agentty::session::text_units {
namespace {

constexpr std::size_t kMaxCsiBytes = 4096;

bool in_range(unsigned char c, unsigned lo, unsigned hi) {
  return c >= lo && c <= hi;
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

}  // namespace

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
      case LineOp::kReset:
        return false;
      default:
        break;
    }
  }
  return printed || shows_text(kind);
}

}  // namespace agentty::session::text_units
