// The echo of a line typed into a program that draws it twice.
//
// Some line editors draw the typed line again in place when Enter accepts
// it: readline shows a bracketed paste highlighted (its active region), then
// moves up and draws the block again without the highlight (sqlite3, psql,
// gdb); prompt_toolkit (ipython) reserves rows below its prompt, moves back
// up and draws the accepted line again. A person sees it once; the text
// view, which never rewrites a line it has printed, reads it twice:
// "stmt,\nrest;\n        stmt,\nrest;\n" (the second at the prompt's
// column), "In [1]: x\nIn [1]: x\n". An agent reading that may take one
// statement for two. (bash and zsh at a marked prompt are not concerned:
// an answer there starts after the echo.)
//
// Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>

namespace agentty::session {

// Whether `raw` moves the cursor up a row anywhere (CSI n A, CSI n F, ESC M):
// what a redraw in place needs, and a program printing its input back (cat)
// does not do.
bool moves_up(std::string_view raw);

// `text` with the redraw of `typed` taken out: where the lines of `typed`
// (trailing line ends aside) are followed by a line end, a short prefix on
// that line (blanks, a prompt), and the same lines again, the second drawing
// (and the line end and prefix before it) goes. Anything else is returned as
// it is: a line with tabs (shown expanded), output that only resembles it.
// Call it only where `moves_up` of the text's bytes says a redraw can be.
std::string without_redrawn_echo(std::string text, std::string_view typed);

}  // namespace agentty::session
