// The recordings listing and lookup behind GET /api/recordings[/<id>]: real
// files in a temporary directory.
#include "web/recordings_api.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "support/temp_dir.hpp"

namespace agentty::web {
namespace {

class RecordingsApiTest : public ::testing::Test {
 protected:
  // A file modified `seconds` after the epoch-ish base, so the order is known.
  void write(const std::string& name, const std::string& text, long seconds) {
    auto path = dir_.path() / name;
    std::ofstream(path) << text;
    struct timespec times[2] = {{1'800'000'000 + seconds, 0}, {1'800'000'000 + seconds, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }
  static std::string cast(const std::string& title, int cols = 120, int rows = 40) {
    nlohmann::json header = {{"version", 2},
                             {"width", cols},
                             {"height", rows},
                             {"timestamp", 1'799'999'000},
                             {"title", title}};
    return header.dump() + "\n[0.1, \"o\", \"hi\\r\\n\"]\n";
  }

  test_util::TempDir dir_{"agentty-recordings-api"};
};

TEST_F(RecordingsApiTest, ListsNewestFirstWithTheHeaderFields) {
  write("aaa.cast", cast("ls -la"), 1);
  write("ccc.cast", cast("make", 80, 24), 3);
  write("bbb.cast", cast("git status"), 2);
  auto list = list_recordings(dir_.path(), 10);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]["id"], "ccc");
  EXPECT_EQ(list[1]["id"], "bbb");
  EXPECT_EQ(list[2]["id"], "aaa");
  EXPECT_EQ(list[0]["title"], "make");
  EXPECT_EQ(list[0]["cols"], 80);
  EXPECT_EQ(list[0]["rows"], 24);
  EXPECT_EQ(list[0]["started_at"], 1'799'999'000'000LL);
  EXPECT_EQ(list[0]["modified_at"], 1'800'000'003'000LL);
  EXPECT_EQ(list[0]["bytes"], cast("make", 80, 24).size());
}

TEST_F(RecordingsApiTest, KeepsTheNewestUpToTheLimit) {
  for (int i = 0; i < 5; ++i) write("r" + std::to_string(i) + ".cast", cast("c"), i);
  auto list = list_recordings(dir_.path(), 2);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], "r4");
  EXPECT_EQ(list[1]["id"], "r3");
}

TEST_F(RecordingsApiTest, SkipsWhatIsNotARecordingAndToleratesABrokenHeader) {
  write("good.cast", cast("ok"), 1);
  write("broken.cast", "not json at all", 2);
  write("notes.txt", cast("other"), 3);
  write(".hidden.cast", cast("hidden"), 4);
  write("dot.ted.cast", cast("dotted"), 5);
  std::filesystem::create_directory(dir_.path() / "folder.cast");
  std::filesystem::create_symlink(dir_.path() / "good.cast", dir_.path() / "link.cast");
  auto list = list_recordings(dir_.path(), 10);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0]["id"], "broken");
  EXPECT_EQ(list[0]["title"], "");
  EXPECT_EQ(list[0]["cols"], 0);
  EXPECT_EQ(list[1]["id"], "good");
}

TEST_F(RecordingsApiTest, AMissingDirectoryListsNothing) {
  EXPECT_TRUE(list_recordings(dir_.path() / "absent", 10).empty());
}

TEST_F(RecordingsApiTest, FindsOnlyPlainRegularFiles) {
  write("abc123.cast", cast("x"), 1);
  std::filesystem::create_symlink(dir_.path() / "abc123.cast", dir_.path() / "link.cast");
  EXPECT_EQ(recording_file(dir_.path(), "abc123"), dir_.path() / "abc123.cast");
  for (std::string_view bad :
       {"link", "", ".", "..", "../abc123", "abc123.cast", "a/b", "missing"}) {
    EXPECT_FALSE(recording_file(dir_.path(), bad)) << bad;
  }
}

}  // namespace
}  // namespace agentty::web
