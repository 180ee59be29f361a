// ScreenFeeder's pacing: a catch-up that output starts stops at its budget
// however slow libvterm is on the bytes, measures that cost, and the screen
// is exact whatever the cuts.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "base/thread_cpu_time.hpp"
#include "session/screen_feeder.hpp"
#include "support/repeated_text.hpp"

namespace agentty::session {
namespace {

constexpr pty::TerminalSize k120x40{120, 40};

using test_util::repeated;

// A megabyte of full-screen clears took libvterm 4-8 s in one on_output, all
// of it on the event loop. Now on_output stops after about its budget (the
// bound is loose: a loaded machine may stretch one slice), and the queue
// left is known to be slow.
TEST(ScreenFeederPacing, ClearFloodIsCutShortAndLagging) {
  const std::string flood = repeated("\x1b[2J\x1b[Hx", 1 << 20);
  ScreenFeeder feeder(k120x40);
  const auto started = std::chrono::steady_clock::now();
  feeder.on_output(flood);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, std::chrono::milliseconds(500));
  EXPECT_TRUE(feeder.cut_short());
  EXPECT_TRUE(feeder.lagging());
  EXPECT_TRUE(feeder.behind());
}

// Sequences that may rewrite the whole screen start a catch-up long before
// catch_up_bytes, so a slow kind is measured while the queue is still
// small; colours and cursor moves do not (output full of them, nobody
// looking, makes no screen).
TEST(ScreenFeederPacing, ScreenWideSequencesStartACatchUp) {
  ScreenFeeder coloured(k120x40);
  coloured.on_output(repeated("\x1b[31mred\x1b[m\x1b[K\x1b[1;1H\r\n", 64 * 1024));
  EXPECT_TRUE(coloured.behind());
  EXPECT_FALSE(coloured.has_screen());

  ScreenFeeder cleared(k120x40);
  const auto wide = static_cast<std::size_t>(ScreenFeeder::kCatchUpScreenWide);
  cleared.on_output(repeated("\x1b[2J", 4 * (wide - 1)));
  EXPECT_TRUE(cleared.behind());
  EXPECT_FALSE(cleared.has_screen());
  cleared.on_output("\x1b[?1049h");
  EXPECT_FALSE(cleared.behind());
  EXPECT_FALSE(cleared.cut_short());
}

// What a plain flood of 32 output calls of 64 KiB left the owner with:
// after how many calls the feeder was lagging, and after how many the room
// before lag was less than a whole read.
struct PlainFloodPace {
  int lagging_calls = 0;
  int cramped_calls = 0;
  ScreenFeederStats stats;
};

// Plays the flood the way an Execution does: between output calls, a
// catch-up cut short goes on in the owner's turns (schedule_screen_pace).
PlainFloodPace play_plain_flood() {
  ScreenFeeder feeder(k120x40);
  PlainFloodPace pace;
  for (int i = 0; i < 32; ++i) {
    feeder.on_output(repeated("plain text line\r\n", 64 * 1024));
    if (feeder.lagging()) ++pace.lagging_calls;
    if (feeder.bytes_before_lag() < 64 * 1024) ++pace.cramped_calls;
    while (feeder.wants_turn()) feeder.catch_up_for(ScreenFeeder::kCatchUpBudget);
  }
  feeder.catch_up();  // ends the skip, which counts what it skipped
  pace.stats = feeder.stats();
  return pace;
}

// Plain text costs libvterm little (the simulator takes floods): a flood of
// it is not lagging, so the program is not slowed. The cost is measured per
// catch-up, so one that pays a one-time cost (the Screen made, the head fed)
// or is cut short on a loaded machine may measure slow until the owner's
// next turn measures again; fed to libvterm instead, about half the calls
// lag.
TEST(ScreenFeederPacing, PlainFloodIsNotLagging) {
  const PlainFloodPace pace = play_plain_flood();
  EXPECT_GT(pace.stats.bytes_skipped, 30u * 64 * 1024);
  EXPECT_LE(pace.lagging_calls, 2);
}

// A catch-up of newly queued screen-wide sequences starts small whatever
// the latest one measured: after plain text (cheap), a first 16 KiB slice of
// alignment tests took libvterm 160-240 ms, all of it on the event loop.
// Counted in CPU time, which other load does not stretch.
TEST(ScreenFeederPacing, ACatchUpProbesTheCostOfScreenWideSequences) {
  ScreenFeeder feeder(k120x40);
  for (int i = 0; i < 20; ++i) {
    feeder.on_output(repeated("plain text line\r\n", 64 * 1024));
    while (feeder.wants_turn()) feeder.catch_up_for(ScreenFeeder::kCatchUpBudget);
  }
  ASSERT_GE(feeder.bytes_before_lag(), 256u * 1024);  // measured cheap
  const auto started = thread_cpu_time();
  feeder.on_output(repeated("\x1b#8x", 64 * 1024));
  const auto cpu = thread_cpu_time() - started;
  EXPECT_TRUE(feeder.cut_short());
  EXPECT_LT(cpu, std::chrono::milliseconds(80));
}

// While a catch-up is cut short its owner goes on with it in the next turn
// of the loop: more output only queues (a budget spent per output call held
// the loop for 16 x 10 ms a turn), and the room left before lagging, the
// owner's output slice, is none.
TEST(ScreenFeederPacing, OutputWhileCutShortOnlyQueues) {
  ScreenFeeder feeder(k120x40);
  EXPECT_EQ(feeder.bytes_before_lag(), std::string::npos);  // nothing measured yet
  feeder.on_output(repeated("\x1b[2J\x1b[Hx", 1 << 20));
  ASSERT_TRUE(feeder.cut_short());
  const auto fed = feeder.stats().bytes_fed;
  feeder.on_output(repeated("\x1b[2J", 64 * 1024) + "\x1b[6n");
  EXPECT_EQ(feeder.stats().bytes_fed, fed);
  EXPECT_EQ(feeder.bytes_before_lag(), 0u);
  feeder.catch_up();
  EXPECT_EQ(feeder.take_replies(), "\x1b[1;2R");  // after the first flood's "\x1b[Hx"
  // Caught up, the room is what the measured cost allows in kMaxLag: a
  // clear flood's is far below a whole read, plain text's far above.
  EXPECT_GT(feeder.bytes_before_lag(), 0u);
  EXPECT_LT(feeder.bytes_before_lag(), 1u << 20);
}

// Output starts one catch-up per turn of its owner. An SSH connection hands
// out many packets in one handler: a flood of reverse indexes at the top
// (each scrolls the whole screen) came in ~4 KB packets, each catch-up
// finished within its budget, and 64 of them held the loop for 0.34 s while
// the flood was never lagging, so its channel never paused. Now the packets
// after the first only queue, and the queue shows the flood lagging.
TEST(ScreenFeederPacing, OutputGetsOneCatchUpPerTurn) {
  ScreenFeeder feeder(k120x40);
  const std::string packet = repeated("\x1bM", 4096);
  feeder.on_output(packet);
  ASSERT_TRUE(feeder.wants_turn());
  const auto fed = feeder.stats().bytes_fed;
  EXPECT_GT(fed, 0u);
  for (int i = 0; i < 63; ++i) feeder.on_output(packet);
  EXPECT_EQ(feeder.stats().bytes_fed, fed);
  EXPECT_TRUE(feeder.lagging());
  EXPECT_EQ(feeder.bytes_before_lag(), 0u);
  // The owner's turn goes on with it, and output may start a catch-up again
  // once the owner has caught up.
  while (feeder.wants_turn()) feeder.catch_up_for(ScreenFeeder::kCatchUpBudget);
  EXPECT_FALSE(feeder.behind());
  feeder.on_output(packet);
  EXPECT_GT(feeder.stats().bytes_fed, 64u * packet.size());
}

TEST(ScreenFeederPacing, PlainTextLeavesRoomForWholeReads) {
  EXPECT_LE(play_plain_flood().cramped_calls, 2);
}

// Budgets of nothing cut after every slice: each call still makes progress,
// and the screen ends where feeding everything at once leaves it, with the
// query among the clears answered once it is reached.
TEST(ScreenFeederPacing, CutsAnywhereLeaveTheScreenExact) {
  std::string text = repeated("\x1b[2J\x1b[Hframe\r\n\x1b[31mred\x1b[m\r\n", 200 * 1024);
  text += "\x1b[6nlast line";
  ScreenFeeder feeder(k120x40, 100, 4096);
  feeder.on_output(text);
  int calls = 0;
  while (feeder.wants_turn()) {
    feeder.catch_up_for(std::chrono::nanoseconds(0));
    ASSERT_LT(++calls, 1000);
  }
  EXPECT_GT(calls, 0);
  EXPECT_EQ(feeder.take_replies(), "\x1b[3;1R");
  feeder.catch_up();
  Screen direct(k120x40, 100);
  direct.feed(text);
  EXPECT_EQ(feeder.screen().render_ansi(), direct.render_ansi());
  EXPECT_EQ(feeder.screen().snapshot().lines, direct.snapshot().lines);
}

}  // namespace
}  // namespace agentty::session
