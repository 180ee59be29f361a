#include "session/state_dir_owner.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

namespace agentty::session {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const char* name) {
  auto dir =
      fs::temp_directory_path() / ("agentty-owner-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "x";
}

TEST(StateDirOwner, SweepRemovesWhatAGoneOwnerLeftAndNeverALiveOnes) {
  const fs::path dir = fresh_dir("sweep");
  auto live = StateDirOwner::acquire(dir);
  ASSERT_TRUE(live.ok()) << live.error();
  touch(dir / "spool" / (*live)->owned_name("abc.log"));
  touch(dir / "sessions" / (*live)->owned_name("nonce") / "rc");

  // An owner that dies without cleaning up: a child takes a tag and is killed.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto dead = StateDirOwner::acquire(dir);
    if (!dead.ok()) ::_exit(1);
    const std::string tag = (*dead)->tag();
    touch(dir / "spool" / ((*dead)->owned_name("def.log")));
    touch(dir / "spool" / ((*dead)->owned_name("def.log.text")));
    touch(dir / "scripts" / ((*dead)->owned_name("script-1.sh")));
    touch(dir / "sessions" / ((*dead)->owned_name("nonce2")) / "rc");
    [[maybe_unused]] auto n = ::write(pipe_fds[1], tag.data(), tag.size());
    ::pause();
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  char tag[16];
  ASSERT_EQ(::read(pipe_fds[0], tag, sizeof tag), 16);
  ::close(pipe_fds[0]);
  touch(dir / "spool" / "0123456789ab.log");  // an older agentty's: no tag

  auto other = StateDirOwner::acquire(dir);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)->sweep(), 0u) << "the child still lives";
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ((*other)->sweep(), 4u);
  EXPECT_FALSE(fs::exists(dir / "owners" / (std::string(tag, 16) + ".lock")));
  EXPECT_TRUE(fs::exists(dir / "spool" / (*live)->owned_name("abc.log")));
  EXPECT_TRUE(fs::exists(dir / "sessions" / (*live)->owned_name("nonce") / "rc"));
  EXPECT_TRUE(fs::exists(dir / "spool" / "0123456789ab.log"));
  EXPECT_EQ((*other)->sweep(), 0u);

  // A clean exit removes its lock file; its leftovers (none here) would go too.
  const std::string live_tag = (*live)->tag();
  live->reset();
  EXPECT_FALSE(fs::exists(dir / "owners" / (live_tag + ".lock")));
  EXPECT_EQ((*other)->sweep(), 2u);  // the files it had not removed itself
  fs::remove_all(dir);
}

// Audit 20: a state dir deleted by hand took the lock file along, and a
// server started afterwards swept a live server's new files as a dead one's.
TEST(StateDirOwner, KeepClaimMakesTheLockAgainAfterTheStateDirWasDeleted) {
  const fs::path dir = fresh_dir("claim");
  auto live = StateDirOwner::acquire(dir);
  ASSERT_TRUE(live.ok()) << live.error();
  const fs::path lock = dir / "owners" / ((*live)->tag() + ".lock");
  (*live)->keep_claim();  // nothing wrong: nothing changes
  ASSERT_TRUE(fs::exists(lock));

  fs::remove_all(dir);
  (*live)->keep_claim();
  ASSERT_TRUE(fs::exists(lock));
  touch(dir / "spool" / (*live)->owned_name("new.log"));
  auto later = StateDirOwner::acquire(dir);
  ASSERT_TRUE(later.ok()) << later.error();
  EXPECT_EQ((*later)->sweep(), 0u);
  EXPECT_TRUE(fs::exists(dir / "spool" / (*live)->owned_name("new.log")));

  live->reset();  // gone: its lock file goes, and then its files can be swept
  EXPECT_FALSE(fs::exists(lock));
  EXPECT_EQ((*later)->sweep(), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace agentty::session
