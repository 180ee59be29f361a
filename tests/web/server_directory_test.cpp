#include "web/server_directory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/temp_dir.hpp"

namespace agentty::web {
namespace {
namespace fs = std::filesystem;

// A fresh STATE_DIR; its servers/ does not exist yet.
class ServerDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {}

  fs::path dir() const { return state_ / "servers"; }
  ServerDirectory directory() const { return ServerDirectory(dir()); }
  fs::path entry(int pid) const { return dir() / (std::to_string(pid) + ".json"); }
  static ServerInfo self_info(std::string url = "http://127.0.0.1:7000/#token=abc") {
    return ServerInfo::self("mcp", std::move(url), 7000);
  }
  static unsigned mode_of(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir())) found.push_back(e.path().filename());
    std::sort(found.begin(), found.end());
    return found;
  }

  test_util::TempDir temp_{"agentty-servers"};
  fs::path state_ = temp_.path();
};

// A child that has exited and been reaped: its pid names no process.
int dead_pid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// A live process that is not agentty (sleep), returned once it has exec'd:
// the close-on-exec pipe reads EOF exactly then.
pid_t start_sleep() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t child = ::fork();
  if (child == 0) {
    ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  char byte;
  while (::read(fds[0], &byte, 1) > 0) {
  }
  ::close(fds[0]);
  return child;
}

TEST_F(ServerDirectoryTest, PublishedEntryIsListedWithPrivateModes) {
  auto info = self_info();
  ASSERT_TRUE(directory().publish(info));
  EXPECT_EQ(mode_of(dir()), 0700u);
  EXPECT_EQ(mode_of(entry(info.pid)), 0600u);
  EXPECT_EQ(names(), std::vector<std::string>{std::to_string(info.pid) + ".json"});  // no temp

  auto listed = directory().list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].pid, ::getpid());
  EXPECT_EQ(listed[0].kind, "mcp");
  EXPECT_EQ(listed[0].port, 7000);
  EXPECT_EQ(listed[0].dashboard_url, info.dashboard_url);
  EXPECT_EQ(listed[0].started_at_ms, info.started_at_ms);
  EXPECT_NE(listed[0].process_start, 0u);
}

TEST_F(ServerDirectoryTest, RepublishingReplacesTheEntry) {
  ASSERT_TRUE(directory().publish(self_info("http://127.0.0.1:1/#token=old")));
  ASSERT_TRUE(directory().publish(self_info("http://127.0.0.1:1/#token=new")));
  auto listed = directory().list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].dashboard_url, "http://127.0.0.1:1/#token=new");
  EXPECT_EQ(names().size(), 1u);
}

TEST_F(ServerDirectoryTest, LooseDirectoryModeIsTightened) {
  fs::create_directories(dir());
  ::chmod(dir().c_str(), 0755);
  ASSERT_TRUE(directory().publish(self_info()));
  EXPECT_EQ(mode_of(dir()), 0700u);
}

TEST_F(ServerDirectoryTest, RegistrationIsWithdrawnOnDestruction) {
  auto registration = ServerRegistration::publish(directory(), self_info());
  ASSERT_TRUE(registration) << registration.error();
  EXPECT_TRUE(fs::exists(entry(::getpid())));
  registration.value().reset();
  EXPECT_FALSE(fs::exists(entry(::getpid())));
  EXPECT_TRUE(directory().list().empty());
}

TEST_F(ServerDirectoryTest, DeadPidEntryIsIgnoredAndRemoved) {
  auto info = self_info();
  info.pid = dead_pid();
  ASSERT_TRUE(directory().publish(info));
  ASSERT_TRUE(fs::exists(entry(info.pid)));
  EXPECT_TRUE(directory().list().empty());
  EXPECT_FALSE(fs::exists(entry(info.pid)));
}

TEST_F(ServerDirectoryTest, LiveProcessThatIsNotAgenttyIsIgnoredAndRemoved) {
  pid_t sleeper = start_sleep();
  ASSERT_GT(sleeper, 0);
  auto info = self_info();
  info.pid = sleeper;
  info.process_start = ServerDirectory::process_start_of(sleeper);
  ASSERT_NE(info.process_start, 0u);
  ASSERT_TRUE(directory().publish(info));
  EXPECT_TRUE(directory().list().empty());
  EXPECT_FALSE(fs::exists(entry(sleeper)));
  ::kill(sleeper, SIGKILL);
  ::waitpid(sleeper, nullptr, 0);
}

TEST_F(ServerDirectoryTest, ReusedPidIsToldApartByItsStartTime) {
  auto info = self_info();
  info.process_start += 1;  // an earlier process that had this pid
  ASSERT_TRUE(directory().publish(info));
  EXPECT_TRUE(directory().list().empty());
  EXPECT_FALSE(fs::exists(entry(info.pid)));
}

TEST_F(ServerDirectoryTest, MalformedFilesOfDeadPidsAndStaleTempFilesAreRemoved) {
  ASSERT_TRUE(directory().publish(self_info()));
  int gone = dead_pid();
  std::ofstream(entry(gone)) << "{not json";
  std::ofstream(dir() / ("." + std::to_string(gone) + ".json.tmp")) << "{";
  std::ofstream(dir() / "notes.txt") << "not ours";
  EXPECT_EQ(directory().list().size(), 1u);
  EXPECT_EQ(names(), (std::vector<std::string>{std::to_string(::getpid()) + ".json", "notes.txt"}));
}

TEST_F(ServerDirectoryTest, UnreadableEntryOfALivePidIsLeftAlone) {
  fs::create_directories(dir());
  std::ofstream(entry(::getpid())) << "{\"format\": 2}";  // another version's, say
  ASSERT_TRUE(fs::exists(entry(::getpid())));
  EXPECT_TRUE(directory().list().empty());
  EXPECT_TRUE(fs::exists(entry(::getpid())));
}

TEST_F(ServerDirectoryTest, JsonMarksThisServer) {
  ASSERT_TRUE(directory().publish(self_info()));
  auto j = directory().list_json();
  ASSERT_EQ(j.at("servers").size(), 1u);
  const auto& s = j["servers"][0];
  EXPECT_EQ(s.at("self"), true);
  EXPECT_EQ(s.at("kind"), "mcp");
  EXPECT_EQ(s.at("pid"), ::getpid());
  EXPECT_EQ(s.at("port"), 7000);
  EXPECT_EQ(s.at("dashboard_url"), "http://127.0.0.1:7000/#token=abc");
  EXPECT_FALSE(s.contains("process_start"));
}

TEST_F(ServerDirectoryTest, MissingDirectoryListsNothing) {
  EXPECT_TRUE(directory().list().empty());
  EXPECT_EQ(directory().list_json().at("servers").size(), 0u);
}

}  // namespace
}  // namespace agentty::web
