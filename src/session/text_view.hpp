// The text view of terminal output: what an agent reads instead of raw bytes.
//
// Escape sequences (CSI, OSC, DCS, ...) are removed; CR LF becomes LF; a bare
// CR followed by more text overwrites the line from its start, the way a
// terminal shows a progress bar ("abcdef\rxy" -> "xycdef"); a trailing bare CR
// is dropped; backspace moves back one character ("ab\bc" -> "ac"); erase in
// line (ESC [ K, 1 K, 2 K; ESC [ J on its line) blanks the cells it clears
// ("abc\rx\e[K" -> "x", as a redrawn progress line shows); other C0
// controls except LF and TAB are dropped. Invalid UTF-8 becomes U+FFFD, so
// the text is always valid UTF-8. Pure functions, no state between calls: the
// log's page boundaries (see OutputLog::read) make page texts concatenate to
// the text of the whole. The one exception is a single line, longer than a
// page, that holds a bare CR, a backspace or an erase of its start: its
// overwrite cannot reach back into the previous page (shorter lines are kept
// whole because a capped page ends at the last LF when the cut line
// overwrites itself further on).
// TextConverter carries the line across calls and has no such exception
// (explore uses it).
//
// Units: the byte stream is cut into units (a UTF-8 character, an invalid
// byte run, an escape sequence, CR LF, or a single control byte). String
// sequences (OSC, DCS, SOS, PM, APC) end at ST (ESC \), at BEL (OSC only), at
// CAN/SUB, before an ESC that does not start ST, or after kMaxSequenceBytes,
// so an unterminated one cannot hide the rest of the output.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agentty::session {

inline constexpr std::size_t kMaxSequenceBytes = 1 << 20;

std::string to_text(std::string_view raw);

// Length of the longest prefix of `raw` (at most `max_bytes`, but at least one
// whole unit) that does not end inside a UTF-8 character, an escape sequence
// or a CR LF pair; prefers ending just after a LF when one is in the last
// half of the prefix, or anywhere in it when the cut line holds a bare CR or
// a backspace (looking up to max_bytes past the cut, so give it up to twice
// max_bytes of raw to benefit). When `more_may_follow`, an incomplete unit at the very end
// of `raw` is excluded (it will complete later). May return 0 only when
// raw is empty or holds just an incomplete unit that more_may_follow.
std::size_t safe_page_length(std::string_view raw, std::size_t max_bytes, bool more_may_follow);

// Length of the unit starting at raw[0] as if nothing followed `raw`
// (0 for empty input). Used to resynchronise after cutting at an arbitrary
// position.
std::size_t unit_length(std::string_view raw);

// Length of the unit starting at raw[0], or 0 when raw ends inside it (more
// bytes could still extend it) or raw is empty. For code that must cut the
// stream where the text view does (the redactor's escape-aware pass).
std::size_t complete_unit_length(std::string_view raw);

// Length of the prefix of `raw` that ends just after its `lines`-th line end
// (a unit to_text turns into '\n'), or raw.size() when it has fewer: maps a
// line of to_text(raw) back to the bytes it came from.
std::size_t raw_length_through_line(std::string_view raw, std::size_t lines);

// Streaming to_text: feed() appends the text of every line the bytes
// complete; the line still open and an incomplete trailing unit stay inside.
// finish() flushes both as if the output had ended. Not thread-safe.
class TextConverter {
 public:
  void feed(std::string_view raw, std::string& out);
  void finish(std::string& out);
  // The text of the line still open (no LF yet), as it would print now.
  const std::string& open_line() const { return line_; }
  // Appends the open line's text to `out` (no LF) and forgets it: the line
  // goes on, but a later CR, backspace or erase reaches back only to here,
  // as a terminal's overwrites reach only its current row. Keeps a line with
  // no end (a program printing one endless line) from growing in memory.
  void take_open_line(std::string& out);

 private:
  void convert(std::string_view raw, bool final, std::string& out);

  std::string line_;     // open line's text
  std::size_t col_ = 0;  // cursor: byte offset into the open line (past its end: erased cells)
  std::string pending_;  // incomplete unit held from the previous feed
};

}  // namespace agentty::session
