#include "session/text_view.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "support/utf8_check.hpp"

namespace agentty::session {
namespace {

using test_util::valid_utf8;

TEST(TextView, RemovesEscapeSequencesOfAllKinds) {
  EXPECT_EQ(to_text("\x1b[1;31mred\x1b[0m"), "red");
  EXPECT_EQ(to_text("a\x1b[?25lb\x1b[?1049hc"), "abc");                    // private params
  EXPECT_EQ(to_text("a\x1b[2 qb\x1b[>4;2mc"), "abc");                      // intermediates
  EXPECT_EQ(to_text("\x1b]0;title\x07x"), "x");                            // OSC BEL
  EXPECT_EQ(to_text("\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\"), "link");  // OSC ST
  EXPECT_EQ(to_text("\x1bPq#0;2;0;0;0~-\x1b\\y"), "y");                    // DCS
  EXPECT_EQ(to_text("\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\z"), "z");
  EXPECT_EQ(to_text("\x1b(B\x1b)0\x1b=\x1b>\x1b"
                    "7\x1b"
                    "8\x1b#8ok"),
            "ok");
  EXPECT_EQ(to_text("\x1b]133;A\x07$ \x1b]133;B\x07ls"), "$ ls");
}

TEST(TextView, LineEndingsAndOverwrites) {
  EXPECT_EQ(to_text("a\r\nb\r\n"), "a\nb\n");
  EXPECT_EQ(to_text("10%\r20%\r30%\n"), "30%\n");
  EXPECT_EQ(to_text("abcdef\rxy"), "xycdef");
  EXPECT_EQ(to_text("abc\r"), "abc");
  EXPECT_EQ(to_text("abc\r\r\n"), "abc\n");
  EXPECT_EQ(to_text("ab\bc"), "ac");
  EXPECT_EQ(to_text("\xc3\xa9t\xc3\xa9\b\bX"), "\xc3\xa9X\xc3\xa9");  // UTF-8 aware
  EXPECT_EQ(to_text("\b\bx"), "x");
  EXPECT_EQ(to_text("\xe2\x96\x88\xe2\x96\x88\rab"), "ab");  // wide chars overwritten
}

// Progress bars, spinners and pagers redraw a line with \r\e[K and shorter text.
TEST(TextView, EraseInLineBlanksWhatItClears) {
  EXPECT_EQ(to_text("abcdef\rxy\x1b[K\n"), "xy\n");
  EXPECT_EQ(to_text("progress 10%\r\x1b[0Kdone"), "done");
  EXPECT_EQ(to_text("abcdef\rxy\x1b[J"), "xy");          // erase below, its line
  EXPECT_EQ(to_text("keep\x1b[Kme"), "keepme");          // at the end: nothing
  EXPECT_EQ(to_text("abcdef\b\b\b\x1b[1KX"), "   Xef");  // to the cursor, inclusive
  EXPECT_EQ(to_text("old line\r\x1b[2Knew"), "new");     // whole line
  EXPECT_EQ(to_text("50%\x1b[2K\r60%\n"), "60%\n");      // erase, then CR
  EXPECT_EQ(to_text("abc\x1b[2Kx\n"), "   x\n");         // the cursor stays
  EXPECT_EQ(to_text("abc\x1b[2K\n"), "\n");              // blank cells: no text
  EXPECT_EQ(to_text("\xc3\xa9t\xc3\xa9\b\x1b[1K"), "");  // UTF-8 aware
  EXPECT_EQ(to_text("\xc3\xa9t\xc3\xa9!\b\b\x1b[1KX"), "  X!");
  EXPECT_EQ(to_text("abc\r\x1b[5Kx\x1b[?Ky"), "xyc");  // other forms are not erases
}

TEST(TextView, ControlsDroppedExceptLfAndTab) {
  EXPECT_EQ(to_text("a\x07"
                    "b\x01\x7f\x0e"
                    "c\td\n"),
            "abc\td\n");
}

TEST(TextView, InvalidUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(to_text("a\xff"
                    "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(to_text("\xe2\x82"), "\xEF\xBF\xBD");  // truncated at the end
  EXPECT_EQ(to_text("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(to_text("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
}

TEST(TextView, OutputIsValidUtf8ForRandomBytes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string raw(rng() % 200, '\0');
    for (char& c : raw) c = static_cast<char>(rng());
    EXPECT_TRUE(valid_utf8(to_text(raw)));
  }
}

TEST(TextView, SafePageLengthNeverSplitsUnits) {
  EXPECT_EQ(safe_page_length("ab\xc3\xa9", 3, false), 2u);
  EXPECT_EQ(safe_page_length("ab\x1b[31mc", 4, false), 2u);
  EXPECT_EQ(safe_page_length("ab\r\nc", 3, false), 2u);
  EXPECT_EQ(safe_page_length("\x1b]0;long title\x07xyz", 3, false), 15u);  // whole unit
  EXPECT_EQ(safe_page_length("ab\xe2\x82", 100, true), 2u);                // held back
  EXPECT_EQ(safe_page_length("ab\xe2\x82", 100, false), 4u);
  EXPECT_EQ(safe_page_length("ab\r", 100, true), 2u);  // maybe CR LF
  EXPECT_EQ(safe_page_length("\x1b[3", 100, true), 0u);
  EXPECT_EQ(safe_page_length("", 100, true), 0u);
}

TEST(TextView, SafePageLengthPrefersEndingAfterLf) {
  EXPECT_EQ(safe_page_length("aaaaaaa\nbbbbbbbbbb", 10, false), 8u);       // LF in last half
  EXPECT_EQ(safe_page_length("a\nbbbbbbbbbbbbbbbb", 10, false), 10u);      // LF too early
  EXPECT_EQ(safe_page_length("a\nbb\rccccccccccccc", 10, false), 2u);      // cut line overwrites
  EXPECT_EQ(safe_page_length("a\nbbbbbbbbbb\rcc\n", 10, false), 2u);       // ... further on
  EXPECT_EQ(safe_page_length("aaaaaaa\nbb", 100, false), 10u);             // not capped
  EXPECT_EQ(safe_page_length("a\nbbbbbbbbbb\x1b[2Kcc\n", 10, false), 2u);  // erases its start
  EXPECT_EQ(safe_page_length("a\nbbbbbbbbbb\x1b[Kcc\n", 10, false), 10u);  // only its end
}

// A display redrawn in place: a page ends with a whole frame, before the
// move up that starts the next, so the next page's first frame reads whole
// and the page holding the last frame reads as that frame.
TEST(TextView, SafePageLengthEndsBetweenTheFramesOfADisplay) {
  std::string raw = "header\n";
  for (int k = 0; k < 10; ++k) {
    if (k > 0) raw += "\x1b[?25l\r\x1b[2A";
    raw += "step a " + std::to_string(k) + "\n\x1b[2Kstep b " + std::to_string(k) + "\n";
  }
  const std::size_t max_bytes = raw.find("step b 7") + 2;
  const std::size_t cut = safe_page_length(raw, max_bytes, false);
  EXPECT_EQ(raw.substr(cut - 9, 28), "step b 6\n\x1b[?25l\r\x1b[2Astep a 7");
  EXPECT_EQ(to_text(raw.substr(cut), {}, TextTerminal{80, 24}), "step a 9\nstep b 9\n");
}

TEST(TextView, RawLengthThroughLineMapsTextLinesBackToBytes) {
  const std::string raw =
      "a\x1b]0;x\ny\x07"
      "b\r\nc\rd\ne";  // the OSC's LF: no line end
  ASSERT_EQ(to_text(raw), "ab\nd\ne");
  EXPECT_EQ(raw_length_through_line(raw, 0), 0u);
  EXPECT_EQ(raw_length_through_line(raw, 1), raw.find("c"));
  EXPECT_EQ(raw_length_through_line(raw, 2), raw.find("e"));
  EXPECT_EQ(raw_length_through_line(raw, 3), raw.size());  // fewer lines: all of it
}

TEST(TextView, ConverterGivesTheSameTextForAnySplit) {
  const std::string raw =
      "\x1b[32mok\x1b[0m\r\n10%\r20%\r30%\ndone \xe2\x9c\x93\b!\x1b]0;t\x1b\\\r\nend\r"
      "long\r\x1b[Kx\x1b[2Ky\b\b\x1b[1Kz\n";
  const std::string whole = to_text(raw);
  for (std::size_t a = 0; a <= raw.size(); ++a) {
    for (std::size_t b = a; b <= raw.size(); b += 3) {
      TextConverter converter;
      std::string out;
      converter.feed(raw.substr(0, a), out);
      converter.feed(raw.substr(a, b - a), out);
      converter.feed(raw.substr(b), out);
      converter.finish(out);
      ASSERT_EQ(out, whole) << a << " " << b;
    }
  }
}

TEST(TextView, OpenLineShowsTheLineNotYetEnded) {
  TextConverter converter;
  std::string out;
  converter.feed("one\ntwo\rTW", out);
  EXPECT_EQ(out, "one\n");
  EXPECT_EQ(converter.open_line(), "TWo");
}

// prompt_toolkit (ipython, ptpython, pgcli) reserves rows for its menus with
// empty lines below the prompt and goes back up at once: they read as
// nothing, as on the screen, not 30-odd empty lines after each prompt.
TEST(TextView, EmptyLinesAMoveUpTakesBackReadAsNothing) {
  std::string reserve;
  for (int k = 0; k < 34; ++k) reserve += "\r\r\n";
  const std::string prompt =
      "\x1b[0;32mIn [1]: \x1b[0m\r\r\n" + reserve + "\x1b[0m \b\x1b[35A\x1b[8C";
  EXPECT_EQ(to_text(prompt), "In [1]: \n");
  EXPECT_EQ(to_text("a\n\n\n\x1b[2Ab"), "a\nb");
  EXPECT_EQ(to_text("a\n\n\n\x1bMb"), "a\n\nb");           // ESC M: one row up
  EXPECT_EQ(to_text("a\n\n\n\x1b[5Fb"), "a\nb");           // more than were held
  EXPECT_EQ(to_text("a\n\n\nb\x1b[3Ac"), "a\n\n\nb\n c");  // rows with text between stay
  EXPECT_EQ(to_text("p> \x1b"
                    "7\r\n\r\n\x1b"
                    "8x"),
            "p> \n   x");  // restore above them
  // Not taken back: output that ends, moves down or to a fixed row.
  EXPECT_EQ(to_text("a\n\n\n"), "a\n\n\n");
  EXPECT_EQ(to_text("a\n\n\x1b[Bb"), "a\n\nb");
  EXPECT_EQ(to_text("a\n\n\x1b[5;1Hb"), "a\n\nb");
  EXPECT_EQ(to_text("a\nx\r\x1b[K\n\x1b[Ab"), "a\n\nb");  // printed on, then erased: a line
}

// A page does not end inside empty lines a move up further on takes back.
TEST(TextView, SafePageLengthKeepsEmptyLinesWithTheMoveThatTakesThemBack) {
  std::string raw = "text\r\n";
  for (int k = 0; k < 20; ++k) raw += "\r\n";
  raw += "\x1b[20A> ";
  EXPECT_EQ(safe_page_length(raw, 30, false), 6u);
  EXPECT_EQ(to_text(raw.substr(0, 6)) + to_text(raw.substr(6)), to_text(raw));
  EXPECT_EQ(safe_page_length("text\r\n\r\n\r\nmore text\r\n", 13, false), 10u);  // none here
}

TEST(TextView, RawLengthThroughLineCountsOnlyTheEmptyLinesKept) {
  const std::string taken_back = "a\n\n\n\x1b[2Ab\nc";
  ASSERT_EQ(to_text(taken_back), "a\nb\nc");
  EXPECT_EQ(raw_length_through_line(taken_back, 2), taken_back.find("c"));
  const std::string kept = "a\n\n\nb\nc";
  EXPECT_EQ(raw_length_through_line(kept, 2), 3u);
  EXPECT_EQ(raw_length_through_line(kept, 3), 4u);
  EXPECT_EQ(raw_length_through_line(kept, 4), kept.find("c"));
  EXPECT_EQ(raw_length_through_line("a\n\n\n", 2), 3u);  // held to the end
  EXPECT_EQ(raw_length_through_line("a\n\n\n", 4), 4u);  // fewer lines: all of it
}

}  // namespace
}  // namespace agentty::session
