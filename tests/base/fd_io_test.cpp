// write_all / pwrite_all / pread_all: whole transfers, and failures that say
// what happened and how much went out first.
#include "base/fd_io.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "base/unique_fd.hpp"

namespace agentty {
namespace {

UniqueFd temp_file() {
  char name[] = "/tmp/agentty-fd-io-XXXXXX";
  UniqueFd fd(::mkstemp(name));
  ::unlink(name);
  return fd;
}

TEST(FdIo, WriteAllThenPreadAllReturnsEveryByte) {
  auto fd = temp_file();
  ASSERT_TRUE(fd);
  const std::string text(300000, 'x');
  std::size_t written = 0;
  ASSERT_TRUE(write_all(fd.get(), text, &written));
  EXPECT_EQ(written, text.size());
  std::string back(text.size(), '\0');
  EXPECT_EQ(pread_all(fd.get(), back.data(), back.size(), 0), text.size());
  EXPECT_EQ(back, text);
}

TEST(FdIo, PwriteAllWritesAtItsOffsetAndLeavesThePositionAlone) {
  auto fd = temp_file();
  ASSERT_TRUE(write_all(fd.get(), "abcdef"));
  ASSERT_TRUE(pwrite_all(fd.get(), "XY", 2));
  ASSERT_TRUE(write_all(fd.get(), "!"));  // at the position write_all left: 6
  char back[8] = {};
  EXPECT_EQ(pread_all(fd.get(), back, sizeof back, 0), 7u);
  EXPECT_EQ(std::string(back, 7), "abXYef!");
}

TEST(FdIo, PreadAllStopsAtEndOfFile) {
  auto fd = temp_file();
  ASSERT_TRUE(write_all(fd.get(), "four"));
  char back[16];
  EXPECT_EQ(pread_all(fd.get(), back, sizeof back, 1), 3u);
  EXPECT_EQ(pread_all(fd.get(), back, sizeof back, 100), 0u);
}

TEST(FdIo, AFullDeviceIsAnErrorNamingTheSyscallAndNothingWentOut) {
  UniqueFd full(::open("/dev/full", O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(full);
  std::size_t written = 99;
  auto result = write_all(full.get(), "data", &written);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().find("write: "), std::string::npos) << result.error();
  EXPECT_NE(result.error().find("(errno 28)"), std::string::npos) << result.error();
  EXPECT_EQ(written, 0u);
}

TEST(FdIo, APipeWithNoReaderFailsAfterWhatItTook) {
  std::signal(SIGPIPE, SIG_IGN);  // EPIPE instead of death, as agentty runs
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  UniqueFd reader(ends[0]), writer(ends[1]);
  reader.reset();
  std::size_t written = 99;
  auto result = write_all(writer.get(), "lost", &written);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().find("Broken pipe"), std::string::npos) << result.error();
  EXPECT_EQ(written, 0u);
}

TEST(FdIo, ABadDescriptorIsAnErrorForEveryCall) {
  EXPECT_FALSE(write_all(-1, "x"));
  EXPECT_FALSE(pwrite_all(-1, "x", 0));
  char c;
  EXPECT_EQ(pread_all(-1, &c, 1, 0), 0u);
}

TEST(FdIo, NothingToWriteIsDone) {
  std::size_t written = 99;
  EXPECT_TRUE(write_all(-1, "", &written));
  EXPECT_EQ(written, 0u);
}

}  // namespace
}  // namespace agentty
