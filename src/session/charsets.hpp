// Charsets: which character set a terminal prints ASCII bytes in (ISO 2022
// as the VT100, xterm and libvterm do it), for the text view.
//
// Four slots G0..G3 each hold ASCII, DEC special graphics (`ESC ( 0`: the
// line-drawing set curses draws boxes with, `lqqk` -> `┌──┐`) or the British
// set (`ESC ( A`: `#` -> `£`); one slot is in use for printing (SI: G0, SO:
// G1, `ESC n`: G2, `ESC o`: G3). A designation with another final byte
// leaves its slot as it was, and RIS (`ESC c`) resets everything, as
// libvterm does (its soft reset, DECSTR, leaves them; xterm's resets them).
// Single shifts (`ESC N`, `ESC O`) are not followed. Bytes 0x80 and up are
// UTF-8 and never translated; ASCII right after them is (libvterm decodes
// it as UTF-8 when no sequence or control is between: xterm does not).
//
// The state reaches across a log's pages: OutputLog::charsets_at gives it at
// a page's start (CharsetIndex).
//
// Threading: a plain value.
#pragma once

#include <cstdint>
#include <string_view>

namespace agentty::session {

struct Charsets {
  enum Set : std::uint8_t { kAscii, kDecGraphics, kBritish };

  Set slots[4] = {kAscii, kAscii, kAscii, kAscii};
  std::uint8_t in_use = 0;  // the slot printing uses (GL)

  bool operator==(const Charsets&) const = default;

  // Printable ASCII prints as itself.
  bool plain() const { return slots[in_use] == kAscii; }
  // What printable ASCII byte `c` prints as in the set in use: its UTF-8, or
  // empty when it prints as itself.
  std::string_view glyph(char c) const;
  // Applies one whole unit of the stream (an escape sequence, or a single
  // control byte); true if it changed or could change the character sets.
  bool apply(std::string_view unit);
};

}  // namespace agentty::session
