// libvterm screen cells as text: plain (what a person reads: erased cells
// are spaces, wide characters once, no trailing blanks) or styled (SGR
// sequences where the look changes). Screen's rows, scrollback and
// render_ansi are made of these.
#pragma once

#include <vterm.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace agentty::session {

// libvterm's chars[0] in the cell right of a wide character.
inline constexpr std::uint32_t kWidePlaceholder = 0xFFFFFFFF;

// Makes a row read as xterm and tmux show it after a character was written
// over half of a wide one: the other half becomes a blank. libvterm 0.1.4
// leaves it (a head whose placeholder was overwritten still holds the wide
// character; a placeholder after a narrow character makes libvterm report
// that one two columns wide), so the text after the edit read one column off.
void repair_wide_halves(VTermScreenCell* cells, int cols);
// Appends one cell's characters; erased cells are a space, placeholders none.
void append_cell_text(std::string& out, const VTermScreenCell& cell);
// A row as text, without trailing blanks.
std::string cells_to_text(const VTermScreenCell* cells, int cols);
// SGR parameters (after a reset) that give a cell's attributes and colours.
std::string sgr_for(const VTermScreenCellAttrs& attrs, const VTermColor& fg, const VTermColor& bg);
bool same_look(const VTermScreenCell& a, const VTermScreenCell& b);
bool looks_default(const VTermScreenCell& c);
// No attribute and the default colours: text drawn with a reset pen.
bool looks_plain(const VTermScreenCell& c);
// The last column of `cells` that shows anything (text, or a background,
// underline or reverse video on a blank); -1 for a blank row.
int last_shown_col(const VTermScreenCell* cells, int cols);
// A row as text with SGR sequences where the look changes, from a reset pen
// and back to it at its end (see Screen::styled_lines()).
std::string cells_to_styled(const VTermScreenCell* cells, int cols);
// A styled line without its SGR sequences: the text cells_to_text() gives
// (cell text never holds ESC, so every ESC starts one of ours).
std::string without_sgr(std::string_view styled);

}  // namespace agentty::session
