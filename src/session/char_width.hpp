// How many terminal columns a printable character takes: 0 for a combining
// mark (it joins the character before it), 2 for a wide one (CJK, most
// emoji), 1 for the rest, as glibc's wcwidth() says in a UTF-8 locale.
// Unassigned codepoints count 1, as libvterm and tmux draw them.
//
// Pure function; any thread.
#pragma once

namespace agentty::session {

// Width of a printable codepoint (not a C0/C1 control).
int char_width(char32_t cp);

}  // namespace agentty::session
