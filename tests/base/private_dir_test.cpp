// ensure_private_dir: what agentty keeps (spools, recordings, session rc
// files) goes only into a directory of ours with mode 0700, also when an
// operator has replaced one by a symlink.
#include "base/private_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.hpp"

namespace agentty {
namespace {

namespace fs = std::filesystem;

class PrivateDir : public ::testing::Test {
 protected:
  void SetUp() override {}

  static mode_t mode_of(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
    return info.st_mode & 07777;
  }

  test_util::TempDir temp_{"agentty-private-dir-test"};
  fs::path dir_ = temp_.path();
};

TEST_F(PrivateDir, MakesAMissingOneWith0700WhateverTheUmask) {
  const mode_t old_umask = ::umask(0);
  auto made = ensure_private_dir(dir_ / "a" / "spool");
  ::umask(old_umask);
  ASSERT_TRUE(made) << made.error();
  EXPECT_EQ(mode_of(dir_ / "a" / "spool"), 0700u);
}

TEST_F(PrivateDir, SetsAnExistingOneBackTo0700) {
  fs::create_directory(dir_ / "spool");
  ::chmod((dir_ / "spool").c_str(), 0777);
  ASSERT_TRUE(ensure_private_dir(dir_ / "spool"));
  EXPECT_EQ(mode_of(dir_ / "spool"), 0700u);
}

// An operator may move recordings to a bigger disk with a symlink.
TEST_F(PrivateDir, FollowsASymlinkToAPrivateDirectoryOfOurs) {
  fs::create_directory(dir_ / "elsewhere");
  ::chmod((dir_ / "elsewhere").c_str(), 01700);
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "recordings");
  auto made = ensure_private_dir(dir_ / "recordings");
  ASSERT_TRUE(made) << made.error();
  EXPECT_EQ(mode_of(dir_ / "elsewhere"), 01700u) << "private already: left as it is";
}

// A link may lead to a shared directory of ours (/tmp when agentty runs as
// root): made 0700 through the link, that broke every other user of /tmp.
TEST_F(PrivateDir, NeverChangesTheModeOfALinksTarget) {
  fs::create_directory(dir_ / "shared");
  ::chmod((dir_ / "shared").c_str(), 01777);
  fs::create_directory_symlink(dir_ / "shared", dir_ / "spool");
  auto made = ensure_private_dir(dir_ / "spool");
  ASSERT_FALSE(made);
  EXPECT_NE(made.error().find("a symlink to " + (dir_ / "shared").string()), std::string::npos)
      << made.error();
  EXPECT_NE(made.error().find("open to other users"), std::string::npos) << made.error();
  EXPECT_EQ(mode_of(dir_ / "shared"), 01777u);
}

// Audit 20: these were warned about as "not a directory", then written through.
TEST_F(PrivateDir, RefusesASymlinkToAFileOrToNothingNamingItsTarget) {
  std::ofstream(dir_ / "file") << "x";
  fs::create_symlink(dir_ / "file", dir_ / "to-file");
  auto to_file = ensure_private_dir(dir_ / "to-file");
  ASSERT_FALSE(to_file);
  EXPECT_NE(to_file.error().find("a symlink to " + (dir_ / "file").string()), std::string::npos)
      << to_file.error();
  EXPECT_NE(to_file.error().find("is not a directory"), std::string::npos) << to_file.error();

  fs::create_symlink(dir_ / "gone", dir_ / "dangling");
  auto dangling = ensure_private_dir(dir_ / "dangling");
  ASSERT_FALSE(dangling);
  EXPECT_NE(dangling.error().find("a symlink to " + (dir_ / "gone").string()), std::string::npos)
      << dangling.error();
}

TEST_F(PrivateDir, RefusesAPlainFile) {
  std::ofstream(dir_ / "spool") << "x";
  auto made = ensure_private_dir(dir_ / "spool");
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error(), (dir_ / "spool").string() + " is not a directory");
}

TEST_F(PrivateDir, RefusesAnotherUsersDirectoryAlsoThroughASymlink) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  fs::create_directory(dir_ / "theirs");
  ASSERT_EQ(::chown((dir_ / "theirs").c_str(), 65534, 65534), 0);
  const mode_t before = mode_of(dir_ / "theirs");
  fs::create_directory_symlink(dir_ / "theirs", dir_ / "spool");
  for (const char* name : {"theirs", "spool"}) {
    auto made = ensure_private_dir(dir_ / name);
    ASSERT_FALSE(made) << name;
    EXPECT_NE(made.error().find("belongs to another user (uid 65534)"), std::string::npos)
        << made.error();
  }
  EXPECT_EQ(mode_of(dir_ / "theirs"), before) << "not ours to change";
}

}  // namespace
}  // namespace agentty
