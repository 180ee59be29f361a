#include "web/viewer_queue.hpp"

#include <gtest/gtest.h>

namespace agentty::web {
namespace {

std::shared_ptr<const std::string> chunk(std::size_t size, char c = 'x') {
  return std::make_shared<const std::string>(size, c);
}

TEST(ViewerQueue, QueuesOutputUpToTheBound) {
  ViewerQueue queue(1000);
  EXPECT_TRUE(queue.push_output(chunk(400)));
  EXPECT_TRUE(queue.push_output(chunk(600)));
  EXPECT_EQ(queue.queued_output_bytes(), 1000u);
  EXPECT_FALSE(queue.resync_needed());
  EXPECT_EQ(queue.pop().bytes->size(), 400u);
  EXPECT_EQ(queue.queued_output_bytes(), 600u);
}

TEST(ViewerQueue, OverflowDropsOutputAndAsksForResync) {
  ViewerQueue queue(1000);
  queue.push_control("{\"type\":\"state\"}");
  ASSERT_TRUE(queue.push_output(chunk(900)));
  EXPECT_FALSE(queue.push_output(chunk(200)));  // would exceed 1000
  EXPECT_TRUE(queue.resync_needed());
  EXPECT_EQ(queue.overflow_count(), 1u);
  EXPECT_EQ(queue.queued_output_bytes(), 0u);
  // The control message survives; the output is gone.
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_FALSE(queue.front().binary);
  // Until the resync, later output is dropped too: the snapshot covers it.
  EXPECT_FALSE(queue.push_output(chunk(10)));
  EXPECT_EQ(queue.queued_output_bytes(), 0u);
}

TEST(ViewerQueue, ASnapshotEndsTheResyncAndReplacesQueuedOutput) {
  ViewerQueue queue(1000);
  ASSERT_TRUE(queue.push_output(chunk(900)));
  EXPECT_FALSE(queue.push_output(chunk(900)));
  queue.push_snapshot("{\"type\":\"snapshot\"}", "\x1b[H\x1b[2Jscreen");
  EXPECT_FALSE(queue.resync_needed());
  ASSERT_EQ(queue.size(), 2u);
  auto header = queue.pop();
  EXPECT_FALSE(header.binary);
  EXPECT_EQ(*header.bytes, "{\"type\":\"snapshot\"}");
  auto redraw = queue.pop();
  EXPECT_TRUE(redraw.binary);
  EXPECT_EQ(*redraw.bytes, "\x1b[H\x1b[2Jscreen");
  // Live output flows again after the snapshot.
  EXPECT_TRUE(queue.push_output(chunk(10)));
}

TEST(ViewerQueue, MemoryStaysBoundedForAViewerThatNeverReads) {
  ViewerQueue queue(64 * 1024);
  auto shared = chunk(4096);
  std::size_t accepted = 0;
  for (int i = 0; i < 100000; ++i) accepted += queue.push_output(shared) ? 1 : 0;
  EXPECT_LE(queue.queued_output_bytes(), 64u * 1024);
  EXPECT_EQ(accepted, 16u);  // 16 x 4 KiB fit, then it overflows and waits for a resync
  EXPECT_TRUE(queue.resync_needed());
  // Shared frames: one copy of the chunk however many viewers queue it.
  EXPECT_EQ(shared.use_count(), 1);
}

TEST(ViewerQueue, ControlFramesCanBeTakenFromBehindOutput) {
  ViewerQueue queue(1000);
  EXPECT_FALSE(queue.pop_control_behind_output());  // empty
  queue.push_control("{\"type\":\"state\"}");
  ASSERT_TRUE(queue.push_output(chunk(10)));
  EXPECT_FALSE(queue.pop_control_behind_output());  // the front is control: pop() sends it
  queue.pop();
  queue.push_control("{\"type\":\"refused\"}");
  ASSERT_TRUE(queue.push_output(chunk(20)));
  auto control = queue.pop_control_behind_output();
  ASSERT_TRUE(control);
  EXPECT_EQ(*control->bytes, "{\"type\":\"refused\"}");
  EXPECT_FALSE(queue.pop_control_behind_output());
  // The output stays, in order.
  ASSERT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.pop().bytes->size(), 10u);
  EXPECT_EQ(queue.pop().bytes->size(), 20u);
  // A snapshot's redraw at the front is not output: its header is never split off.
  queue.push_snapshot("{\"type\":\"snapshot\"}", "redraw");
  queue.pop();
  queue.push_control("{\"type\":\"state\"}");
  EXPECT_FALSE(queue.pop_control_behind_output());
}

TEST(ViewerQueue, TooManyControlFramesIsReported) {
  ViewerQueue queue(1000);
  for (std::size_t i = 0; i < ViewerQueue::kMaxControlFrames; ++i) queue.push_control("{}");
  EXPECT_FALSE(queue.control_overflow());
  queue.push_control("{}");
  EXPECT_TRUE(queue.control_overflow());
  queue.pop();
  EXPECT_FALSE(queue.control_overflow());
}

}  // namespace
}  // namespace agentty::web
