// How many terminal columns a printable character takes: 0 for a combining
// mark (it joins the character before it), 2 for a wide one (CJK, most
// emoji), 1 for the rest, as glibc's wcwidth() says in a UTF-8 locale.
// Unassigned codepoints count 1, as libvterm and tmux draw them.
//
// Pure function; any thread.
#pragma once

namespace agentty::session {

// Width of a codepoint from U+0300 on, from glibc's tables.
int table_char_width(char32_t cp);

// Width of a printable codepoint (not a C0/C1 control). Inline for what
// nearly every cell holds: nothing below U+0300 is a mark or wide, and the
// screen's row repair asks this of every cell of every row it reads.
inline int char_width(char32_t cp) {
  return cp < 0x300 ? 1 : table_char_width(cp);
}

}  // namespace agentty::session
