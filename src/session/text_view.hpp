// The text view of terminal output: what an agent reads instead of raw bytes.
//
// It replays the bytes on one terminal row at a time, with no right margin
// (lines are logical: no wrapping), and prints each row's text when the
// output leaves it:
// - Text is written at the cursor, overwriting (TextLine has the cells:
//   wide characters take two, combining marks join the one before, a TAB at
//   the end of the line is kept as '\t', invalid UTF-8 is U+FFFD).
// - CR, BS, CSI n D / C / G / ` / a / Z / I move the cursor along the row;
//   CSI n @ / P / X insert, delete, erase cells; CSI K / 1 K / 2 K (and J,
//   1 J, 2 J, on this row) erase; CSI n b repeats the character before
//   the cursor; ESC 7 / 8 and CSI s / u
//   save and restore the column. So "abcdef\rxy" -> "xycdef", "abc\e[2Dz" ->
//   "azc", a progress line redrawn with "\r\e[K" keeps no old tail, and a
//   line edited at a shell prompt reads as it was entered.
// - LF, CR LF, VT, FF, ESC D and ESC E end the row ('\n').
// - A move to another row (CSI n A / B / E / F / d / e / H / f, ESC M, a
//   restore after a row change) ends the row too, but only if it holds
//   text, without the spaces at its end (a full-screen program pads the
//   rows it draws with them), and the text goes on at the column the
//   terminal gives. Without the terminal's size the view never rewrites a
//   line it has printed, so a multi-line progress display reads as its
//   successive frames ("one\e[Atwo" -> "one\n   two").
// - Live area (with the terminal's size, TextTerminal): a move up (CSI n A,
//   CSI n F, ESC M) from a line that fits on one row, by rows that land on
//   the start of a line this converter wrote into the same `out` (a line
//   takes ceil(columns / cols) rows; at most `rows` lines back), takes those
//   lines back out of `out`: the text goes on in the line it lands on, as
//   the terminal's cursor does, and the lines below it wait as rows to be
//   written over, gone through (LF, CSI n B / e / E) and written again.
//   Any other row move writes them as they are, CSI J and CSI 2 J blank
//   them, and at the end of the output they are written without the blank
//   ones at their end. So a display redrawn in place (tqdm with several
//   bars, docker build, rich's Live, Jest's status, ink) reads as the
//   frame the terminal shows ("a\nb\n\e[2AA\nB\n" -> "A\nB\n"). A move up
//   that lands anywhere else (above what the view holds, inside a wrapped
//   line, from a wrapped line's first row) is a row move as without the
//   size. Landed on a wrapped line (a session's long command line, homed
//   over by `clear` or a scroll region), the view follows which of its rows
//   the cursor is on while moves keep it there (a move down, a restore, a
//   CR, a column, an erase to the row's end): a LF on a row above its last
//   ends the line there and loses the row (text_wrapped_line.cpp).
// - The cursor's row: when the rows the view holds above and below the
//   cursor span the terminal, they reach its bottom row (a LF there
//   scrolls), so the view knows which row the cursor is on. It also knows
//   it from where the bytes start (TextStart: an execution's first byte is
//   at the top left of a fresh terminal, whose other rows are blank; a
//   page starts where the text view of the bytes before it left the
//   cursor), after `CSI 2J` and RIS (ESC c), and across a switch to or
//   from the alternate screen (the cursor stays; ?1049 saves and restores
//   it). A scroll region from the top row to above the last (CSI 1 ; b r:
//   apt's progress line below it) set while the row is known is followed:
//   a LF at its bottom leaves the rows under it; any other region leaves
//   the row unknown while it lasts. Then a move up further than the top
//   row stops there (a display taller than the terminal creeps as on the
//   screen), a move down stops at the bottom row, and a move to a row by
//   number (CSI H, f, d) or a restore (ESC 8, CSI u) to a row saved so is
//   a move up or down by the difference: top's frames redrawn from CSI H
//   read as the last, a status line drawn on the bottom row between a save
//   and a restore as its last state (or not at all once erased), however
//   short the output. A move into rows the view does not hold (above where
//   it started) writes the line; a row by number, or a move up over the
//   blank rows of a screen just cleared, keeps the row known (the rows
//   below taken as blank), any other forgets it. CSI 2J over rows
//   taken back writes them as they were (what `clear` erases stays in the
//   text). Nothing drawn on the alternate screen takes back what was
//   printed before it; CSI L, M, S, T (rows moved under the cursor) write
//   the rows the view holds as they are.
// - Empty lines (nothing printed on them) are held back until text
//   follows, and a move up (CSI n A,
//   CSI n F, ESC M, a restore to a row above them) from a row with no text
//   takes back as many of them: rows reserved with empty lines and left at
//   once (prompt_toolkit's REPLs, ipython, pgcli, print 30-odd below their
//   prompt for a menu) read as nothing, as on the screen, and
//   "a\n\n\n\e[2Ab" -> "a\nb". Output that ends reads its held lines.
// - Erased or skipped cells are blanks: spaces between text, nothing at the
//   end of a row; a space printed over a cell blanks it too ("\b \b").
// - Printable ASCII prints in the character set in use (Charsets: DEC line
//   drawing after ESC ( 0 reads as the box-drawing characters a person sees,
//   "\e(0lqqk\e(B" -> "┌──┐"); the set in use at a page's start comes from
//   the bytes before it (OutputLog::charsets_at).
// - Every other escape sequence (SGR colours, OSC titles and links, modes)
//   and C0 control is dropped.
// Pure functions; the states a page takes from the bytes before it are the
// character sets in use at its start and where it starts on the terminal
// (given by the caller). With them, the log's page boundaries (see
// OutputLog::read) make page texts concatenate to the text of the whole.
// The exceptions are a live area a page boundary cuts (the next page's move
// up cannot take back what the previous page wrote, and the page ends with
// the rows below its cursor: a status row after the blank rows above it),
// a single line, longer than a page, that holds a unit that reaches back
// into the line (a bare CR, BS, a move left or to a column, an erase of
// its start, a move to another row): it cannot reach
// into the previous page (shorter lines are kept whole because a capped page
// ends at the last LF when the cut line reaches back further on), and a run
// of empty lines longer than a page that a move up takes back.
// TextConverter carries the line across calls and has no such exception
// (explore uses it, without a size).
//
// Units: the byte stream is cut into units (a UTF-8 character, an invalid
// byte run, an escape sequence, CR LF, or a single control byte). String
// sequences (OSC, DCS, SOS, PM, APC) end at ST (ESC \), at BEL (OSC only), at
// CAN/SUB, before an ESC that does not start ST, or after kMaxSequenceBytes,
// so an unterminated one cannot hide the rest of the output.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/charsets.hpp"
#include "session/line_escape.hpp"
#include "session/text_line.hpp"

namespace agentty::session {

inline constexpr std::size_t kMaxSequenceBytes = 1 << 20;

// The size of the terminal the bytes were written to, for the live area.
// 0: not known (no live area).
struct TextTerminal {
  std::size_t cols = 0;
  std::size_t rows = 0;
  bool known() const { return cols > 0 && rows > 0; }
};

// From `offset` (into the bytes converted) on, the terminal had this size.
struct TerminalFrom {
  std::size_t offset = 0;
  TextTerminal terminal;
};
using TerminalSizes = std::vector<TerminalFrom>;  // by offset; empty: not known

// Where the bytes start on the terminal, for the live area: the cursor's
// row when it is known (a fresh terminal's first byte is at its top left),
// with the rows below it taken as blank and those above as not the view's
// to take back; the row and column saved there (ESC 7) and the scroll
// region in effect.
struct TextStart {
  std::optional<std::size_t> row;
  std::optional<std::size_t> saved_row;
  std::size_t saved_column = 0;
  std::optional<std::size_t> region_bottom;  // a scroll region followed: its last row
  std::size_t region_top = 0;                // and its first
  bool in_unknown_region = false;            // a region set where the row was not known
  // A fresh terminal: a restore with nothing saved goes home too.
  static TextStart top_left() {
    TextStart start;
    start.row = 0;
    start.saved_row = 0;
    return start;
  }
};

// `charsets`: the character sets in use where `raw` starts.
std::string to_text(std::string_view raw, Charsets charsets = {}, TextTerminal terminal = {});
// The same with the terminal resized inside `raw`: lines keep the rows they
// took when written (a terminal does not rewrap them); `start`: where `raw`
// starts on it.
std::string to_text(std::string_view raw, Charsets charsets, const TerminalSizes& sizes,
                    const TextStart& start = {});
// Where the bytes after `raw` start on the terminal, `raw` starting at
// `start` (the bytes before a page, for the page's TextStart).
TextStart text_start_after(std::string_view raw, Charsets charsets, const TerminalSizes& sizes,
                           const TextStart& start = {});
// The sizes of the bytes [from, to) of those `sizes` describe, from 0.
TerminalSizes sizes_within(const TerminalSizes& sizes, std::size_t from, std::size_t to);

// Follows `raw` (starting at a unit boundary) for the character sets it
// selects, from `charsets`, and returns how many bytes it went through: all
// of them, or up to an incomplete unit at the end when `more_may_follow`
// (the caller goes on from there with more bytes). Units as to_text cuts
// them, so an SO inside an OSC title changes nothing here either.
std::size_t advance_charsets(std::string_view raw, Charsets& charsets, bool more_may_follow);

// The printable text of `raw` as it comes, nothing replayed: escape
// sequences and C0 controls other than TAB and LF dropped, invalid UTF-8 as
// U+FFFD. For typed keys, where ESC [ D is the left arrow key, not a cursor
// the bytes move.
std::string without_escapes(std::string_view raw);

// Length of the longest prefix of `raw` (at most `max_bytes`, but at least one
// whole unit) that does not end inside a UTF-8 character, an escape sequence
// or a CR LF pair; prefers ending just after a LF that ends a line with text
// when one is in the last half of the prefix, or anywhere in it when the cut line holds a unit that
// reaches back into the line (see above; looking up to max_bytes past the
// cut, so give it up to twice max_bytes of raw to benefit). When `more_may_follow`, an incomplete
// unit at the very end of `raw` is excluded (it will complete later). May return 0 only when raw is
// empty or holds just an incomplete unit that more_may_follow.
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
// With a TextTerminal, the live area takes back only lines written into the
// same `out` string since it last changed otherwise (so feeding pages into one
// string reads as to_text of the whole).
class TextConverter {
 public:
  explicit TextConverter(Charsets charsets = {}, TextTerminal terminal = {})
      : charsets_(charsets), terminal_(terminal) {}
  // The terminal's size from the next byte fed on (a resize).
  void set_terminal(TextTerminal terminal);
  // Where the first byte fed goes on the terminal (before any feed).
  void start_at(const TextStart& start);
  // Where the next byte fed goes, as far as the view knows (`out`: the
  // string fed into so far).
  TextStart position(const std::string& out) const;
  void feed(std::string_view raw, std::string& out);
  void finish(std::string& out);
  // The text of the line still open (no LF yet), as it would print now.
  const std::string& open_line() const { return line_.text(); }
  // Appends the open line's text to `out` (no LF) and forgets it: the line
  // goes on, but a later CR, backspace or erase reaches back only to here,
  // as a terminal's overwrites reach only its current row. Keeps a line with
  // no end (a program printing one endless line) from growing in memory.
  void take_open_line(std::string& out);
  // Line ends written so far ('\n' in the text).
  std::size_t lines_ended() const { return lines_ended_; }
  // Empty lines ended but not written yet: written before the next text, or
  // taken back by a move up over them.
  std::size_t held_blank_lines() const { return held_blank_lines_; }

 private:
  void convert(std::string_view raw, bool final, std::string& out);
  void apply_escape(std::string_view unit, std::string& out);
  void end_line(std::string& out);
  void change_row(std::size_t column, std::size_t up, std::string& out);
  void write_held_lines(std::string& out);
  void put_in_charset(std::string_view run);
  // The live area (text_live_area.cpp).
  void move_row(const LineEscape& action, std::size_t column, std::string& out);
  bool take_back(std::size_t up, bool scrolls_at_top, std::size_t column, std::string& out);
  bool move_to_row(std::size_t row, std::size_t column, std::string& out);
  void blank_rows_below();
  void set_scroll_region(std::size_t top, std::size_t bottom, std::string& out);
  void keep_region_lines(const std::string& out);
  void erase_screen(std::string& out);
  void switch_screen(const LineEscape& action, std::string& out);
  void reset_screen(std::string& out);
  void shift_rows(std::string& out);
  std::optional<std::size_t> landing_row(const LineEscape& action, const std::string& out) const;
  void forget_rows();
  void lose_row();
  // Terminal rows a line of text takes at `cols` columns.
  static std::size_t rows_of(std::string_view line, std::size_t cols);
  void know_row(std::size_t row, bool blank_above);
  std::optional<std::size_t> cursor_row(const std::string& out) const;
  // A wrapped open line a row move landed on (text_wrapped_line.cpp).
  struct OpenRows {
    std::size_t row;   // the cursor's, among the line's (0: its first)
    std::size_t rows;  // the rows the line takes
  };
  std::optional<OpenRows> open_rows() const;
  std::optional<OpenRows> landed_rows() const;
  // The rows the open line has on the screen, at least.
  std::size_t open_line_rows() const { return wrapped_ ? wrapped_->rows : 1; }
  std::size_t row_start() const;
  std::size_t row_column(std::size_t row, std::size_t column) const;
  std::size_t column_on_row(std::size_t column) const;
  std::size_t screen_column();
  bool move_down_in_line(std::size_t& down, std::size_t column);
  bool move_up_in_line(std::size_t up, std::size_t column);
  void carriage_return();
  bool inside_wrapped_line() const;
  void erase_to_row_end();
  bool cut_at_row_end(std::size_t& blank_under);
  void move_down(std::size_t down, std::size_t column, std::string& out);
  void end_row(std::string_view text, std::string& out, std::size_t rows = 1);
  void end_live_rows(bool at_end, std::string& out);
  void written_line_at(std::size_t offset, std::size_t rows = 1);
  void check_written_lines(const std::string& out);

  TextLine line_;        // the open line
  std::string pending_;  // incomplete unit held from the previous feed
  std::size_t lines_ended_ = 0;
  std::size_t saved_column_ = 0;      // ESC 7 / CSI s
  bool changed_row_ = false;          // a row was left since the save
  bool printed_ = false;              // on the open line: it is not an empty one
  std::size_t held_blank_lines_ = 0;  // empty lines ended but not written yet
  std::size_t held_at_save_ = 0;      // held_blank_lines_ at the save
  std::size_t held_unplaced_ = 0;     // of them, held before the view lost the row
  std::size_t lines_at_save_ = 0;     // lines_ended_ at the save
  Charsets charsets_;                 // what printable ASCII prints as
  TextTerminal terminal_;
  // Live area: where each of the last lines written into `out` (at most
  // terminal_.rows) starts, and the rows below the cursor, top first (the
  // last is the bottom row, where the output's last line is open).
  struct WrittenLine {
    std::size_t offset;    // where it starts in `out`
    std::size_t cols;      // the terminal's width when it was written
    std::size_t rows = 1;  // at least (a wrapped line's blank rows show no text)
  };
  // The rows a written line took: `text` is its text.
  static std::size_t rows_taken(const WrittenLine& line, std::string_view text) {
    return std::max(rows_of(text, line.cols), line.rows);
  }
  std::deque<WrittenLine> written_;
  std::deque<std::string> below_;
  // Blank rows under below_ (and the cursor) that the view knows the screen
  // has: empty lines a move up went back over, rows an erase blanked.
  std::size_t hidden_below_ = 0;
  // Rows above the lines the view holds that the screen has above the
  // cursor (it started on a row it knew, or an erase left it there):
  // counted for the cursor's row, never taken back.
  std::size_t unheld_above_ = 0;
  bool unheld_blank_ = false;             // and they are blank (a cleared screen)
  std::optional<std::size_t> saved_row_;  // the cursor's row at ESC 7 / CSI s
  // The open line wraps and a row move landed on it (on its first row), or
  // readline's CR put the cursor on its last row: the row of it the cursor
  // is on, and the rows it took then (an erase does not take rows back
  // from the screen). The view follows which row that is only from there:
  // another CR on a wrapped line goes to the line's start, where a
  // terminal's cursor stays on its row.
  std::optional<OpenRows> wrapped_;
  // A scroll region other than the whole screen (CSI t ; b r): its last
  // and first rows, when the view knew the cursor's row as it was set; else
  // the rows are not known while it lasts (in_unknown_region_). Known, but
  // the row lost in it (its home move above the rows the view holds), they
  // are not known until a restore to a row saved by number.
  std::optional<std::size_t> region_bottom_;
  std::size_t region_top_ = 0;
  bool in_unknown_region_ = false;
  const std::string* written_into_ = nullptr;  // the `out` of written_
  std::size_t written_size_ = 0;               // its size when a call left it
};

}  // namespace agentty::session
