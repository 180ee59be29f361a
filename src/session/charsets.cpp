#include "session/charsets.hpp"

#include <array>

namespace agentty::session {
namespace {

// DEC special graphics for 0x60..0x7e, as libvterm 0.1.4 draws them (its
// DECdrawing table; `y` and `z` are U+2A7D/U+2A7E there, where xterm has
// U+2264/U+2265): what `screen` shows, so read and screen agree.
constexpr std::array<std::string_view, 31> kLineDrawingGlyphs = {
    "\u25c6", "\u2592", "\u2409", "\u240c", "\u240d", "\u240a", "\u00b0", "\u00b1",
    "\u2424", "\u240b", "\u2518", "\u2510", "\u250c", "\u2514", "\u253c", "\u23ba",
    "\u23bb", "\u2500", "\u23bc", "\u23bd", "\u251c", "\u2524", "\u2534", "\u252c",
    "\u2502", "\u2a7d", "\u2a7e", "\u03c0", "\u2260", "\u00a3", "\u00b7",
};

constexpr unsigned char kEsc = 0x1b;
constexpr unsigned char kShiftOut = 0x0e;
constexpr unsigned char kShiftIn = 0x0f;

}  // namespace

std::string_view Charsets::glyph(char c) const {
  switch (slots[in_use]) {
    case kAscii:
      return {};
    case kDecGraphics:
      if (c >= 0x60 && c <= 0x7e) return kLineDrawingGlyphs[static_cast<std::size_t>(c - 0x60)];
      return {};
    case kBritish:
      return c == '#' ? std::string_view("\u00a3") : std::string_view();
  }
  return {};
}

bool Charsets::apply(std::string_view unit) {
  if (unit.size() == 1) {
    const auto c = static_cast<unsigned char>(unit[0]);
    if (c == kShiftOut) in_use = 1;
    if (c == kShiftIn) in_use = 0;
    return c == kShiftOut || c == kShiftIn;
  }
  if (unit.size() < 2 || static_cast<unsigned char>(unit[0]) != kEsc) return false;
  const char kind = unit[1];
  if (unit.size() == 3 && kind >= '(' && kind <= '+') {  // designate G0..G3
    Set& slot = slots[kind - '('];
    if (unit[2] == 'B') slot = kAscii;
    if (unit[2] == '0') slot = kDecGraphics;
    if (unit[2] == 'A') slot = kBritish;
    return true;
  }
  if (unit.size() == 2 && (kind == 'n' || kind == 'o')) {  // LS2, LS3
    in_use = kind == 'n' ? 2 : 3;
    return true;
  }
  if (unit.size() == 2 && kind == 'c') {  // RIS
    *this = Charsets();
    return true;
  }
  return false;
}

}  // namespace agentty::session
