// The text view against what a terminal shows: cursor movement along the
// line, editing, wide and combining characters, moves to other rows, and a
// differential check of random single-row streams against libvterm (the
// Screen behind the `screen` tool).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "session/char_width.hpp"
#include "session/screen.hpp"
#include "session/text_view.hpp"
#include "session/typed_lines.hpp"
#include "terminal_rows.hpp"

namespace agentty::session {
namespace {

TEST(TextViewTerminal, CursorLeftRightAndColumnMoveAlongTheLine) {
  EXPECT_EQ(to_text("abc\x1b[2Dz\n"), "azc\n");  // printf 'abc\033[2Dz\n'
  EXPECT_EQ(to_text("abc\x1b[Dz"), "abz");
  EXPECT_EQ(to_text("abc\x1b[9Dz"), "zbc");  // stops at the line's start
  EXPECT_EQ(to_text("abcdef\r\x1b[2Cx"), "abxdef");
  EXPECT_EQ(to_text("ab\x1b[3Cx"), "ab   x");      // past the end: blanks
  EXPECT_EQ(to_text("ab\x1b[3C"), "ab");           // ... that are not text
  EXPECT_EQ(to_text("abcdef\x1b[3GX"), "abXdef");  // CHA
  EXPECT_EQ(to_text("abcdef\x1b[GX"), "Xbcdef");
  EXPECT_EQ(to_text("abcdef\x1b[2`X"), "aXcdef");    // HPA
  EXPECT_EQ(to_text("abcdef\r\x1b[2aX"), "abXdef");  // HPR
  EXPECT_EQ(to_text("abc\x1b[?5Dx"), "abcx");        // private: another function
}

TEST(TextViewTerminal, InsertDeleteAndEraseCharacters) {
  EXPECT_EQ(to_text("abcdef\r\x1b[2P"), "cdef");         // DCH
  EXPECT_EQ(to_text("abcdef\x1b[4G\x1b[PX"), "abcXf");   // DCH then write
  EXPECT_EQ(to_text("abc\r\x1b[2@"), "  abc");           // ICH
  EXPECT_EQ(to_text("abc\x1b[2G\x1b[@X"), "aXbc");       // insert a character
  EXPECT_EQ(to_text("abcdef\x1b[4G\x1b[2X"), "abc  f");  // ECH
  EXPECT_EQ(to_text("abcdef\x1b[4G\x1b[9X"), "abc");
  EXPECT_EQ(to_text("abc\x1b[5P\x1b[5@\x1b[5X"), "abc");  // at the end: nothing
  EXPECT_EQ(to_text("-\x1b[4b+"), "-----+");              // REP
}

// What bash's readline, zsh and fish echo while a line is edited.
TEST(TextViewTerminal, ShellLineEditingShowsTheEditedLine) {
  // "echo helo", left twice, "l": readline redraws the rest and moves back.
  EXPECT_EQ(to_text("$ echo helo\b\bllo\b\b\r\n"), "$ echo hello\n");
  // The same with insert mode sequences (ICH) and CSI D.
  EXPECT_EQ(to_text("$ echo helo\x1b[2D\x1b[@l\x1b[C\x1b[C\r\n"), "$ echo hello\n");
  // Delete a character in the middle (DCH).
  EXPECT_EQ(to_text("$ echo helllo\x1b[3D\x1b[P\r\n"), "$ echo hello\n");
  // fish: a grey autosuggestion, then the cursor back; Enter erases it.
  EXPECT_EQ(to_text("$ ec\x1b[90mho hi\x1b[m\x1b[5D\x1b[K\r\n"), "$ ec\n");
  // zsh: PROMPT_SP's "%" and spaces, then CR, a space, CR, and the prompt.
  EXPECT_EQ(to_text("\x1b[7m%\x1b[27m          \r \r\x1b[0m\x1b[J% ls\r\n"), "% ls\n");
  // Backspace over a wide character: two cells, as readline sends it.
  EXPECT_EQ(to_text("$ a\xe4\xb8\xad\b\b\x1b[K\r\n"), "$ a\n");
  EXPECT_EQ(to_text("$ a\xe4\xb8\xad\b\b  \b\b\r\n"), "$ a\n");
}

// A progress bar cleared with CR and more spaces than it was wide (tqdm's
// write, `print("\r" + " " * 80, end="\r")`), then a log line: a person sees
// the log line; the spaces past the bar were text at its end.
TEST(TextViewTerminal, SpacesThatClearALineAreNotTextAtItsEnd) {
  EXPECT_EQ(to_text(" 40%|####  |\r                    \rcheckpoint\n"), "checkpoint\n");
  EXPECT_EQ(to_text("\xe2\x96\x88\xe2\x96\x88 12%\r          \rok\n"), "ok\n");  // wide cells
  EXPECT_EQ(to_text("ab\r      x\n"), "      x\n");  // between text: spaces
  // Spaces a program printed on a line it never cleared stay text.
  EXPECT_EQ(to_text("a   \n"), "a   \n");
  EXPECT_EQ(to_text("ab\rab   \n"), "ab   \n");
  EXPECT_EQ(to_text("x\r\x1b[3C  \n"), "x\n");  // after skipped (blank) cells
}

TEST(TextViewTerminal, WideCharactersTakeTwoCells) {
  EXPECT_EQ(to_text("\xe4\xb8\xad\xe6\x96\x87\rab"), "ab\xe6\x96\x87");  // 中文 -> ab文
  EXPECT_EQ(to_text("\xe4\xb8\xad\xe6\x96\x87\raX"), "aX\xe6\x96\x87");
  EXPECT_EQ(to_text("\xe4\xb8\xad\xe6\x96\x87\rabc"), "abc");  // half of 文 blanked
  EXPECT_EQ(to_text("\xe4\xb8\xad\bX"), " X");          // over its second half: the first blank
  EXPECT_EQ(to_text("\xe4\xb8\xad|\r\x1b[CX"), " X|");  // the same, inside text
  EXPECT_EQ(to_text("\xe4\xb8\xad|\rX"), "X |");        // over its first half: the second blank
  EXPECT_EQ(to_text("ab\xe4\xb8\xad\x1b[3DX|"), "aX|");
  EXPECT_EQ(to_text("x\xe4\xb8\xad\x1b[2G\x1b[P"), "x");  // its orphaned half: a blank
  EXPECT_EQ(to_text("x\xe4\xb8\xady\x1b[2G\x1b[P"), "x y");
  EXPECT_EQ(to_text("x\xe4\xb8\xady\x1b[3G\x1b[@"), "x   y");  // split by an insert
  EXPECT_EQ(to_text("\xe4\xb8\xadx\r\x1b[X"), "  x");          // ECH of its first half: x stays put
  EXPECT_EQ(to_text("\xe4\xb8\xad\xe6\x96\x87\x1b[3G\x1b[2Pz"), "\xe4\xb8\xadz");
  // Erased by the kernel's echo ("\b \b", one column): no text is left, so
  // a move to another row adds no line.
  EXPECT_EQ(to_text("\xe4\xb8\xad\b \b\x1b[Anext\n"), " next\n");
}

// C1 controls written as UTF-8 (Windows-1252 quotes read as Latin-1) show
// nothing, as in tmux and on the screen; U+00A0 and up are text.
TEST(TextViewTerminal, Utf8C1ControlsShowNothing) {
  EXPECT_EQ(to_text("don\xc2\x92t\n"), "dont\n");
  EXPECT_EQ(to_text("A\xc2\x85"
                    "B\xc2\x80\xc2\x9f|\xc2\xa0|\n"),
            "AB|\xc2\xa0|\n");
}

TEST(TextViewTerminal, CombiningMarksJoinTheCharacterBeforeThem) {
  const std::string e_acute = "e\xcc\x81";
  EXPECT_EQ(to_text(e_acute + "x"), e_acute + "x");
  EXPECT_EQ(to_text(e_acute + "x\b\bE"), "Ex");              // overwritten with its base
  EXPECT_EQ(to_text("abc\r" + e_acute + "\x1b[D!"), "!bc");  // one cell
  EXPECT_EQ(to_text("ab\r\xcc\x81X"), "Xb");                 // nothing to join: dropped
  // A page may start with a mark: kept, so the pages read as the whole.
  EXPECT_EQ(to_text("\xcc\x81\x1b[P!"), "\xcc\x81!");
}

TEST(TextViewTerminal, TabsAreKeptAtTheEndAndMoveTheCursorInsideText) {
  EXPECT_EQ(to_text("a\tb\n"), "a\tb\n");
  EXPECT_EQ(to_text("a\tb\r12"), "12      b");  // overwritten TAB: blanks
  EXPECT_EQ(to_text("abcdefghij\r\tX"), "abcdefghXj");
  EXPECT_EQ(to_text("a\tb\r\x1b[9GX"), "a\tX");
  EXPECT_EQ(to_text("abcdefghij\x1b[Z\x1b[ZX"), "Xbcdefghij");  // CBT
}

// Another row: the line so far ends (if it holds text) and the text goes on
// on a new line, at the column the terminal puts the cursor at.
TEST(TextViewTerminal, MovesToOtherRowsStartANewLine) {
  EXPECT_EQ(to_text("one\x1b[Atwo"), "one\n   two");
  EXPECT_EQ(to_text("one\x1b[Etwo"), "one\ntwo");  // CNL: column 1
  EXPECT_EQ(to_text("one\x1b[5;2Htwo"), "one\n two");
  EXPECT_EQ(to_text("one\x1bMtwo"), "one\n   two");  // RI
  EXPECT_EQ(to_text("a\vb\fc\x1b"
                    "Dd\x1b"
                    "Ee"),
            "a\nb\nc\nd\ne");  // like LF
  // No blank lines for moves from an empty or erased line.
  EXPECT_EQ(to_text("A 1%\r\nB 1%\r\n\x1b[2AA 2%\r\nB 2%\r\n"), "A 1%\nB 1%\nA 2%\nB 2%\n");
  // rich's live display: CR, erase, up, erase; then the new frame.
  EXPECT_EQ(to_text("bar 10%\r\nstatus\r\x1b[2K\x1b[1A\x1b[2Kbar 20%\r\nstatus"),
            "bar 10%\nbar 20%\nstatus");
  // apt's progress line: save, to the bottom row, draw, restore.
  EXPECT_EQ(to_text("Setting up a\r\n\x1b"
                    "7\x1b[24;0f\x1b[42mProgress: [ 20%]\x1b[49m\x1b"
                    "8"
                    "Setting up b\r\n"),
            "Setting up a\nProgress: [ 20%]\nSetting up b\n");
  // Save and restore on the same row: a column move.
  EXPECT_EQ(to_text("abc\x1b[sdef\x1b[uX"), "abcXef");
  EXPECT_EQ(to_text("abc\x1b[2Jx"), "   x");  // ED 2: the whole line
  EXPECT_EQ(to_text("abc\x1b[3Jx"), "abcx");  // ED 3: only the scrollback
}

// A full-screen drawing pads each row with spaces before it moves to the
// next (vim's `~` rows): the row's text ends at its last character, as
// `screen` shows it. Spaces before LF are the program's text and stay.
TEST(TextViewTerminal, SpacesPaddingARowLeftForAnotherAreNotText) {
  const std::string pad(119, ' ');
  EXPECT_EQ(to_text("~" + pad + "\x1b[4;1H~" + pad + "\x1b[5;1H~" + pad + "\x1b[1;1H"),
            "~\n~\n~\n");
  EXPECT_EQ(to_text("   \x1b[2;1Hx"), "\nx");         // a row of spaces only: an empty line
  EXPECT_EQ(to_text("a b  \x1b[Ac"), "a b\n     c");  // the column stays
  EXPECT_EQ(to_text("kept  \r\n"), "kept  \n");
}

TEST(TextViewTerminal, RawLengthThroughLineCountsRowChanges) {
  const std::string raw = "one\x1b[Atwo\nthree";
  ASSERT_EQ(to_text(raw), "one\n   two\nthree");
  EXPECT_EQ(raw_length_through_line(raw, 1), raw.find("two"));
  EXPECT_EQ(raw_length_through_line(raw, 2), raw.find("three"));
}

// Typed keys are not terminal output: ESC [ D is the left arrow key, and a
// line typed for the policy check is what was typed, escapes removed.
TEST(TextViewTerminal, DecLineDrawingReadsAsTheBoxDrawingCharacters) {
  EXPECT_EQ(to_text("\x1b(0lqqk\x1b(B lqqk\n"), "\u250c\u2500\u2500\u2510 lqqk\n");
  // G1 selected with SO/SI, as ncurses does for TERM=screen; digits stay.
  EXPECT_EQ(to_text("\x1b)0x1\x0ex1x\x0fx"), "x1\u25021\u2502x");
  EXPECT_EQ(to_text("\x1b*0\x1bnq\x0fq"), "\u2500q");                  // LS2 uses G2
  EXPECT_EQ(to_text("\x1b(A#1\x1b(B#"), "\u00a31#");                   // British
  EXPECT_EQ(to_text("\x1b(0q\x1b(Zq\x1b[!pq"), "\u2500\u2500\u2500");  // unknown final; DECSTR
  EXPECT_EQ(to_text("\x1b(0q\x1b"
                    "cq"),
            "\u2500\nq");  // RIS (the cursor home: another row)
  // A page starting inside line drawing reads as it does in the whole.
  EXPECT_EQ(to_text("mqj", Charsets{.slots = {Charsets::kDecGraphics}}), "\u2514\u2500\u2518");
  // An SO inside an OSC title selects nothing, here as in to_text.
  Charsets charsets;
  const std::string titled = "\x1b)0\x1b]0;a\x0e\x07q";
  EXPECT_EQ(advance_charsets(titled, charsets, false), titled.size());
  EXPECT_EQ(charsets.in_use, 0);
  EXPECT_EQ(to_text(titled), "q");
  // An escape sequence cut at the end is left for the caller to go on from.
  charsets = {};
  EXPECT_EQ(advance_charsets("ab\x1b(", charsets, true), 2u);
}

TEST(TextViewTerminal, TypedKeysAreNotReplayedAsCursorMoves) {
  EXPECT_EQ(without_escapes("ls\x1b[D\x1b[Ax\v\f\t\xff\n"), "lsx\t\xEF\xBF\xBD\n");
  EXPECT_EQ(TypedLines::split("", "rm -rf y\x1b[D\x1b[Ax\r").lines,
            std::vector<std::string>{"rm -rf yx"});
}

// ---- Differential check against libvterm ----------------------------------

// Units a program writes on one row, in any order: text (ASCII, narrow and
// wide UTF-8, combining marks after a character), CR, BS, TAB, erases,
// moves and edits along the row, and sequences that change nothing on it.
std::string random_row_stream(std::mt19937& rng) {
  static const std::vector<std::string> kText = {
      "a",
      "hello",
      "x y",
      "0123456789",
      "\xc3\xa9",
      "\xe2\x9c\x93",
      "\xe2\x94\x80",
      "\xe4\xb8\xad",
      "\xe3\x81\x82\xe3\x81\x84",
      "  ",
  };
  static const std::vector<std::string> kOther = {
      "\r",      "\b",
      "\t",      "\x1b[K",
      "\x1b[0K", "\x1b[1K",
      "\x1b[2K", "\x1b[D",
      "\x1b[3D", "\x1b[C",
      "\x1b[4C", "\x1b[G",
      "\x1b[7G", "\x1b[P",
      "\x1b[2P", "\x1b[@",
      "\x1b[3@", "\x1b[X",
      "\x1b[2X", "\x1b[1;31m",
      "\x1b[0m", "\x1b]0;title\x07",
      "\x1b(B",  "\x1b[?25l",
      "\x1b[J",  "\x1b]8;;http://x\x1b\\",
      "\x1b(0",  "\x1b)0\x0e",
      "\x0f",    "\x1b[!p",
  };
  std::string raw;
  const int units = 1 + static_cast<int>(rng() % 24);
  bool after_char = false;
  const bool wide = rng() % 2 == 0;  // this row may hold wide characters
  for (int k = 0; k < units; ++k) {
    const unsigned pick = rng() % 10;
    if (pick < 4) {
      const std::string& text = kText[rng() % kText.size()];
      if (!wide && static_cast<unsigned char>(text[0]) >= 0xe3) continue;
      // libvterm decodes ASCII right after a non-ASCII character as UTF-8,
      // not in the character set in use, where xterm (and the text view)
      // use the set: a sequence between keeps that case out.
      if (!raw.empty() && static_cast<unsigned char>(raw.back()) >= 0x80 &&
          static_cast<unsigned char>(text[0]) < 0x80) {
        raw += "\x1b[0m";
      }
      raw += text;
      after_char = text.back() != ' ';  // a space may blank a cell: nothing to join
    } else if (pick == 4 && after_char) {
      raw += "\xcc\x81";  // combining acute
    } else {
      const std::string& other = kOther[rng() % kOther.size()];
      // A TAB on a row with wide characters, one of whose halves may be
      // overwritten: its '\t' would stand for blanks the text cannot place.
      if (other == "\t" && wide) continue;
      raw += other;
      after_char = false;
    }
  }
  return raw;
}

TEST(TextViewTerminal, RandomRowsReadAsLibvtermShowsThem) {
  std::mt19937 rng(17);
  for (int round = 0; round < 3000; ++round) {
    std::string raw;
    const int rows = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < rows; ++r) raw += random_row_stream(rng) + "\r\n";
    ASSERT_EQ(text_rows(raw), terminal_rows(raw)) << ::testing::PrintToString(raw);
  }
}

// ---- Live area -----------------------------------------------------------

// Rows drawn, gone back up to and drawn again (a multi-line progress display,
// a status block erased and replaced) read as libvterm shows them, when every
// move up lands on a row drawn before (no line wider than the terminal).
TEST(TextViewTerminal, LiveAreaReadsAsLibvtermShowsTheRows) {
  std::mt19937 rng(46);
  for (int round = 0; round < 3000; ++round) {
    std::string raw;
    std::size_t row = 0;  // the cursor's
    const int steps = 1 + static_cast<int>(rng() % 14);
    for (int step = 0; step < steps; ++step) {
      const unsigned pick = rng() % 5;
      if (pick == 0 || pick == 1) {
        raw += "\x1b[0m" + random_row_stream(rng);  // (see random_row_stream)
      } else if (pick == 2) {
        raw += "\r\n";
        ++row;
      } else if (row > 0) {
        const std::size_t up = 1 + rng() % row;
        const unsigned how = rng() % 3;
        raw += how == 0 && up == 1 ? std::string("\x1bM")
               : how == 1          ? "\x1b[" + std::to_string(up) + "F"
                                   : "\x1b[" + std::to_string(up) + "A";
        row -= up;
      }
    }
    ASSERT_EQ(text_rows(raw, {300, 60}), terminal_rows(raw)) << ::testing::PrintToString(raw);
  }
}

// Frames taller than a 4-row terminal, redrawn from further up than its top
// row (where the cursor stops): the older frames' first lines stay in the
// scrollback, as libvterm keeps them. Text is ASCII, so a row erased to its
// start reads as the terminal's blanks.
TEST(TextViewTerminal, MovesUpPastTheTopRowReadAsLibvtermShowsThem) {
  std::mt19937 rng(47);
  const std::vector<std::string> kText = {"a",      "hello",   "x y", "0123456789",
                                          "\x1b[K", "\x1b[2K", "\r"};
  for (int round = 0; round < 3000; ++round) {
    std::string raw;
    const int steps = 1 + static_cast<int>(rng() % 20);
    for (int step = 0; step < steps; ++step) {
      const unsigned pick = rng() % 4;
      if (pick == 0) {
        raw += kText[rng() % kText.size()];
      } else if (pick == 1 || pick == 2) {
        raw += "L" + std::to_string(step) + "\r\n";  // an empty row reads as a held line
      } else {
        const std::size_t up = 1 + rng() % 6;
        raw += rng() % 2 == 0 ? "\x1b[" + std::to_string(up) + "F"
                              : "\x1b[" + std::to_string(up) + "A";
      }
    }
    raw = "0\r\n1\r\n2\r\n3\r\n" + raw;  // the cursor on the bottom row
    ASSERT_EQ(text_rows(raw, {300, 4}), terminal_rows(raw, {300, 4}))
        << ::testing::PrintToString(raw);
  }
}

TEST(TextViewTerminal, LiveAreaTakesBackRedrawnLines) {
  const TextTerminal terminal{80, 24};
  auto live = [&](std::string_view raw) { return to_text(raw, {}, terminal); };
  EXPECT_EQ(live("a\nb\n\x1b[2AA\nB\n"), "A\nB\n");
  // tqdm's bars: a header, frames redrawn with CR, erase and LF, a summary.
  std::string bars = "get:\n\n\n";
  for (int pct = 0; pct <= 100; pct += 25) {
    bars += "\x1b[2A";
    for (int bar = 0; bar < 2; ++bar)
      bars += "\r\x1b[2Kfile" + std::to_string(bar) + " " + std::to_string(pct) + "%\n";
  }
  bars += "done\n";
  EXPECT_EQ(live(bars), "get:\nfile0 100%\nfile1 100%\ndone\n");
  EXPECT_EQ(to_text(bars).find("file0 0%"), 5u);  // without the size: every frame
  // rich's Live: the last line has no LF; each frame erases upwards.
  std::string rich = "one 1\ntwo 1";
  rich += "\r\x1b[2K\x1b[1A\x1b[2Kone 2\ntwo 2";
  EXPECT_EQ(live(rich + "\n"), "one 2\ntwo 2\n");
  // Jest: a status block erased and replaced by one line; the rows left
  // blank below it are not read.
  EXPECT_EQ(live("PASS a\nRUNS b\nTests: 1\n\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[GPASS b\n"),
            "PASS a\nPASS b\n");
  // Rows below that are not written again stay; CSI J blanks them.
  EXPECT_EQ(live("1\n2\n3\n\x1b[3AX\n"), "X\n2\n3\n");
  EXPECT_EQ(live("1\n2\n3\n\x1b[3A\x1b[JX\n"), "X\n");
  EXPECT_EQ(live("1\n2\n3\x1b[2AX"), "1X\n2\n3");
  // CSI B and CSI E go through the rows (past the last one: a new line, as
  // without the size); an absolute move writes them.
  EXPECT_EQ(live("1\n2\n3\n\x1b[3A\x1b[2BX\x1b[3EY"), "1\n2\nX\n\nY");
  EXPECT_EQ(live("1\n2\n\x1b[2AX\x1b[5;1HY"), "X\n2\nY");
}

TEST(TextViewTerminal, LiveAreaLandingElsewhereReadsAsWithoutTheSize) {
  const TextTerminal terminal{10, 24};
  // Above what the output holds, inside a wrapped line, from a wrapped line.
  for (const std::string raw :
       {"a\n\x1b[3Ab\n", "0123456789abcdef\nz\n\x1b[2Ay\n", "a\n0123456789abcdef\x1b[1Ay\n"}) {
    EXPECT_EQ(to_text(raw, {}, terminal), to_text(raw)) << ::testing::PrintToString(raw);
  }
  // A wrapped line taken back whole: two rows up from the row below it.
  EXPECT_EQ(to_text("0123456789abcdef\n\x1b[2Ay\n", {}, terminal), "y123456789abcdef\n");
}

// Lines that fill the terminal put the cursor on its bottom row, so a move
// up further than the rows stops at the top one, as the terminal's does; the
// rows above are in the scrollback. ESC M scrolls there instead, which the
// view does not follow.
TEST(TextViewTerminal, MoveUpStopsAtTheTopRow) {
  EXPECT_EQ(to_text("1\n2\n3\n\x1b[3AX\n", {}, {80, 2}), "1\n2\nX\n");
  EXPECT_EQ(to_text("1\n2\n3\n\x1b[2A\x1b[AX\n", {}, {80, 2}), "1\n2\nX\n");
  EXPECT_EQ(to_text("1\n2\n3\n\x1b[9FX\n", {}, {80, 3}), "1\nX\n3\n");
  // A 3-line frame redrawn in 3 rows: its first line scrolls away each time.
  EXPECT_EQ(to_text("a1\nb1\nc1\n\x1b[3Aa2\nb2\nc2\n", {}, {80, 3}), "a1\na2\nb2\nc2\n");
  // Below the rows the view knows of, the cursor's row is not known.
  EXPECT_EQ(to_text("1\n2\n\x1b[5AX\n", {}, {80, 4}), to_text("1\n2\n\x1b[5AX\n"));
  EXPECT_EQ(to_text("1\n2\n3\n\x1bM\x1bMX\n", {}, {80, 2}), "1\n2\n3\nX\n");
}

// Once the rows fill the terminal the cursor's row is known, so rows given
// by number (CSI H, f, d), and a restore to a saved row, are moves by the
// difference, and a LF at the bottom of a scroll region from the top
// leaves the rows under it, as on the terminal (DECSTBM puts the cursor
// home): random streams against libvterm.
TEST(TextViewTerminal, RowsByNumberReadAsLibvtermShowsThem) {
  std::mt19937 rng(48);
  const std::vector<std::string> kText = {"a",      "hello",   "x y", "0123456789",
                                          "\x1b[K", "\x1b[2K", "\r"};
  for (int round = 0; round < 3000; ++round) {
    // The cursor on the bottom row, saved there (a restore with nothing
    // saved goes to the top left corner).
    std::string raw =
        "0\r\n1\r\n2\r\n3\r\n4\x1b"
        "7";
    const int steps = 1 + static_cast<int>(rng() % 20);
    for (int step = 0; step < steps; ++step) {
      const unsigned pick = rng() % 8;
      const std::string row = std::to_string(1 + rng() % 6);
      if (pick == 0) {
        raw += kText[rng() % kText.size()];
      } else if (pick == 1) {
        raw += "L" + std::to_string(step) + "\r\n";
      } else if (pick == 2) {
        raw += "\x1b[" + row + ";" + std::to_string(1 + rng() % 5) + "H";
      } else if (pick == 3) {
        raw += "\x1b[" + row + "d";
      } else if (pick == 4) {
        raw += "\x1b" + std::string(rng() % 2 == 0 ? "7" : "8");
      } else if (pick == 5) {
        raw += "\x1b[" + row + "A";
      } else if (pick == 6) {
        raw += "S" + std::to_string(step);
      } else {  // a scroll region from the top (apt's), or none
        raw += rng() % 2 == 0 ? "\x1b[1;" + std::to_string(2 + rng() % 3) + "r"
                              : std::string("\x1b[r");
      }
    }
    ASSERT_EQ(text_rows(raw, {300, 5}), terminal_rows(raw, {300, 5}))
        << ::testing::PrintToString(raw);
  }
}

TEST(TextViewTerminal, RowsByNumberOnAFullTerminal) {
  const TextTerminal terminal{80, 3};
  // To the row the cursor is on: no new line (top's last CSI H then CR LF).
  EXPECT_EQ(to_text("1\n2\n3\x1b[3;1H\r\nX\n", {}, terminal), "1\n2\n3\nX\n");
  // A frame redrawn from the top, unchanged rows gone through with CR LF.
  EXPECT_EQ(to_text("a1\r\nb1\r\nc1\x1b[Ha2\x1b[K\r\n\r\nc2\x1b[K", {}, terminal), "a2\nb1\nc2");
  // `clear` (CSI H CSI 2J CSI 3J) keeps what it erased, once, in order;
  // from the top left the view still knows the rows.
  EXPECT_EQ(to_text("b1\nb2\nb3\nb4\n\x1b[H\x1b[2J\x1b[3Ja1\na2\na3\x1b[1;4Hx\n", {}, terminal),
            "b1\nb2\nb3\nb4\na1 x\na2\na3");
  // After a move the view does not follow (a row by number before the rows
  // are known), the lines before it are not above the cursor in order:
  // none is taken back, so none is lost.
  EXPECT_EQ(to_text("1\r\n2\r\n3\r\n\x1b[1;1Ha\r\nb\r\nc\r\n\x1b[6AX\r\n", {}, TextTerminal{80, 6}),
            "1\n2\n3\na\nb\nc\nX\n");
  // A full-screen program on the alternate screen draws from CSI H over
  // nothing printed before it.
  // Leaving it restores the cursor to the row it left.
  EXPECT_EQ(to_text("1\n2\n3\n\x1b[?1049h\x1b[HX\x1b[2;1HY\x1b[?1049l$ ", {}, terminal),
            "1\n2\n3\nX\nY\n$ ");
  // A status line drawn on the bottom row between a save and a restore,
  // in the middle of a line: the line goes on after the restore.
  EXPECT_EQ(to_text("1\n2\n3\n4\n\x1b[2Atest ... \x1b"
                    "7\x1b[4;1H\x1b[2K[1/3]\x1b"
                    "8ok\n",
                    {}, {80, 4}),
            "1\n2\ntest ... ok\n4\n[1/3]");
}

// apt's progress line: a scroll region above the last row, the status drawn
// there between a save and a restore, the log scrolling above it. Set
// where the view does not know the cursor's row (fewer lines than the
// terminal's 12 rows), the region leaves it unknown (a LF at its bottom
// does not go down): each status reads as a line after the log line it
// followed (as without the size), and no log line is written over.
TEST(TextViewTerminal, AStatusLineUnderAScrollRegionKeepsEveryLogLine) {
  std::string raw =
      "Reading\r\nBuilding\r\nSelecting\r\nPreparing\r\n\n\x1b"
      "7\x1b[0;5r\x1b"
      "8\x1b[1A";
  std::string expected = "Reading\nBuilding\nSelecting\nPreparing\n";
  for (int k = 1; k <= 6; ++k) {
    const std::string progress = "Progress: [ " + std::to_string(k * 10) + "%]";
    raw += "Unpacking pkg" + std::to_string(k) +
           " ...\r\n\x1b"
           "7\x1b[6;0f\x1b[42m" +
           progress +
           "\x1b[49m\x1b"
           "8";
    expected += "Unpacking pkg" + std::to_string(k) + " ...\n" + progress + "\n";
  }
  raw +=
      "\x1b[J\n\x1b"
      "7\x1b[0;6r\x1b"
      "8\x1b[1ASetting up pkg1\r\n";
  EXPECT_EQ(to_text(raw, {}, TextTerminal{80, 12}), expected + "Setting up pkg1\n");
}

// The same after lines that fill the terminal: the cursor's row is known
// when the region is set, so a LF at its bottom leaves the status row under
// it, and the text is the log, as the screen shows it.
TEST(TextViewTerminal, AStatusLineUnderARegionSetOnAFullTerminalReadsAsTheScreen) {
  std::string raw =
      "r1\r\nr2\r\nr3\r\nr4\r\nr5\r\nr6\r\nr7\r\n\n\x1b"
      "7\x1b[0;5r\x1b"
      "8\x1b[1A";
  for (int k = 1; k <= 9; ++k) {
    raw += "Unpacking pkg" + std::to_string(k) +
           " ...\r\n\x1b"
           "7\x1b[6;0f\x1b[42mProgress: [ " +
           std::to_string(k * 10) +
           "%]\x1b[49m\x1b"
           "8";
  }
  raw +=
      "\n\x1b"
      "7\x1b[0;6r\x1b"
      "8\x1b[1A\x1b[JSetting up pkg1\r\n";
  const std::string text = to_text(raw, {}, TextTerminal{80, 6});
  EXPECT_EQ(text.find("Progress"), std::string::npos) << text;
  EXPECT_EQ(text_rows(raw, {80, 6}), terminal_rows(raw, {80, 6})) << text;
}

TEST(TextViewTerminal, LiveAreaFedInPiecesReadsAsTheWhole) {
  const TextTerminal terminal{80, 24};
  const std::string raw =
      "top\n\n\n\x1b[2A\r\x1b[2Ka 1\n\r\x1b[2Kb 1\n\x1b[2A\r\x1b[2Ka 2\n\x1b[1B\x1bM"
      "\x1b[Kb 2\n\x1b[3Fnew top\x1b[Jend\n";
  const std::string whole = to_text(raw, {}, terminal);
  EXPECT_EQ(whole, "new topend\n");
  for (std::size_t a = 0; a <= raw.size(); ++a) {
    for (std::size_t b = a; b <= raw.size(); b += 5) {
      TextConverter converter({}, terminal);
      std::string out;
      converter.feed(std::string_view(raw).substr(0, a), out);
      converter.feed(std::string_view(raw).substr(a, b - a), out);
      converter.feed(std::string_view(raw).substr(b), out);
      converter.finish(out);
      ASSERT_EQ(out, whole) << a << " " << b;
    }
  }
}

// A resize inside the bytes: lines keep the rows they took when written
// (a terminal does not rewrap them), later lines count at the new width.
TEST(TextViewTerminal, LiveAreaCountsRowsAtTheWidthTheyWereWrittenAt) {
  // 30 columns drawn at 80 (one row each), then the terminal narrowed to 20.
  const std::string line(30, 'x');
  const std::string raw = line + "\n" + line + "\n\x1b[2Ay\n";
  const TerminalSizes resized{{0, {80, 24}}, {raw.size() - 5, {20, 24}}};
  EXPECT_EQ(to_text(raw, {}, resized), "y" + line.substr(1) + "\n" + line + "\n");
  // Written at 20 columns, each takes two rows: the move lands on the second.
  EXPECT_EQ(to_text(raw, {}, TextTerminal{20, 24}), line + "\ny" + line.substr(1) + "\n");
  EXPECT_EQ(sizes_within(resized, 10, 20).size(), 1u);
  EXPECT_EQ(sizes_within(resized, 10, raw.size()).back().offset, raw.size() - 15);
  EXPECT_EQ(sizes_within(resized, raw.size() - 2, raw.size()).front().terminal.cols, 20u);
}

// Just past the last column a terminal's cursor waits on that column (the
// pending wrap), so CSI K there blanks it: readline writes " ESC[K" where a
// wide character does not fit, and the terminal shows no space.
TEST(TextViewTerminal, EraseAtThePendingWrapBlanksTheLastColumn) {
  const TextTerminal terminal{4, 24};
  EXPECT_EQ(to_text("abc \x1b[K\xe4\xb8\xad\n", {}, terminal), "abc\xe4\xb8\xad\n");
  EXPECT_EQ(to_text("abc \x1b[K\xe4\xb8\xad\n"), "abc \xe4\xb8\xad\n");  // no size known
  EXPECT_EQ(to_text("abcd\x1b[K\n", {}, terminal), "abc\n");
  EXPECT_EQ(to_text("abcdefg \x1b[Kh\n", {}, terminal), "abcdefgh\n");  // the second row's end
  EXPECT_EQ(to_text("ab\x1b[K\n", {}, terminal), "ab\n");
  EXPECT_EQ(to_text("ab\rabc \x1b[Ky\n", {}, terminal), "abcy\n");  // a line in cells
}

// ---- Pages ---------------------------------------------------------------

// Pages cut by safe_page_length read, one by one, as the whole does when no
// line (with the empty lines before it) is longer than a page.
TEST(TextViewTerminal, SmallPagesReadAsOneBigPage) {
  std::mt19937 rng(40);
  for (int round = 0; round < 500; ++round) {
    std::string raw;
    const int rows = 1 + static_cast<int>(rng() % 6);
    for (int r = 0; r < rows; ++r) {
      raw += random_row_stream(rng);
      if (rng() % 4 == 0) raw += "\x1b[A";
      raw += rng() % 2 ? "\r\n" : "\n";
    }
    // A line nothing is printed on goes on into the next: the view holds
    // it back, and a move up may take it back.
    std::size_t longest = 0;
    TextConverter converter;
    std::string ignored;
    for (std::size_t at = 0, start = 0; at < raw.size();) {
      std::size_t end = raw.find('\n', at);
      end = end == std::string::npos ? raw.size() : end + 1;
      converter.feed(std::string_view(raw).substr(at, end - at), ignored);
      at = end;
      if (converter.held_blank_lines() > 0 && at < raw.size()) continue;
      longest = std::max(longest, at - start);
      start = at;
    }
    const std::string whole = to_text(raw);
    for (std::size_t cap = longest; cap <= longest + 40; cap += 13) {
      std::string paged;
      Charsets charsets;  // what the pages before select, as OutputLog::charsets_at
      for (std::size_t at = 0; at < raw.size();) {
        const std::size_t length = safe_page_length(std::string_view(raw).substr(at), cap, false);
        ASSERT_GT(length, 0u);
        const std::string page = raw.substr(at, length);
        paged += to_text(page, charsets);
        ASSERT_EQ(advance_charsets(page, charsets, false), page.size());
        at += length;
      }
      ASSERT_EQ(paged, whole) << cap << " " << ::testing::PrintToString(raw);
    }
  }
}

}  // namespace
}  // namespace agentty::session
