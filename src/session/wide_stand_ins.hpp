// Wide stand-ins: make libvterm give newer emoji the two columns every other
// terminal gives them (and UTF-8 C1 controls none, below).
//
// libvterm 0.1's width table predates Unicode 9, so it draws emoji such as
// U+1F7E2 (green circle), U+1F9D1 (person) or U+1F972 one column wide, while
// glibc's wcwidth (which the program, tmux and xterm use) says two. The
// program then places everything after such a character one column further
// right than the screen model does, and `screen` shows a shifted line.
//
// libvterm's width cannot be changed, so each such codepoint is fed as a
// stand-in that libvterm does draw two columns wide: the same offset into
// U+34000..U+3DFFF, an unassigned part of plane 3 (libvterm draws all of
// plane 3 wide). Text read back from cells (lines, scrollback, the snapshot
// for a viewer, the title) maps stand-ins back. A program that prints an
// unassigned plane-3 codepoint itself would see it read back as the emoji.
//
// Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace agentty::session {

// `bytes` with every too-narrow codepoint replaced by its stand-in; returns
// `bytes` itself (no copy) when there is none. `storage` backs the result.
std::string_view with_wide_stand_ins(std::string_view bytes, std::string& storage);

// `bytes` without the C1 controls U+0080..U+009F written as UTF-8 (C2 80 ..
// C2 9F); `bytes` itself when there is none. libvterm 0.1.4 draws each one
// -1 columns wide (its wcwidth's answer), so the cursor stepped back and the
// next character overwrote the one before: "don\u0092t", Windows-1252
// quotes read as Latin-1, showed as "dot". tmux and the text view drop
// them; `storage` backs the result.
std::string_view without_utf8_c1_controls(std::string_view bytes, std::string& storage);

// The codepoint a stand-in (from kFirstWideStandIn on) stands for; any
// other codepoint itself.
std::uint32_t stand_in_original(std::uint32_t codepoint);

inline constexpr std::uint32_t kFirstWideStandIn = 0x16000 + 0x1E000;

// The codepoint a cell character stands for (itself unless a stand-in).
// Inline for the common case: the screen's row repair asks it of every cell.
inline std::uint32_t without_wide_stand_in(std::uint32_t codepoint) {
  return codepoint < kFirstWideStandIn ? codepoint : stand_in_original(codepoint);
}

// UTF-8 text with every stand-in mapped back.
std::string without_wide_stand_ins(std::string_view text);

}  // namespace agentty::session
