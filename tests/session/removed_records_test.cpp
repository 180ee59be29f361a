#include "session/removed_records.hpp"

#include <gtest/gtest.h>

namespace agentty::session {
namespace {

TEST(RemovedRecords, RemembersWhyAnIdWasRemoved) {
  RemovedRecords removed;
  removed.add("aaa", RemovalCause::cleanup);
  removed.add("bbb", RemovalCause::retention);
  ASSERT_TRUE(removed.find("aaa"));
  EXPECT_EQ(removed.find("aaa")->cause, RemovalCause::cleanup);
  EXPECT_EQ(removed.find("bbb")->cause, RemovalCause::retention);
  EXPECT_FALSE(removed.find("ccc"));
  EXPECT_EQ(describe(RemovalCause::cleanup), "by cleanup");
}

TEST(RemovedRecords, KeepsOnlyTheNewestRemovals) {
  RemovedRecords removed;
  for (std::size_t i = 0; i < RemovedRecords::kCapacity + 10; ++i)
    removed.add("id" + std::to_string(i), RemovalCause::max_retained);
  removed.add("id20", RemovalCause::cleanup);  // again: no second place in the order
  EXPECT_FALSE(removed.find("id0"));
  EXPECT_FALSE(removed.find("id9"));
  EXPECT_TRUE(removed.find("id10"));
  EXPECT_TRUE(removed.find("id" + std::to_string(RemovedRecords::kCapacity + 9)));
  removed.add("one-more", RemovalCause::cleanup);
  EXPECT_FALSE(removed.find("id10"));
  EXPECT_TRUE(removed.find("id11"));
}

}  // namespace
}  // namespace agentty::session
