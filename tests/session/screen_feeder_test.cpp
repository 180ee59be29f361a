#include "session/screen_feeder.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace agentty::session {
namespace {

constexpr pty::TerminalSize k80x24{80, 24};

// Plain text meant to hit every rule of the skip path: lines shorter than,
// exactly as wide as and wider than the screen; CR LF, bare LF (pending wrap
// kept at the bottom row), bare CR (overwrite), empty lines.
std::string random_plain_text(std::size_t bytes, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out;
  out.reserve(bytes + 4096);
  while (out.size() < bytes) {
    int shape = static_cast<int>(rng() % 10);
    int length = shape == 0   ? 0
                 : shape == 1 ? cols
                 : shape == 2 ? cols * 2
                 : shape == 3 ? static_cast<int>(rng() % (3 * cols))
                              : static_cast<int>(rng() % cols);
    for (int i = 0; i < length; ++i) out += static_cast<char>(0x20 + rng() % 95);
    int ending = static_cast<int>(rng() % 20);
    out += ending == 0 ? "\n" : ending == 1 ? "\r" : "\r\n";
  }
  return out;
}

void feed_in_chunks(ScreenFeeder& feeder, std::string_view bytes, std::size_t chunk) {
  for (std::size_t i = 0; i < bytes.size(); i += chunk) feeder.on_output(bytes.substr(i, chunk));
  feeder.catch_up();
}

// The feeder must leave exactly what feeding every byte through libvterm does.
void expect_same_as_direct(std::string_view bytes, pty::TerminalSize size, bool expect_skips) {
  ScreenFeeder feeder(size, 5000);
  feed_in_chunks(feeder, bytes, 4096 + 17);
  Screen direct(size, 5000);
  direct.feed(bytes);
  auto got = feeder.screen().snapshot(5000);
  auto want = direct.snapshot(5000);
  EXPECT_EQ(got.lines, want.lines);
  EXPECT_EQ(got.cursor.row, want.cursor.row);
  EXPECT_EQ(got.cursor.col, want.cursor.col);
  EXPECT_EQ(got.scrollback.size(), want.scrollback.size());
  EXPECT_TRUE(got.scrollback == want.scrollback);
  EXPECT_EQ(feeder.screen().render_ansi(), direct.render_ansi());
  EXPECT_EQ(feeder.stats().skip_mismatches, 0u);
  if (expect_skips) {
    EXPECT_GT(feeder.stats().skips, 0u);
    EXPECT_GT(feeder.stats().bytes_skipped, bytes.size() / 2);
  } else {
    EXPECT_EQ(feeder.stats().skips, 0u);
  }
}

TEST(ScreenFeeder, QueryIsAnsweredWithoutCatchUp) {
  ScreenFeeder feeder(k80x24);
  feeder.on_output("text\x1b[6n");
  EXPECT_EQ(feeder.take_replies(), "\x1b[1;5R");
  EXPECT_FALSE(feeder.behind());
}

TEST(ScreenFeeder, QuerySplitAcrossChunksIsAnsweredWhenComplete) {
  ScreenFeeder feeder(k80x24);
  feeder.on_output("\x1b[");
  EXPECT_EQ(feeder.take_replies(), "");
  feeder.on_output("c");
  EXPECT_NE(feeder.take_replies(), "");
  feeder.on_output("\x1bP$");
  feeder.on_output("qm\x1b");
  EXPECT_EQ(feeder.take_replies(), "");
  feeder.on_output("\\");
  EXPECT_NE(feeder.take_replies(), "");  // DECRQSS answered
}

TEST(ScreenFeeder, PlainOutputWaitsForCatchUp) {
  ScreenFeeder feeder(k80x24);
  feeder.on_output("hello");
  EXPECT_TRUE(feeder.behind());
  feeder.catch_up();
  EXPECT_FALSE(feeder.behind());
  EXPECT_EQ(feeder.screen().snapshot().lines[0], "hello");
}

// Plain text nobody looks at never pays for a libvterm screen; a query, or a
// look, makes one with everything so far on it.
TEST(ScreenFeeder, ScreenIsMadeOnlyWhenNeeded) {
  ScreenFeeder plain(k80x24);
  plain.on_output("hi\r\n");
  EXPECT_EQ(plain.take_replies(), "");
  EXPECT_FALSE(plain.has_screen());
  plain.resize(pty::TerminalSize{100, 30});
  EXPECT_TRUE(plain.has_screen());  // the queued line was printed at 80x24

  ScreenFeeder idle(k80x24);
  idle.resize(pty::TerminalSize{100, 30});
  EXPECT_FALSE(idle.has_screen());
  idle.on_output("one\r\ntwo");
  EXPECT_FALSE(idle.has_screen());
  idle.catch_up();
  EXPECT_TRUE(idle.has_screen());
  auto snap = idle.screen().snapshot();
  EXPECT_EQ(snap.cols, 100);
  EXPECT_EQ(snap.rows, 30);
  EXPECT_EQ(snap.lines[0], "one");
  EXPECT_EQ(snap.cursor.col, 3);

  ScreenFeeder queried(k80x24);
  queried.on_output("ab\x1b[6n");
  EXPECT_TRUE(queried.has_screen());
  EXPECT_EQ(queried.take_replies(), "\x1b[1;3R");
}

TEST(ScreenFeeder, LargeBacklogIsFedWithoutCatchUp) {
  ScreenFeeder feeder(k80x24);
  std::string text = random_plain_text(ScreenFeeder::kCatchUpBytes + 10, 80, 1);
  feeder.on_output(text);
  EXPECT_FALSE(feeder.behind());
}

TEST(ScreenFeeder, ResizeCatchesUpFirst) {
  ScreenFeeder feeder(k80x24);
  feeder.on_output(std::string(60, 'x'));
  feeder.resize(pty::TerminalSize{40, 10});
  auto snap = feeder.screen().snapshot();
  EXPECT_EQ(snap.cols, 40);
  // Fed at 80 columns (one row, then cut by the resize: libvterm does not
  // reflow); fed after the resize it would have wrapped onto a second row.
  EXPECT_EQ(snap.lines[0], std::string(40, 'x'));
  EXPECT_EQ(snap.lines[1], "");
}

TEST(ScreenFeeder, SkipPathEqualsDirectFeedAt80x24) {
  expect_same_as_direct(random_plain_text(3 << 20, 80, 7), k80x24, true);
}

TEST(ScreenFeeder, SkipPathEqualsDirectFeedOnTinyAndWideScreens) {
  expect_same_as_direct(random_plain_text(1 << 20, 7, 11), pty::TerminalSize{7, 3}, true);
  expect_same_as_direct(random_plain_text(2 << 20, 200, 12), pty::TerminalSize{200, 50}, true);
}

TEST(ScreenFeeder, SkipPathAfterColouredAndWideOutput) {
  // The run starts mid-line with a coloured pen (erased rows take its
  // background) and stale wide characters on screen.
  std::string bytes = "\x1b[44;33m\xe4\xb8\xad\xe6\x96\x87 wide\r\n\x1b[5;10Hpartial ";
  bytes += random_plain_text(3 << 20, 80, 3);
  bytes += "\x1b[0mend\r\n\xe4\xb8\xad";
  expect_same_as_direct(bytes, k80x24, true);
}

TEST(ScreenFeeder, NoSkipOnAltScreenOrWithScrollRegion) {
  std::string text = random_plain_text(512 << 10, 80, 5);
  expect_same_as_direct("\x1b[?1049h" + text, k80x24, false);
  expect_same_as_direct("\x1b[3;20r" + text, k80x24, false);
}

TEST(ScreenFeeder, NoSkipWithLineDrawingCharsetOrInsertMode) {
  std::string text = random_plain_text(512 << 10, 80, 6);
  expect_same_as_direct("\x1b(0" + text, k80x24, false);
  expect_same_as_direct("\x0e" + text, k80x24, false);
  expect_same_as_direct("\x1b[4h" + text, k80x24, false);
  // Back to normal: skipping resumes.
  expect_same_as_direct("\x1b(0x\x1b(B\x1b[4h\x1b[4l" + text, k80x24, true);
}

TEST(ScreenFeeder, TextInsideAnUnterminatedOscIsNotSkipped) {
  std::string text = random_plain_text(512 << 10, 80, 8);
  expect_same_as_direct("\x1b]2;" + text + "\x07tail", k80x24, false);
}

}  // namespace
}  // namespace agentty::session
