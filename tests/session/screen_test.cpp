#include "session/screen.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace agentty::session {
namespace {

constexpr pty::TerminalSize k80x24{80, 24};

std::string numbered_lines(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += "line " + std::to_string(i) + "\r\n";
  return out;
}

TEST(Screen, ShowsTextWithTrailingBlanksTrimmedAndCursor) {
  Screen screen(k80x24);
  screen.feed("hello   \r\nworld");
  auto snap = screen.snapshot();
  EXPECT_EQ(snap.cols, 80);
  EXPECT_EQ(snap.rows, 24);
  ASSERT_EQ(snap.lines.size(), 24u);
  EXPECT_EQ(snap.lines[0], "hello");
  EXPECT_EQ(snap.lines[1], "world");
  EXPECT_EQ(snap.lines[2], "");
  EXPECT_EQ(snap.cursor.row, 1);
  EXPECT_EQ(snap.cursor.col, 5);
  EXPECT_TRUE(snap.cursor.visible);
}

TEST(Screen, WideCharactersAppearOnceAndTakeTwoColumns) {
  Screen screen(k80x24);
  screen.feed(
      "\xe4\xb8\xad\xe6\x96\x87"
      "abc");  // 中文abc
  auto snap = screen.snapshot();
  EXPECT_EQ(snap.lines[0],
            "\xe4\xb8\xad\xe6\x96\x87"
            "abc");
  EXPECT_EQ(snap.cursor.col, 7);
}

// libvterm 0.1 draws U+1F7E2 one column wide; it is fed as a wide stand-in,
// which must never show: every way text leaves the screen gives the emoji.
TEST(Screen, NewerEmojiAreTwoColumnsAndReadBackAsThemselves) {
  const std::string green = "\xf0\x9f\x9f\xa2";  // U+1F7E2
  Screen screen(pty::TerminalSize{10, 3}, 100);
  screen.feed("\x1b]2;" + green + " title\x07" + green + "ab\r\n");
  screen.feed(green.substr(0, 2));  // split across reads
  screen.feed(green.substr(2) + "\x1b[5GX\r\n\r\n\r\n");
  auto snap = screen.snapshot(10);
  ASSERT_EQ(snap.scrollback.size(), 2u);
  EXPECT_EQ(snap.scrollback[0], green + "ab");
  EXPECT_EQ(snap.scrollback[1], green + "  X");  // X at column 5, as the program put it
  EXPECT_EQ(snap.title, green + " title");
  screen.feed(green + green + green + green + green + "!");  // ten columns, then a wrap
  snap = screen.snapshot();
  EXPECT_EQ(snap.lines[1], green + green + green + green + green);
  EXPECT_EQ(snap.lines[2], "!");
  EXPECT_NE(screen.render_ansi().find(green + green), std::string::npos);
}

TEST(Screen, Utf8SplitAcrossFeedsIsJoined) {
  Screen screen(k80x24);
  screen.feed("a\xe4");
  screen.feed("\xb8");
  (void)screen.modes();  // a probe between the pieces must not break them
  screen.feed(
      "\xad"
      "b");
  EXPECT_EQ(screen.snapshot().lines[0],
            "a\xe4\xb8\xad"
            "b");
}

TEST(Screen, DeviceStatusReportGetsCursorPositionReply) {
  Screen screen(k80x24);
  screen.feed("\x1b[3;5H\x1b[6n");
  EXPECT_EQ(screen.take_replies(), "\x1b[3;5R");
  EXPECT_EQ(screen.take_replies(), "");
}

TEST(Screen, PrimaryDeviceAttributesGetReply) {
  Screen screen(k80x24);
  screen.feed("\x1b[c");
  std::string reply = screen.take_replies();
  ASSERT_GE(reply.size(), 4u);
  EXPECT_EQ(reply.substr(0, 3), "\x1b[?");
  EXPECT_EQ(reply.back(), 'c');
}

TEST(Screen, ModeProbesDoNotLeakIntoReplies) {
  Screen screen(k80x24);
  screen.feed("\x1b[?1h");
  EXPECT_TRUE(screen.modes().application_cursor_keys);
  (void)screen.snapshot();
  (void)screen.render_ansi();
  EXPECT_EQ(screen.take_replies(), "");
}

TEST(Screen, TitleFromOsc0AndOsc2) {
  Screen screen(k80x24);
  screen.feed("\x1b]0;first title\x07");
  EXPECT_EQ(screen.snapshot().title, "first title");
  screen.feed("\x1b]2;second\x1b\\");
  EXPECT_EQ(screen.snapshot().title, "second");
}

TEST(Screen, LongTitleSplitAcrossFeedsIsKeptWhole) {
  Screen screen(k80x24);
  std::string title(150, 't');
  std::string bytes = "\x1b]2;" + title + "\x07" + "after";
  for (char c : bytes) screen.feed(std::string_view(&c, 1));
  EXPECT_EQ(screen.snapshot().title, title);
  EXPECT_EQ(screen.snapshot().lines[0], "after");
}

TEST(Screen, AltScreenFlagTogglesAndMainScreenComesBack) {
  Screen screen(k80x24);
  screen.feed("main text");
  screen.feed("\x1b[?1049h\x1b[H\x1b[2Jalt text");
  auto alt = screen.snapshot();
  EXPECT_TRUE(alt.modes.alt_screen);
  EXPECT_EQ(alt.lines[0], "alt text");
  screen.feed("\x1b[?1049l");
  auto main = screen.snapshot();
  EXPECT_FALSE(main.modes.alt_screen);
  EXPECT_EQ(main.lines[0], "main text");
}

// The alternate screen is allocated when first asked for: however the
// request is written (1049 or 1047, with other modes, cut across reads), the
// switch still happens. (libvterm 0.1.4 itself ignores mode 47 and a mode
// that is not the first of a DECSET.)
TEST(Screen, AltScreenAskedForInEveryFormSwitches) {
  const std::vector<std::vector<std::string>> forms = {
      {"\x1b[?1049h"},     {"\x1b[?1047h"},         {"\x1b[?1047;25h"}, {"\x1b[?10", "49h"},
      {"\x1b", "[?1049h"}, {"\x1b[?", "1049", "h"}, {"\x1b[?1049", "h"}};
  for (const auto& pieces : forms) {
    Screen screen(k80x24);
    screen.feed("main text\r\n");
    for (const auto& piece : pieces) screen.feed(piece);
    screen.feed("\x1b[H\x1b[2Jalt text");
    auto alt = screen.snapshot();
    EXPECT_TRUE(alt.modes.alt_screen) << pieces[0];
    EXPECT_EQ(alt.lines[0], "alt text") << pieces[0];
    screen.feed("\x1b[?1049l\x1b[?47l");
    EXPECT_EQ(screen.snapshot().lines[0], "main text") << pieces[0];
  }
}

// Modes that are not the alternate screen leave it off (and unallocated).
TEST(Screen, OtherPrivateModesStayOnTheMainScreen) {
  Screen screen(k80x24);
  screen.feed("\x1b[?2004h\x1b[?1047l\x1b[?25h\x1b[?471hmain");
  EXPECT_FALSE(screen.snapshot().modes.alt_screen);
  EXPECT_EQ(screen.snapshot().lines[0], "main");
}

// An ended execution's screen is frozen: every look answers as before the
// freeze (rows, colours, the redraw a new viewer gets, cursor, modes, title,
// scrollback), and output or a resize after it changes nothing.
TEST(Screen, AFrozenScreenAnswersEveryLookAsBefore) {
  Screen screen(k80x24, 100);
  for (int i = 0; i < 30; ++i) screen.feed("line " + std::to_string(i) + "\r\n");
  screen.feed("\x1b]2;the title\x07\x1b[1;31mred\x1b[0m plain\x1b[?1h\x1b[?2004h\x1b[?25l");
  const auto before = screen.snapshot(10);
  const auto styled = screen.styled_lines();
  const auto ansi = screen.render_ansi();
  const auto scrollback = screen.styled_scrollback(10);

  screen.freeze();
  ASSERT_TRUE(screen.frozen());
  screen.feed("\x1b[2Jmore output\r\n");
  screen.resize({40, 10});
  const auto after = screen.snapshot(10);
  EXPECT_EQ(after.lines, before.lines);
  EXPECT_EQ(after.scrollback, before.scrollback);
  EXPECT_EQ(after.cols, 80);
  EXPECT_EQ(after.rows, 24);
  EXPECT_EQ(after.cursor.row, before.cursor.row);
  EXPECT_EQ(after.cursor.col, before.cursor.col);
  EXPECT_FALSE(after.cursor.visible);
  EXPECT_TRUE(after.modes.application_cursor_keys);
  EXPECT_TRUE(after.modes.bracketed_paste);
  EXPECT_EQ(after.title, "the title");
  EXPECT_EQ(screen.styled_lines(), styled);
  EXPECT_EQ(screen.render_ansi(), ansi);
  EXPECT_EQ(screen.styled_scrollback(10), scrollback);
  EXPECT_EQ(screen.scrolled_off_lines(), 7U);
  EXPECT_NE(styled[23].find("\x1b["), std::string::npos) << styled[23];
}

TEST(Screen, InputModesFollowTheStreamAndReset) {
  Screen screen(k80x24);
  EXPECT_FALSE(screen.modes().application_cursor_keys);
  screen.feed("\x1b[?1h\x1b[?2004h\x1b[?1002h");
  auto modes = screen.modes();
  EXPECT_TRUE(modes.application_cursor_keys);
  EXPECT_TRUE(modes.bracketed_paste);
  EXPECT_TRUE(modes.mouse);
  screen.feed("\x1b[?1l\x1b[?2004l");
  modes = screen.modes();
  EXPECT_FALSE(modes.application_cursor_keys);
  EXPECT_FALSE(modes.bracketed_paste);
  EXPECT_TRUE(modes.mouse);
  screen.feed("\x1b[?1002l");
  EXPECT_FALSE(screen.modes().mouse);
  screen.feed(
      "\x1b[?1h\x1b[?2004h\x1b"
      "c");  // RIS resets them
  modes = screen.modes();
  EXPECT_FALSE(modes.application_cursor_keys);
  EXPECT_FALSE(modes.bracketed_paste);
}

TEST(Screen, ModeSequenceSplitAcrossFeedsStillApplies) {
  Screen screen(k80x24);
  screen.feed("x\x1b[?");
  EXPECT_FALSE(screen.modes().application_cursor_keys);
  screen.feed("1");
  EXPECT_FALSE(screen.modes().application_cursor_keys);
  screen.feed("hy");
  EXPECT_TRUE(screen.modes().application_cursor_keys);
  EXPECT_EQ(screen.snapshot().lines[0], "xy");
}

TEST(Screen, CursorVisibilityFollowsDectcem) {
  Screen screen(k80x24);
  screen.feed("\x1b[?25l");
  EXPECT_FALSE(screen.snapshot().cursor.visible);
  screen.feed("\x1b[?25h");
  EXPECT_TRUE(screen.snapshot().cursor.visible);
}

TEST(Screen, ScrollbackKeepsLinesThatScrollOffOldestFirst) {
  Screen screen(pty::TerminalSize{40, 10});
  screen.feed(numbered_lines(1, 30));
  auto snap = screen.snapshot(5);
  // 30 lines + the empty line under the cursor: 21 scrolled off.
  ASSERT_EQ(snap.scrollback.size(), 5u);
  EXPECT_EQ(snap.scrollback.front(), "line 17");
  EXPECT_EQ(snap.scrollback.back(), "line 21");
  EXPECT_EQ(snap.lines[0], "line 22");
  EXPECT_EQ(screen.snapshot(1000).scrollback.size(), 21u);
  EXPECT_TRUE(screen.snapshot().scrollback.empty());
}

TEST(Screen, ScrollbackKeepsTheProgramsColours) {
  Screen screen(pty::TerminalSize{40, 3});
  screen.feed("\x1b[31mred\x1b[0m plain\r\n\x1b[44m \x1b[0m\r\nplain   \r\n\r\n\r\n");
  EXPECT_EQ(
      screen.styled_scrollback(10),
      (std::vector<std::string>{"\x1b[0;31mred\x1b[0m plain", "\x1b[0;44m \x1b[0m", "plain"}));
  // The agent's view stays plain text.
  EXPECT_EQ(screen.snapshot(10).scrollback, (std::vector<std::string>{"red plain", "", "plain"}));
  EXPECT_EQ(screen.scrolled_off_lines(), 3u);
  EXPECT_EQ(screen.styled_scrollback(1), (std::vector<std::string>{"plain"}));
}

// Every retained record keeps its screen: 10000 lines with a colour per
// character held ~12 MB each, so 200 ended records could hold gigabytes.
TEST(Screen, ScrollbackKeepsAtMostItsByteLimitOfStyledText) {
  Screen screen(k80x24);
  std::string line;
  for (int c = 0; c < 79; ++c)
    line += "\x1b[3" + std::to_string(1 + c % 6) + "m" + char('a' + c % 26);
  line += "\x1b[0m\r\n";
  for (int i = 0; i < 3000; ++i) screen.feed(line);
  const auto kept = screen.styled_scrollback(10000);
  std::size_t bytes = 0;
  for (const auto& styled : kept) bytes += styled.size();
  EXPECT_LE(bytes, Screen::kMaxScrollbackBytes);
  EXPECT_GT(bytes + 2 * kept.back().size(), Screen::kMaxScrollbackBytes);  // the newest, up to it
  EXPECT_LT(kept.size(), 3000u);
  EXPECT_EQ(screen.scrolled_off_lines(), 2977u);  // still counts every line
}

TEST(Screen, ScrollbackOfPlainFullWidthLinesKeepsItsTenThousandLines) {
  Screen screen(k80x24);
  const std::string line = std::string(80, 'x') + "\r\n";
  std::string lines;
  for (int i = 0; i < 10100; ++i) lines += line;
  screen.feed(lines);
  EXPECT_EQ(screen.snapshot(10000).scrollback.size(), 10000u);
}

TEST(Screen, AppendedScrollbackTakesThePen) {
  Screen screen(pty::TerminalSize{40, 3});
  screen.feed("\x1b[1;32m");
  screen.append_scrollback("green");
  screen.append_scrollback("");
  screen.feed("\x1b[0m");
  screen.append_scrollback("plain");
  EXPECT_EQ(screen.styled_scrollback(10),
            (std::vector<std::string>{"\x1b[0;1;32mgreen\x1b[0m", "", "plain"}));
  EXPECT_EQ(screen.snapshot(10).scrollback, (std::vector<std::string>{"green", "", "plain"}));
  EXPECT_EQ(screen.scrolled_off_lines(), 3u);
}

TEST(Screen, ScrollbackIsBounded) {
  Screen screen(pty::TerminalSize{40, 10}, 7);
  screen.feed(numbered_lines(1, 100));
  auto snap = screen.snapshot(1000);
  ASSERT_EQ(snap.scrollback.size(), 7u);
  EXPECT_EQ(snap.scrollback.back(), "line 91");
  EXPECT_EQ(screen.scrolled_off_lines(), 91u);  // counts what the store let go of too
}

TEST(Screen, AltScreenDoesNotFillScrollback) {
  Screen screen(pty::TerminalSize{40, 10});
  screen.feed("\x1b[?1049h" + numbered_lines(1, 30) + "\x1b[?1049l");
  EXPECT_TRUE(screen.snapshot(1000).scrollback.empty());
}

TEST(Screen, ResizeChangesSizeAndKeepsText) {
  Screen screen(k80x24);
  screen.feed("top line\r\nsecond");
  screen.resize(pty::TerminalSize{40, 10});
  auto snap = screen.snapshot();
  EXPECT_EQ(snap.cols, 40);
  EXPECT_EQ(snap.rows, 10);
  ASSERT_EQ(snap.lines.size(), 10u);
  EXPECT_EQ(snap.lines[0], "top line");
  EXPECT_EQ(snap.lines[1], "second");
  screen.feed("\r\n" + std::string(45, 'w'));  // wraps at the new width
  snap = screen.snapshot();
  EXPECT_EQ(snap.lines[2], std::string(40, 'w'));
  EXPECT_EQ(snap.lines[3], "wwwww");
}

void expect_same_screen(const Screen& a, const Screen& b) {
  auto sa = a.snapshot();
  auto sb = b.snapshot();
  EXPECT_EQ(sa.lines, sb.lines);
  EXPECT_EQ(sa.cursor.row, sb.cursor.row);
  EXPECT_EQ(sa.cursor.col, sb.cursor.col);
  EXPECT_EQ(sa.cursor.visible, sb.cursor.visible);
  EXPECT_EQ(sa.modes.alt_screen, sb.modes.alt_screen);
  EXPECT_EQ(sa.modes.application_cursor_keys, sb.modes.application_cursor_keys);
  EXPECT_EQ(sa.modes.bracketed_paste, sb.modes.bracketed_paste);
  EXPECT_EQ(sa.modes.mouse, sb.modes.mouse);
  EXPECT_EQ(sa.title, sb.title);
  // Same cells, attributes and colours: rendering both gives the same bytes.
  EXPECT_EQ(a.render_ansi(), b.render_ansi());
}

TEST(Screen, RenderAnsiReproducesTextAttributesCursorAndModes) {
  Screen screen(k80x24);
  screen.feed(
      "plain \x1b[1mbold\x1b[0m \x1b[3mitalic\x1b[0m \x1b[4munder\x1b[0m \x1b[7mrev\x1b[0m\r\n"
      "\x1b[31mred\x1b[0m \x1b[92mbright\x1b[0m \x1b[38;5;208morange\x1b[0m "
      "\x1b[38;2;10;20;30;48;2;200;100;50mrgb\x1b[0m \x1b[44mblue bg\x1b[0m\r\n"
      "\xe4\xb8\xad\xe6\x96\x87 wide\r\n"
      "\x1b[41m\x1b[K\x1b[0m\r\n"  // a row erased with a red background
      "\x1b[10;70Hcorner\x1b[24;75Hend!!\x1b[1;33m"
      "\x1b]2;my title\x07\x1b[?1h\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[?25l\x1b[12;34H");
  Screen copy(k80x24);
  copy.feed(screen.render_ansi());
  expect_same_screen(screen, copy);
  auto snap = copy.snapshot();
  EXPECT_EQ(snap.lines[0], "plain bold italic under rev");
  EXPECT_EQ(snap.cursor.row, 11);
  EXPECT_EQ(snap.cursor.col, 33);
  EXPECT_FALSE(snap.cursor.visible);
  EXPECT_TRUE(snap.modes.mouse);
}

TEST(Screen, StyledLinesShowWhereTheLookChanges) {
  Screen screen(k80x24);
  screen.feed(
      "  \x1b[7mapple\x1b[0m\r\n"  // a selected menu item
      "  \x1b[31mbanana\x1b[0m plain \x1b[1;4mbold\x1b[22m under\x1b[0m\r\n"
      "\x1b[38;5;208m256\x1b[38;2;1;2;3mrgb\x1b[0m\r\n"
      "\x1b[44m  \x1b[0m\r\n"  // blanks on a blue background show
      "\x1b[1m  \x1b[0m\r\n"   // bold blanks do not
      "\xe4\xb8\xad\x1b[7m\xe6\x96\x87\x1b[0m\r\n");
  auto styled = screen.styled_lines();
  ASSERT_EQ(styled.size(), 24u);
  EXPECT_EQ(styled[0], "  \x1b[0;7mapple\x1b[0m");
  EXPECT_EQ(styled[1], "  \x1b[0;31mbanana\x1b[0m plain \x1b[0;1;4mbold\x1b[0;4m under\x1b[0m");
  EXPECT_EQ(styled[2], "\x1b[0;38;5;208m256\x1b[0;38;2;1;2;3mrgb\x1b[0m");
  EXPECT_EQ(styled[3], "\x1b[0;44m  \x1b[0m");
  EXPECT_EQ(styled[4], "");
  EXPECT_EQ(styled[5], "\xe4\xb8\xad\x1b[0;7m\xe6\x96\x87\x1b[0m");
  EXPECT_EQ(styled[6], "");
}

TEST(Screen, RenderAnsiReproducesAltScreen) {
  Screen screen(k80x24);
  screen.feed("main\x1b[?1049h\x1b[H\x1b[2J\x1b[5;5H\x1b[32mfull screen app");
  Screen copy(k80x24);
  copy.feed(screen.render_ansi());
  expect_same_screen(screen, copy);
  EXPECT_TRUE(copy.snapshot().modes.alt_screen);
}

// `clear` ends with CSI 3 J, xterm's erase of the scrollback (xterm.js and
// tmux do it too; libvterm does not): the lines pushed before it go, those
// pushed after it stay.
TEST(Screen, EraseScrollbackDropsTheLinesScrolledOffBeforeIt) {
  Screen screen(pty::TerminalSize{20, 3});
  screen.feed("b1\r\nb2\r\nb3\r\nb4\r\nb5\r\n");
  ASSERT_EQ(screen.snapshot(10).scrollback.size(), 3u);
  screen.feed("\x1b[H\x1b[2J\x1b[3Ja1\r\na2\r\na3\r\na4");
  const ScreenSnapshot snapshot = screen.snapshot(10);
  EXPECT_EQ(snapshot.scrollback, std::vector<std::string>{"a1"});
  EXPECT_EQ(snapshot.lines, (std::vector<std::string>{"a2", "a3", "a4"}));
}

}  // namespace
}  // namespace agentty::session
