// The units the text view reads a terminal byte stream in: a printable
// character, an escape sequence, a line feed, a CR... (text_view.cpp turns
// them into text; text_page.cpp cuts pages between them). Internal to the
// session layer's text view.
#pragma once

#include <cstddef>
#include <string_view>

namespace agentty::session::text_units {

enum class UnitKind { kPrintable, kInvalid, kEscape, kLf, kCrLf, kCr, kBackspace, kTab, kControl };

struct Unit {
  std::size_t length = 0;
  UnitKind kind = UnitKind::kControl;
  bool complete = true;
};

inline constexpr unsigned char kEsc = 0x1b;

inline bool is_printable_ascii(unsigned char c) {
  return c >= 0x20 && c < 0x7f;
}

// The unit at p[0] (n > 0). complete=false when the bytes end inside it.
Unit scan_unit(const unsigned char* p, std::size_t n);

inline const unsigned char* bytes_of(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// A unit whose effect depends on the line written before it (it moves back
// over it, erases or repeats part of it, or ends it only when it holds
// text): a page that starts with it would not read as part of the whole.
bool reaches_back(UnitKind kind, std::string_view unit);

// A unit that prints something on its line, so a LF after it ends a line
// the text view writes, not an empty one it holds back.
bool shows_text(UnitKind kind);

// Whether anything was printed on the row `unit` leaves the cursor on, given
// whether anything was before it: TextConverter's printed_, from the bytes.
bool printed_on_row(bool printed, UnitKind kind, std::string_view unit);

}  // namespace agentty::session::text_units
