// The text view of terminal output: what an agent reads instead of raw bytes.
//
// Escape sequences (CSI, OSC, DCS, ...) are removed; CR LF becomes LF; a bare
// CR followed by more text overwrites the line from its start, the way a
// terminal shows a progress bar; backspace deletes the previous character.
// Invalid UTF-8 becomes U+FFFD. Pure functions, no state between calls: the
// log's page boundaries (see OutputLog::read) make page texts concatenate to
// the text of the whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agentty::session {

std::string to_text(std::string_view raw);

// Length of the longest prefix of `raw` (at most `max_bytes`, but at least one
// whole unit) that does not end inside a UTF-8 character, an escape sequence
// or a CR LF pair; prefers ending just after a LF when one is in the last
// half of the prefix. When `more_may_follow`, an incomplete unit at the very
// end of `raw` is excluded (it will complete later). May return 0 only when
// raw is empty or holds just an incomplete unit that more_may_follow.
std::size_t safe_page_length(std::string_view raw, std::size_t max_bytes, bool more_may_follow);

}  // namespace agentty::session
