#include "session/recording_retention.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <vector>

#include "support/temp_dir.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;

class RecordingRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {}

  // File `name` of `bytes` bytes, last modified `age_s` seconds ago (explicit
  // times: creation order alone is too coarse on some filesystems).
  void make(const std::string& name, std::size_t bytes, int age_s) {
    std::ofstream(dir_ / name) << std::string(bytes, 'x');
    fs::last_write_time(dir_ / name,
                        fs::file_time_type::clock::now() - std::chrono::seconds(age_s));
  }
  bool exists(const std::string& name) const { return fs::exists(dir_ / name); }

  test_util::TempDir temp_{"agentty-recordings"};
  fs::path dir_ = temp_.path();
};

TEST_F(RecordingRetentionTest, DeletesOldestFirstUntilCountLeavesRoomForTheNewOne) {
  make("a.cast", 10, 40);
  make("b.cast", 10, 30);
  make("c.cast", 10, 20);
  make("d.cast", 10, 10);
  auto result = prune_recordings(dir_, {1 << 20, 3}, {});
  EXPECT_EQ(result.files_removed, 2u);
  EXPECT_FALSE(exists("a.cast"));
  EXPECT_FALSE(exists("b.cast"));
  EXPECT_TRUE(exists("c.cast"));
  EXPECT_TRUE(exists("d.cast"));
  EXPECT_EQ(result.files_kept, 2u);
}

TEST_F(RecordingRetentionTest, DeletesOldestUntilUnderTheByteBudget) {
  make("a.cast", 400, 30);
  make("b.cast", 400, 20);
  make("c.cast", 400, 10);
  auto result = prune_recordings(dir_, {900, 100}, {});
  EXPECT_EQ(result.files_removed, 1u);
  EXPECT_EQ(result.bytes_removed, 400u);
  EXPECT_EQ(result.bytes_kept, 800u);
  EXPECT_FALSE(exists("a.cast"));
}

TEST_F(RecordingRetentionTest, KeepsLiveRecordingsAndOtherFiles) {
  make("live.cast", 500, 50);
  make("old.cast", 500, 40);
  make("notes.txt", 5000, 60);
  auto result = prune_recordings(dir_, {600, 100}, {"live"});
  EXPECT_TRUE(exists("live.cast"));
  EXPECT_FALSE(exists("old.cast"));
  EXPECT_TRUE(exists("notes.txt"));
  EXPECT_EQ(result.bytes_kept, 500u);
}

TEST_F(RecordingRetentionTest, MissingDirectoryIsNotAnError) {
  auto result = prune_recordings(dir_ / "nope", {1, 1}, {});
  EXPECT_EQ(result.files_removed, 0u);
}

// A server's own recordings: limits hold from start to start without a scan
// in between (the sizes of files it created are added up as their recorders
// count them).
TEST_F(RecordingRetentionTest, RetentionKeepsTheLimitsAcrossItsOwnNewRecordings) {
  RecordingRetention retention(dir_, {1000, 3});
  int asked = 0;
  auto live = [&] {
    ++asked;
    return std::set<std::string>{};
  };
  std::vector<std::shared_ptr<std::uint64_t>> sizes;
  for (int i = 0; i < 6; ++i) {
    retention.make_room(live);
    make("r" + std::to_string(i) + ".cast", 10, 10 - i);
    sizes.push_back(std::make_shared<std::uint64_t>(10));
    retention.track_size(sizes.back());
  }
  EXPECT_FALSE(exists("r2.cast"));
  EXPECT_TRUE(exists("r3.cast") && exists("r4.cast") && exists("r5.cast"));
  // One recording grows past the byte budget: the next start makes room.
  std::ofstream(dir_ / "r5.cast", std::ios::app) << std::string(990, 'x');
  *sizes.back() += 990;
  retention.make_room(live);
  make("r6.cast", 10, 0);
  EXPECT_FALSE(exists("r3.cast"));
  EXPECT_FALSE(exists("r4.cast"));
  EXPECT_TRUE(exists("r5.cast"));
  EXPECT_GE(asked, 3);
}

// Starts well inside the limits scan once, not once per start.
TEST_F(RecordingRetentionTest, RetentionDoesNotScanOnEveryStart) {
  for (int i = 0; i < 20; ++i) make("old" + std::to_string(i) + ".cast", 10, 100);
  RecordingRetention retention(dir_, {1 << 20, 500});
  int asked = 0;
  auto live = [&] {
    ++asked;
    return std::set<std::string>{};
  };
  for (int i = 0; i < 10; ++i) retention.make_room(live);
  EXPECT_EQ(asked, 1);
}

// At the file limit, a scan makes room for the next tenth of max_files, so a
// long-running server does not scan (and stat every file) at every start.
TEST_F(RecordingRetentionTest, AtTheFileLimitAScanLeavesRoomForTheNextStarts) {
  for (int i = 0; i < 50; ++i) make("old" + std::to_string(i) + ".cast", 10, 100 - i);
  RecordingRetention retention(dir_, {1 << 20, 50});
  int asked = 0;
  auto live = [&] {
    ++asked;
    return std::set<std::string>{};
  };
  retention.make_room(live);
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(exists("old5.cast"));  // 1 for the new one + 5 of headroom, oldest first
  EXPECT_TRUE(exists("old6.cast"));
  for (int i = 1; i <= 5; ++i) {
    make("n" + std::to_string(i - 1) + ".cast", 10, 0);
    retention.make_room(live);
  }
  EXPECT_EQ(asked, 1);  // the headroom took them without a scan
  EXPECT_TRUE(exists("old6.cast"));
}

}  // namespace
}  // namespace agentty::session
