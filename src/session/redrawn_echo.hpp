// The echo of a multi-line bracketed paste in the text view.
//
// readline (sqlite3, psql, gdb: not bash at a marked prompt, whose echo is
// not in the answer) shows a pasted block highlighted (its active region),
// and when Enter accepts it, moves up and draws the block again without the
// highlight. A person sees it once; the text view, which never rewrites a
// line it has printed, reads it twice: "stmt,\nrest;\n        stmt,\nrest;\n"
// (the second at the prompt's column). An agent reading that may take one
// statement for two.
//
// Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>

namespace agentty::session {

// `text` with the redraw of `pasted` taken out: where the lines of `pasted`
// (trailing line ends aside) are followed by a line end, blanks, and the
// same lines again, the second drawing (and the line end and blanks before
// it) goes. Anything else is returned as it is: a paste with tabs (shown
// expanded), a single line (its redraw is a CR overwrite the view already
// collapses), output that only resembles it.
std::string without_redrawn_paste(std::string text, std::string_view pasted);

}  // namespace agentty::session
