#include "base/log.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/temp_dir.hpp"

namespace agentty {
namespace {

namespace fs = std::filesystem;

class LogFile : public ::testing::Test {
 protected:
  void SetUp() override {
    old_umask_ = ::umask(0);  // the loosest a service manager may hand us
  }
  void TearDown() override {
    ::umask(old_umask_);
    ASSERT_TRUE(init_logging({}));  // back to stderr only, closing the file
  }
  test_util::TempDir temp_{"agentty-log-test"};
  fs::path dir_ = temp_.path();
  mode_t old_umask_ = 0;
};

TEST_F(LogFile, IsPrivateWhateverTheUmask) {
  LogOptions options;
  options.file = (dir_ / "agentty.log").string();
  ASSERT_TRUE(init_logging(options));
  spdlog::info("hello");
  struct stat info {};
  ASSERT_EQ(::stat(options.file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST_F(LogFile, IsRotatedAtItsSizeKeepingThreeOlderFiles) {
  LogOptions options;
  options.file = (dir_ / "agentty.log").string();
  options.file_max_bytes = 4096;
  ASSERT_TRUE(init_logging(options));
  const std::string line(200, 'x');
  for (int i = 0; i < 200; ++i) spdlog::info("{} {}", i, line);  // ~45 KB in all
  spdlog::default_logger()->flush();
  EXPECT_LE(fs::file_size(dir_ / "agentty.log"), 4096u);
  for (const char* old : {"agentty.1.log", "agentty.2.log", "agentty.3.log"}) {
    ASSERT_TRUE(fs::exists(dir_ / old)) << old;
    EXPECT_LE(fs::file_size(dir_ / old), 4096u) << old;
    struct stat info {};
    ASSERT_EQ(::stat((dir_ / old).c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u) << old;
  }
  EXPECT_FALSE(fs::exists(dir_ / "agentty.4.log"));
}

TEST_F(LogFile, ThatCannotBeOpenedIsAnErrorNamingThePathAndTheFix) {
  fs::path blocker = dir_ / "a-file";
  {
    std::FILE* f = std::fopen(blocker.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  LogOptions options;
  options.file = (blocker / "agentty.log").string();  // under a regular file
  auto result = init_logging(options);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().find(options.file), std::string::npos) << result.error();
  EXPECT_NE(result.error().find("--log-file"), std::string::npos) << result.error();
}

}  // namespace
}  // namespace agentty
