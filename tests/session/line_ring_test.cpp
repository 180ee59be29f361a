#include "session/line_ring.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace agentty::session {
namespace {

TEST(LineRing, KeepsLinesInOrderWithTheirBytes) {
  LineRing ring;
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.front(), "");
  ring.push_back("one");
  ring.push_back("");
  ring.push_back("three");
  EXPECT_EQ(ring.size(), 3u);
  EXPECT_EQ(ring.bytes(), 8u);
  EXPECT_EQ(ring.front(), "one");
  EXPECT_EQ(ring.newest(2), (std::vector<std::string>{"", "three"}));
  EXPECT_EQ(ring.newest(10), (std::vector<std::string>{"one", "", "three"}));
  EXPECT_TRUE(ring.newest(0).empty());
  ring.pop_front();
  EXPECT_EQ(ring.front(), "");
  EXPECT_EQ(ring.bytes(), 5u);
  ring.pop_front();
  ring.pop_front();
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.bytes(), 0u);
  ring.pop_front();  // harmless when empty
  ring.push_back("again");
  EXPECT_EQ(ring.newest(1), std::vector<std::string>{"again"});
}

// A long run as a scrollback sees it: a bounded window sliding over far more
// text than it holds, across the buffer's compactions.
TEST(LineRing, SlidingWindowStaysExactAcrossCompactions) {
  LineRing ring;
  constexpr int kKeep = 1000;
  for (int i = 0; i < 200000; ++i) {
    ring.push_back("line " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 7), 'x'));
    if (ring.size() > kKeep) ring.pop_front();
  }
  ASSERT_EQ(ring.size(), static_cast<std::size_t>(kKeep));
  const auto lines = ring.newest(kKeep);
  std::size_t bytes = 0;
  for (int k = 0; k < kKeep; ++k) {
    const int i = 200000 - kKeep + k;
    ASSERT_EQ(lines[static_cast<std::size_t>(k)],
              "line " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 7), 'x'));
    bytes += lines[static_cast<std::size_t>(k)].size();
  }
  EXPECT_EQ(ring.bytes(), bytes);
  EXPECT_EQ(ring.front(), lines.front());
  ring.shrink_to_fit();
  EXPECT_EQ(ring.newest(kKeep), lines);
  EXPECT_EQ(ring.bytes(), bytes);
}

}  // namespace
}  // namespace agentty::session
