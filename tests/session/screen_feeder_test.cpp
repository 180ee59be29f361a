#include "session/screen_feeder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

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
  // With the program's colours too (what a viewer's history shows).
  EXPECT_TRUE(feeder.screen().styled_scrollback(5000) == direct.styled_scrollback(5000));
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

// Between output calls the owner takes its turn (schedule_screen_pace): a
// query that comes after output had its catch-up is answered there.
TEST(ScreenFeeder, QuerySplitAcrossChunksIsAnsweredWhenComplete) {
  ScreenFeeder feeder(k80x24);
  const auto output = [&feeder](std::string_view bytes) {
    feeder.on_output(bytes);
    while (feeder.wants_turn()) feeder.catch_up_for(ScreenFeeder::kCatchUpBudget);
    return feeder.take_replies();
  };
  EXPECT_EQ(output("\x1b["), "");
  EXPECT_NE(output("c"), "");
  EXPECT_EQ(output("\x1bP$"), "");
  EXPECT_EQ(output("qm\x1b"), "");
  EXPECT_NE(output("\\"), "");  // DECRQSS answered
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

// At the end of output an unmade screen lets go of its queue (the caller
// feeds its log again before a look); a made one is left exact and frozen,
// with no skip holding scrolled-off rows twice.
TEST(ScreenFeeder, FinishLetsGoOfTheQueueOrCatchesUp) {
  const std::string text = "one\r\ntwo\x1b[1mbold\x1b[m";
  ScreenFeeder unmade(k80x24);
  unmade.on_output(text);
  EXPECT_TRUE(unmade.finish());
  EXPECT_FALSE(unmade.behind());
  EXPECT_FALSE(unmade.has_screen());
  unmade.on_output(text);  // as Execution::refeed_screen() does
  unmade.catch_up();
  Screen direct(k80x24);
  direct.feed(text);
  EXPECT_EQ(unmade.screen().render_ansi(), direct.render_ansi());

  ScreenFeeder flooded(k80x24);
  const std::string flood = random_plain_text(ScreenFeeder::kCatchUpBytes + 4096, 80, 2);
  flooded.on_output(flood);
  ASSERT_TRUE(flooded.has_screen());
  EXPECT_TRUE(flooded.behind());  // a skip in progress
  EXPECT_FALSE(flooded.finish());
  EXPECT_FALSE(flooded.behind());
  EXPECT_TRUE(flooded.screen().frozen());  // libvterm's cells are gone, the looks stay
  Screen all(k80x24, 10000);
  all.feed(flood);
  EXPECT_EQ(flooded.screen().snapshot().lines, all.snapshot().lines);
}

// A backlog of a batch is worked off without anyone looking: what a look
// then costs is a few screenfuls, not the backlog.
TEST(ScreenFeeder, LargeBacklogIsFedWithoutCatchUp) {
  ScreenFeeder feeder(k80x24);
  std::string text = random_plain_text(ScreenFeeder::kCatchUpBytes + 10, 80, 1);
  feeder.on_output(text);
  EXPECT_TRUE(feeder.has_screen());
  const auto fed_before_look = feeder.stats().bytes_fed;
  feeder.catch_up();
  EXPECT_FALSE(feeder.behind());
  EXPECT_LT(feeder.stats().bytes_fed - fed_before_look, 16u * 1024);
  EXPECT_EQ(feeder.stats().skips, 1u);
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
  // The run starts mid-line with a coloured, bold pen (the lines it stores
  // keep it) and stale wide characters on screen.
  std::string bytes = "\x1b[1;33m\xe4\xb8\xad\xe6\x96\x87 wide\r\n\x1b[5;10Hpartial ";
  bytes += random_plain_text(3 << 20, 80, 3);
  bytes += "\x1b[0mend\r\n\xe4\xb8\xad";
  expect_same_as_direct(bytes, k80x24, true);
}

TEST(ScreenFeeder, NoSkipWithABackgroundPen) {
  // Erased rows take the pen's background: libvterm draws those lines.
  std::string text = random_plain_text(512 << 10, 80, 4);
  expect_same_as_direct("\x1b[44;33m\xe4\xb8\xad wide\r\n" + text, k80x24, false);
  expect_same_as_direct("\x1b[7m" + text, k80x24, false);
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

// --- A skip carried across batches (the simulator stays on between them). ---

// Feeds `pieces` in order to a feeder with small batches, answering queries
// as they come, and to libvterm directly; the two must agree in every way the
// Screen shows, including every reply. `resize_before` lists piece indexes
// before which both are resized to `resized`.
struct FloodCase {
  pty::TerminalSize size{10, 4};
  std::size_t catch_up_bytes = 300;
  std::size_t scrollback = 200;
  std::vector<std::size_t> resize_before;
  pty::TerminalSize resized{13, 5};
};

void expect_carried_flood_exact(const std::vector<std::string>& pieces, const FloodCase& c,
                                std::uint64_t min_skips = 0) {
  ScreenFeeder feeder(c.size, c.scrollback, c.catch_up_bytes);
  Screen direct(c.size, c.scrollback);
  std::string got_replies;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (std::find(c.resize_before.begin(), c.resize_before.end(), i) != c.resize_before.end()) {
      feeder.resize(c.resized);
      direct.resize(c.resized);
    }
    feeder.on_output(pieces[i]);
    // The owner's turns, each cut after a slice (Execution::schedule_screen_pace).
    while (feeder.wants_turn()) feeder.catch_up_for(std::chrono::nanoseconds(0));
    got_replies += feeder.take_replies();
    direct.feed(pieces[i]);
  }
  feeder.catch_up();
  EXPECT_FALSE(feeder.behind());
  auto got = feeder.screen().snapshot(c.scrollback);
  auto want = direct.snapshot(c.scrollback);
  ASSERT_EQ(got.lines, want.lines);
  ASSERT_EQ(got.cursor.row, want.cursor.row);
  ASSERT_EQ(got.cursor.col, want.cursor.col);
  ASSERT_TRUE(got.scrollback == want.scrollback);
  ASSERT_TRUE(feeder.screen().styled_scrollback(c.scrollback) ==
              direct.styled_scrollback(c.scrollback));
  ASSERT_EQ(feeder.screen().render_ansi(), direct.render_ansi());
  ASSERT_EQ(got_replies, direct.take_replies());
  ASSERT_EQ(feeder.stats().skip_mismatches, 0u);
  ASSERT_GE(feeder.stats().skips, min_skips);
}

// A flood split in two at every byte: the first part starts a skip (the batch
// ends inside the run), the second goes on in the simulator.
TEST(ScreenFeederFlood, SplitAtEveryByte) {
  const std::string head = "\x1b[1;33mstart\r\n";  // the stored lines keep the pen
  const std::string text = random_plain_text(1500, 10, 21);
  for (std::size_t at = 0; at <= text.size(); ++at) {
    expect_carried_flood_exact({head, text.substr(0, at), text.substr(at), "\x1b[0m$ "}, {}, 0);
  }
  // And in pieces of every size from 1 to 97 bytes.
  for (std::size_t piece = 1; piece < 98; ++piece) {
    std::vector<std::string> pieces{head};
    for (std::size_t i = 0; i < text.size(); i += piece) pieces.push_back(text.substr(i, piece));
    expect_carried_flood_exact(pieces, {}, 1);
  }
}

// Someone looks at the screen mid-flood: it must be exact then, and the flood
// goes on exactly.
TEST(ScreenFeederFlood, LookAtTheScreenAnywhereMidFlood) {
  const std::string text = random_plain_text(1200, 10, 22);
  const pty::TerminalSize size{10, 4};
  for (std::size_t at = 0; at <= text.size(); at += 7) {
    ScreenFeeder feeder(size, 200, 300);
    Screen direct(size, 200);
    feeder.on_output(text.substr(0, at));
    direct.feed(text.substr(0, at));
    feeder.catch_up();
    ASSERT_EQ(feeder.screen().render_ansi(), direct.render_ansi()) << at;
    ASSERT_TRUE(feeder.screen().snapshot(200).scrollback == direct.snapshot(200).scrollback);
    feeder.on_output(text.substr(at));
    direct.feed(text.substr(at));
    feeder.catch_up();
    ASSERT_EQ(feeder.screen().render_ansi(), direct.render_ansi()) << at;
    ASSERT_TRUE(feeder.screen().snapshot(200).scrollback == direct.snapshot(200).scrollback);
    ASSERT_EQ(feeder.stats().skip_mismatches, 0u);
    if (at >= 600) {
      ASSERT_GE(feeder.stats().skips, 1u) << at;  // the look ended a skip
    }
  }
}

// The flood is cut by something that is not plain text, at many places and
// split across pieces anywhere: the skip must end exactly before it.
TEST(ScreenFeederFlood, InterruptedByEscapesQueriesAndControls) {
  const std::vector<std::string> interruptions = {"\x1b[31m",
                                                  "\x1b[6n",
                                                  "\xc3\xa9",
                                                  "\x1b(0qq\x1b(B",
                                                  "\t",
                                                  "\b\b",
                                                  "\x1b[2;3r",
                                                  "\x1b[r",
                                                  "\x1b[4hins\x1b[4l",
                                                  "\x1b[?1049hA\x1b[?1049l",
                                                  "\x1b]2;title\x07",
                                                  "\x1b[5n",
                                                  "\x1b[H",
                                                  "\x1b[?7l"
                                                  "nowrap-line-long\x1b[?7h"};
  const std::string text = random_plain_text(2400, 10, 23);
  for (std::size_t k = 0; k < interruptions.size(); ++k) {
    for (std::size_t at = 350; at < text.size(); at += 97 + k) {
      std::string bytes = text.substr(0, at) + interruptions[k] + text.substr(at);
      for (std::size_t piece : {64u, 301u, 1000u}) {
        std::vector<std::string> pieces;
        for (std::size_t i = 0; i < bytes.size(); i += piece)
          pieces.push_back(bytes.substr(i, piece));
        // Pieces smaller than a batch start the skip before the interruption.
        expect_carried_flood_exact(pieces, {}, piece < 300 ? 1 : 0);
      }
    }
  }
}

TEST(ScreenFeederFlood, ResizedMidFlood) {
  const std::string text = random_plain_text(2000, 10, 24);
  for (std::size_t at = 0; at < text.size(); at += 37) {
    FloodCase c;
    c.resize_before = {1};
    expect_carried_flood_exact({text.substr(0, at), text.substr(at)}, c);
    c.resized = pty::TerminalSize{6, 3};
    expect_carried_flood_exact({text.substr(0, at), text.substr(at)}, c);
  }
}

// Text with few CRs: what a skip keeps to hand back stays bounded (the skip
// ends and a new one starts), and the result is still exact.
TEST(ScreenFeederFlood, FewCarriageReturns) {
  std::string text;
  for (int i = 0; i < 400; ++i) {
    text += "line " + std::to_string(i) + (i % 150 == 0 ? "\r\n" : "\n");
  }
  std::vector<std::string> pieces;
  for (std::size_t i = 0; i < text.size(); i += 50) pieces.push_back(text.substr(i, 50));
  expect_carried_flood_exact(pieces, {});
  // A CR every 32 lines: each skip ends when its kept tail outgrows a batch.
  text.clear();
  for (int i = 0; i < 1000; ++i)
    text += "line " + std::to_string(i) + (i % 32 == 0 ? "\r\n" : "\n");
  pieces.clear();
  for (std::size_t i = 0; i < text.size(); i += 50) pieces.push_back(text.substr(i, 50));
  expect_carried_flood_exact(pieces, {}, 2);
  std::string lf_only = "\r\n";
  for (int i = 0; i < 400; ++i) lf_only += "lf " + std::to_string(i) + "\n";
  expect_carried_flood_exact({lf_only}, {});
}

// The point of carrying the simulator: a long flood is one skip, whatever the
// number of batches, and libvterm sees only a few screenfuls of it.
TEST(ScreenFeederFlood, LongFloodIsOneSkip) {
  const std::string text = random_plain_text(6 << 20, 80, 25);
  ScreenFeeder feeder(k80x24, 1000);
  for (std::size_t i = 0; i < text.size(); i += 64 * 1024)
    feeder.on_output(text.substr(i, 64 * 1024));
  EXPECT_TRUE(feeder.behind());
  feeder.catch_up();
  EXPECT_EQ(feeder.stats().skips, 1u);
  EXPECT_LT(feeder.stats().bytes_fed, 64u * 1024);
  EXPECT_EQ(feeder.stats().skip_mismatches, 0u);
  Screen direct(k80x24, 1000);
  direct.feed(text);
  EXPECT_EQ(feeder.screen().render_ansi(), direct.render_ansi());
  EXPECT_TRUE(feeder.screen().snapshot(1000).scrollback == direct.snapshot(1000).scrollback);
}

}  // namespace
}  // namespace agentty::session
