// ScreenFeeder drops repeats that change nothing: in a run of full-screen
// clears, scrollback clears, resets and cursor homes with no other byte in
// between, only the first of each kind reaches libvterm. Each costs libvterm
// the whole screen, so a program printing `\e[2J` or `\ec` flat out held the
// screen model for seconds per megabyte. The screen must stay exactly what
// feeding every byte gives, whatever surrounds the run and wherever it is cut.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "session/screen_feeder.hpp"
#include "support/repeated_text.hpp"

namespace agentty::session {
namespace {

constexpr pty::TerminalSize k120x40{120, 40};

using test_util::repeated;

// Feeds `bytes` in `chunk`-byte pieces through a feeder with small batches
// (so slices cut sequences anywhere) and directly; asserts they agree.
void expect_exact(const std::string& bytes, std::size_t chunk, pty::TerminalSize size,
                  std::uint64_t* dropped = nullptr) {
  ScreenFeeder feeder(size, 300, 1024);
  Screen direct(size, 300);
  std::string replies;
  for (std::size_t i = 0; i < bytes.size(); i += chunk) {
    feeder.on_output(std::string_view(bytes).substr(i, chunk));
    while (feeder.wants_turn()) feeder.catch_up_for(std::chrono::nanoseconds(0));
    replies += feeder.take_replies();
  }
  feeder.catch_up();
  direct.feed(bytes);
  const auto got = feeder.screen().snapshot(300);
  const auto want = direct.snapshot(300);
  ASSERT_EQ(got.lines, want.lines);
  ASSERT_EQ(got.cursor.row, want.cursor.row);
  ASSERT_EQ(got.cursor.col, want.cursor.col);
  ASSERT_EQ(got.cursor.visible, want.cursor.visible);
  ASSERT_EQ(got.modes.alt_screen, want.modes.alt_screen);
  ASSERT_EQ(got.title, want.title);
  ASSERT_TRUE(got.scrollback == want.scrollback);
  ASSERT_TRUE(feeder.screen().styled_scrollback(300) == direct.styled_scrollback(300));
  ASSERT_EQ(feeder.screen().render_ansi(), direct.render_ansi());
  ASSERT_EQ(replies, direct.take_replies());
  if (dropped) *dropped = feeder.stats().bytes_dropped;
}

TEST(ScreenFeederRepeats, AClearFloodCostsOneClear) {
  for (const std::string piece : {"\x1b[2J",
                                  "\x1b"
                                  "c",
                                  "\x1b[H\x1b[2J\x1b[3J", "\x1b#8"}) {
    const std::string flood = "text\r\n\x1b[44m" + repeated(piece, 1 << 20) + "after";
    ScreenFeeder feeder(k120x40);
    const auto started = std::chrono::steady_clock::now();
    feeder.on_output(flood);
    while (feeder.wants_turn()) feeder.catch_up_for(ScreenFeeder::kCatchUpBudget);
    feeder.catch_up();
    const auto took = std::chrono::steady_clock::now() - started;
    // Fed whole, a megabyte of these took libvterm 3-5 s.
    EXPECT_LT(took, std::chrono::milliseconds(500)) << piece.size();
    EXPECT_GT(feeder.stats().bytes_dropped, flood.size() * 9 / 10);
    EXPECT_FALSE(feeder.lagging());
    expect_exact("text\r\n\x1b[44m" + repeated(piece, 64 << 10) + "after", 4096 + 17, k120x40);
  }
}

// Between repeats, any other byte counts: text, a control, another
// sequence, a control inside a sequence, a cancelled sequence.
TEST(ScreenFeederRepeats, OnlyRepeatsWithNothingBetweenAreDropped) {
  struct Case {
    std::string bytes;
    std::uint64_t dropped;
  };
  const std::vector<Case> cases = {
      {"abc\x1b[2J\x1b[2J\x1b[2Jdef", 8},
      {"\x1b[2Jx\x1b[2Jy\x1b[2J", 0},
      {"1\r\n2\r\n3\r\n4\x1b[H\x1b[2J\n\x1b[2J\x1b[H", 0},
      {"ab\x1b[2J\x1b[\n2J\x1b[2J", 0},    // LF inside a CSI
      {"ab\x1b[2J\x1b[2\x18J\x1b[2J", 0},  // cancelled
      {"ab\x1b[2J\x1b[31m\x1b[2J", 0},
      {"ab\x1b[2J\x1b[H\x1b"
       "c\x1b[1;1H\x1b[f\x1b[2J\x1b"
       "cz",
       15},
      {"ab\x1b[2J\x1b[?2J\x1b[2;1H\x1b[1;2H\x1b[0;2J", 0},
      // DECALN repeats only directly after a DECALN: it does not commute.
      {"ab\x1b#8\x1b#8\x1b#8cd", 6},
      {"ab\x1b#8\x1b[2J\x1b#8\x1b[2J\x1b[H\x1b#8", 0},
      {"ab\x1b[31m\x1b#8\x1b[44m\x1b#8x\x1b#8", 0},
      // Not DECALN to libvterm (two intermediates), so not a DECALN before one.
      {"ab\x1b#!8\x1b#8\x1b# 8\x1b#8", 0},
      {"ab\x1b#8\x1b#\r8\x1b#8", 0},  // CR inside
  };
  for (const auto& [bytes, want] : cases) {
    SCOPED_TRACE(bytes);
    std::uint64_t dropped = 0;
    expect_exact(bytes, 64, {10, 4}, &dropped);
    EXPECT_EQ(dropped, want);
  }
}

// A repeat whose first bytes were already fed (cut by a read or a slice)
// is fed whole, never in part.
TEST(ScreenFeederRepeats, RepeatsCutAtEveryByte) {
  const std::string bytes =
      "hello\r\n\x1b[2J\x1b[2J\x1b[H\x1b[H\x1b"
      "c\x1b"
      "cworld";
  for (std::size_t chunk = 1; chunk <= bytes.size(); ++chunk) {
    expect_exact(bytes, chunk, {12, 5});
  }
}

// Random mixes of the operations and everything that may sit between them,
// cut anywhere: the screen, scrollback, modes, title and replies are always
// what feeding every byte gives. UTF-8 and the line-drawing charset are not
// mixed: libvterm 0.1 picks the charset for a whole write by its first byte,
// so `\e(0` then `\xc3\xa9h` draws `h` as ASCII in one write and as a
// line-drawing glyph in two, with or without the feeder.
TEST(ScreenFeederRepeats, RandomMixesAreExact) {
  const std::vector<std::string> common = {
      "\x1b[2J",
      "\x1b[2J",
      "\x1b[3J",
      "\x1b"
      "c",
      "\x1b"
      "c",
      "\x1b[H",
      "\x1b[1;1H",
      "\x1b[f",
      "\x1b[;H",
      "x",
      "hello world",
      "\r\n",
      "\n",
      "\r",
      "\b",
      "\t",
      "\x1b[31m",
      "\x1b[44m",
      "\x1b[m",
      "\x1b[3;5H",
      "\x1b[?1049h",
      "\x1b[?1049l",
      "\x1b[?6h",
      "\x1b[2;3r",
      "\x1b[r",
      "\x1b"
      "7",
      "\x1b"
      "8",
      "\x1bM",
      "\x1b"
      "D",
      "\x1b#8",
      "\x1b#8",
      "\x1b#!8",
      "\x1b]2;title\x07",
      "\x1b[6n",
      "\x1b[?25l",
      "\x1b[?25h",
      "\x1b[4h",
      "\x1b[4l",
      "\x1b[2",
      "J",
      "\x1b[",
      "\x18",
      "\x1b[0J",
      "\x1b[1J",
      "\x1b[K",
  };
  const std::vector<std::string> charsets = {"\x1b(0", "\x1b(B", "\x0e", "\x0f"};
  const std::vector<std::string> utf8 = {"\xc3\xa9", "\xe4\xb8\xad", "\xa9"};
  std::mt19937 rng(37);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> tokens = common;
    const auto& extra = round % 2 ? charsets : utf8;
    tokens.insert(tokens.end(), extra.begin(), extra.end());
    std::string bytes;
    const int count = 20 + static_cast<int>(rng() % 200);
    for (int i = 0; i < count; ++i) {
      const std::string& token = tokens[rng() % tokens.size()];
      const int times = rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 5) : 1;
      for (int t = 0; t < times; ++t) bytes += token;
    }
    const std::size_t chunk = 1 + rng() % 64;
    const pty::TerminalSize size{static_cast<std::uint16_t>(5 + rng() % 20),
                                 static_cast<std::uint16_t>(3 + rng() % 8)};
    SCOPED_TRACE("round " + std::to_string(round));
    expect_exact(bytes, chunk, size);
  }
}

}  // namespace
}  // namespace agentty::session
