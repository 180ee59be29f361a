#include "session/text_view.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

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

// UTF-8 per RFC 3629; an invalid sequence is its maximal valid prefix
// (at least one byte), shown as one U+FFFD.
Unit scan_utf8(const unsigned char* p, std::size_t n) {
  const unsigned char c = p[0];
  std::size_t need = 0;
  unsigned lo = 0x80, hi = 0xbf;
  if (in_range(c, 0xc2, 0xdf)) {
    need = 2;
  } else if (in_range(c, 0xe0, 0xef)) {
    need = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (in_range(c, 0xf0, 0xf4)) {
    need = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return {1, UnitKind::kInvalid};
  }
  for (std::size_t i = 1; i < need; ++i) {
    if (i >= n) return {i, UnitKind::kInvalid, false};
    const bool ok = i == 1 ? in_range(p[i], lo, hi) : in_range(p[i], 0x80, 0xbf);
    if (!ok) return {i, UnitKind::kInvalid};
  }
  return {need, UnitKind::kPrintable};
}

Unit scan_unit(const unsigned char* p, std::size_t n) {
  const unsigned char c = p[0];
  if (is_printable_ascii(c)) return {1, UnitKind::kPrintable};
  if (c >= 0x80) return scan_utf8(p, n);
  switch (c) {
    case '\n':
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

std::size_t utf8_length_at(const std::string& s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  std::size_t length = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  return length <= s.size() - i ? length : s.size() - i;
}

// Which part of the line an erase-in-line sequence (ESC [ K, ESC [ 0 J)
// clears; nullopt for any other escape sequence.
enum class Erase { kToEnd, kToStart, kWholeLine };
std::optional<Erase> erase_of(std::string_view unit) {
  if (unit.size() < 3 || unit[1] != '[') return std::nullopt;
  const char final_byte = unit.back();
  const std::string_view param = unit.substr(2, unit.size() - 3);
  if (param.empty() || param == "0") {
    if (final_byte == 'K' || final_byte == 'J') return Erase::kToEnd;
  } else if (final_byte == 'K' && param == "1") {
    return Erase::kToStart;
  } else if (final_byte == 'K' && param == "2") {
    return Erase::kWholeLine;
  }
  return std::nullopt;
}

// Characters in line[0, end).
std::size_t chars_before(const std::string& line, std::size_t end) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < end && i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xc0) != 0x80) ++count;
  }
  return count;
}

// Writes one character at the cursor of the open line: appends at its end,
// overwrites one character inside it (after a CR or backspace), or fills the
// erased cells between the end and the cursor with blanks first.
void put_char(std::string& line, std::size_t& col, const char* bytes, std::size_t n) {
  if (col > line.size()) line.append(col - line.size(), ' ');
  if (col == line.size()) {
    line.append(bytes, n);
  } else {
    line.replace(col, utf8_length_at(line, col), bytes, n);
  }
  col += n;
}

// Erased cells are blank: text after them stays where it was, and erased
// cells at the end of the line are not text at all (the cursor may then
// stand past the line's end, counted in one-byte blanks that put_char fills).
void erase_in_line(std::string& line, std::size_t& col, Erase erase) {
  if (erase == Erase::kToEnd) {
    if (col < line.size()) line.resize(col);
    return;
  }
  const std::size_t blanks = chars_before(line, col) + (col > line.size() ? col - line.size() : 0);
  std::string rest;  // what stays right of the cursor
  if (erase == Erase::kToStart && col < line.size())
    rest = line.substr(col + utf8_length_at(line, col));
  line = rest.empty() ? std::string() : std::string(blanks + 1, ' ') + rest;
  col = blanks;
}

// An erase that blanks text before the cursor: like a bare CR, it rewrites
// what came earlier on the line.
bool erases_back(std::string_view unit) {
  const auto erase = erase_of(unit);
  return erase && *erase != Erase::kToEnd;
}

// Whether the line cut at `pos` goes on (within `reach` bytes of raw) to a
// bare CR, a backspace or an erase of the line's start, whose overwrite could
// not reach back across the cut. A byte test, not a parse: it only chooses
// between two safe cuts.
bool overwrites_ahead(std::string_view raw, std::size_t pos, std::size_t reach) {
  const std::size_t end = std::min(raw.size(), pos + reach);
  for (std::size_t i = pos; i < end; ++i) {
    const char c = raw[i];
    if (c == '\n') return false;
    if (c == '\b' || (c == '\r' && (i + 1 >= raw.size() || raw[i + 1] != '\n'))) return true;
    if (c == '\x1b' && erases_back(raw.substr(i, 4))) return true;
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
  std::size_t after_lf = 0;     // end of the last LF unit taken
  bool overwrite_line = false;  // a bare CR or BS since that LF
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
      after_lf = end;
      overwrite_line = false;
    } else if (unit.kind == UnitKind::kCr || unit.kind == UnitKind::kBackspace ||
               (unit.kind == UnitKind::kEscape && erases_back(raw.substr(pos, unit.length)))) {
      overwrite_line = true;
    }
    pos = end;
    if (pos >= max_bytes) {
      capped = pos < n;
      break;
    }
  }
  if (capped && after_lf > 0 && after_lf < pos &&
      (overwrite_line || after_lf > max_bytes / 2 || overwrites_ahead(raw, pos, max_bytes))) {
    return after_lf;
  }
  return pos;
}

std::size_t raw_length_through_line(std::string_view raw, std::size_t lines) {
  const unsigned char* p = bytes_of(raw);
  std::size_t pos = 0;
  for (std::size_t seen = 0; seen < lines && pos < raw.size();) {
    const Unit unit = scan_unit(p + pos, raw.size() - pos);
    if (unit.kind == UnitKind::kLf || unit.kind == UnitKind::kCrLf) ++seen;
    pos += unit.length;
  }
  return pos;
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
  out += line_;
  line_.clear();
  col_ = 0;
}

void TextConverter::take_open_line(std::string& out) {
  out += line_;
  line_.clear();
  col_ = 0;
}

void TextConverter::convert(std::string_view raw, bool final, std::string& out) {
  static constexpr char kReplacement[] = "\xEF\xBF\xBD";
  const unsigned char* p = bytes_of(raw);
  const std::size_t n = raw.size();
  std::size_t i = 0;
  while (i < n) {
    // Fast path: a run of printable ASCII.
    if (is_printable_ascii(p[i])) {
      std::size_t j = i + 1;
      while (j < n && is_printable_ascii(p[j])) ++j;
      if (col_ == line_.size()) {
        line_.append(raw.data() + i, j - i);
        col_ = line_.size();
      } else {
        for (std::size_t k = i; k < j; ++k) put_char(line_, col_, raw.data() + k, 1);
      }
      i = j;
      continue;
    }
    const Unit unit = scan_unit(p + i, n - i);
    if (!unit.complete && !final) {
      pending_.assign(raw.substr(i));
      return;
    }
    switch (unit.kind) {
      case UnitKind::kPrintable:
      case UnitKind::kTab:
        put_char(line_, col_, raw.data() + i, unit.length);
        break;
      case UnitKind::kInvalid:
        put_char(line_, col_, kReplacement, 3);
        break;
      case UnitKind::kLf:
      case UnitKind::kCrLf:
        out += line_;
        out += '\n';
        line_.clear();
        col_ = 0;
        break;
      case UnitKind::kCr:
        col_ = 0;
        break;
      case UnitKind::kBackspace:
        if (col_ > 0) --col_;
        while (col_ > 0 && col_ < line_.size() &&
               (static_cast<unsigned char>(line_[col_]) & 0xc0) == 0x80)
          --col_;
        break;
      case UnitKind::kEscape:
        if (auto erase = erase_of(raw.substr(i, unit.length))) erase_in_line(line_, col_, *erase);
        break;
      case UnitKind::kControl:
        break;
    }
    i += unit.length;
  }
}

std::string to_text(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  TextConverter converter;
  converter.feed(raw, out);
  converter.finish(out);
  return out;
}

}  // namespace agentty::session
