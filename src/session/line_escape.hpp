// What an escape sequence does to the line the text view is writing.
// The text view follows the cursor along its line and treats a move to
// another row as the end of it; every sequence not named here (SGR, OSC,
// modes, charsets, private and intermediate forms) does nothing to it.
//
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace agentty::session {

enum class LineOp {
  kNone,
  kLeft,           // CSI n D
  kRight,          // CSI n C, CSI n a
  kColumn,         // CSI n G, CSI n `: to column n
  kBackTab,        // CSI n Z
  kTab,            // CSI n I
  kInsert,         // CSI n @
  kDelete,         // CSI n P
  kEraseCells,     // CSI n X
  kEraseToEnd,     // CSI K, CSI 0 K, CSI J, CSI 0 J
  kEraseToStart,   // CSI 1 K, CSI 1 J
  kEraseLine,      // CSI 2 K, CSI 2 J
  kRepeat,         // CSI n b
  kRowKeepColumn,  // CSI n A, B, d, e; ESC M: another row, same column
  kRowToColumn,    // CSI n E, F (column 1); CSI r ; c H, f (column c)
  kNewLine,        // ESC D, ESC E: as LF
  kScreenSwitch,   // CSI ? 1049 / 1047 / 47 h or l: to (n 1) or from (n 0) the alternate screen
  kShiftRows,      // CSI n L, M, S, T: rows inserted, deleted, scrolled (the cursor stays)
  kReset,          // ESC c (RIS): the screen cleared, the cursor home, modes reset
  kScrollRegion,   // CSI t ; b r: rows t to b scroll (row: b, 0 for the last)
  kSave,           // ESC 7, CSI s
  kRestore,        // ESC 8, CSI u
};

struct LineEscape {
  LineOp op = LineOp::kNone;
  std::size_t n = 1;     // count, or a 0-based column
  std::size_t up = 0;    // rows a row move goes up (CSI n A, CSI n F, ESC M)
  std::size_t down = 0;  // rows a row move goes down (CSI n B, CSI n e, CSI n E)
  // An erase that blanks the rows below the cursor's too (CSI J, CSI 2 J).
  bool below = false;
  // At the top row the move scrolls the screen down instead (ESC M); the
  // others stop there.
  bool scrolls_at_top = false;
  // The row a move goes to (1-based: CSI r ; c H, f; CSI r d); 0: none.
  std::size_t row = 0;
  // A screen switch that saves the cursor (to) or restores it (from): ?1049.
  bool cursor_saved = false;
};

// The action of one whole escape sequence (ESC and all its bytes).
LineEscape line_escape(std::string_view unit);

}  // namespace agentty::session
