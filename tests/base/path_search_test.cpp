#include "base/path_search.hpp"

#include <gtest/gtest.h>

namespace agentty {
namespace {

TEST(PathSearch, FindsTheFirstExecutableFileInOrder) {
  EXPECT_EQ(find_executable("sh", "/nonexistent:/bin:/usr/bin"), "/bin/sh");
  EXPECT_EQ(find_executable("sh", "/usr/bin:/bin"), "/usr/bin/sh");
}

TEST(PathSearch, SkipsDirectoriesEmptyEntriesAndMissingNames) {
  EXPECT_EQ(find_executable("bin", "/usr:/"), std::nullopt);  // /usr/bin is a directory
  EXPECT_EQ(find_executable("sh", "::/bin"), "/bin/sh");
  EXPECT_EQ(find_executable("no-such-program-here", "/bin:/usr/bin"), std::nullopt);
  EXPECT_FALSE(is_executable_file("/etc/passwd"));
  EXPECT_TRUE(is_executable_file("/bin/sh"));
}

}  // namespace
}  // namespace agentty
