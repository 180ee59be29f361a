// TypedLines: the lines an agent's keystrokes submit to a shell, so `write`
// can check them like commands. Typed bytes gather in a pending line until CR
// or LF submits it, or ctrl-o (bash and zsh run the line, as Enter does, and
// recall the next one) or ctrl-x ctrl-e (bash hands the line to $EDITOR and
// runs what the editor leaves: the line is checked as it goes in; what is
// typed into the editor is a program's input, not checked); ctrl-c and ctrl-u
// clear it, backspace and DEL remove a
// character, ctrl-w a word (as readline would). A line is checked with escape
// sequences such as arrow keys and other controls removed (without_escapes:
// not the text view, which would replay ESC [ D as a cursor move).
// History recall, tab completion and cursor editing are not interpreted: the
// checked text is what was typed. The pending line is kept across writes (so
// typing a command and pressing Enter in a later write is checked too) and is
// bounded by kMaxPendingBytes (the newest bytes are kept).
//
// A line ending in an unescaped backslash continues on the next one, as a
// shell joins them (`rm -r\` then `f x` runs `rm -rf x`): the part typed so
// far is submitted for checking, and the joined text is submitted again when
// the command ends. The pending line then holds the continued part, a '\n'
// (never part of a line otherwise), and the current physical line: ctrl-u,
// backspace and ctrl-w edit only the current one, ctrl-c drops it all.
//
// Threading: a plain value; one owner.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace agentty::session {

class TypedLines {
 public:
  static constexpr std::size_t kMaxPendingBytes = 1 << 20;

  struct Split {
    std::vector<std::string> lines;  // completed by the typed bytes, in order
    std::string pending;             // the unfinished line after them
  };
  // What typing `typed` after `pending` submits; pure, so a refused write
  // leaves the caller's pending line as it was.
  static Split split(std::string_view pending, std::string_view typed);
  // The physical line the cursor is on (what end-of-file sees), from a pending line.
  static std::string_view current_line(std::string_view pending);
};

}  // namespace agentty::session
