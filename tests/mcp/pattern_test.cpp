#include "mcp/tools/pattern.hpp"

#include <gtest/gtest.h>

namespace agentty::mcp::tools {
namespace {

// A nested repeat on a line it cannot match makes PCRE2 stop at its match
// limit: that is no answer, and wait must say so instead of "no match".
TEST(Pattern, AMatchPcre2GivesUpOnIsAnErrorNotANoMatch) {
  auto pattern = Pattern::compile("^(a+)+$");
  ASSERT_TRUE(pattern);
  const auto gave_up = pattern->search(std::string(29, 'a') + "X\n");
  ASSERT_FALSE(gave_up);
  EXPECT_NE(gave_up.error().find("match limit"), std::string::npos) << gave_up.error();
  const auto no_match = pattern->search("bbb\n");
  ASSERT_TRUE(no_match);
  EXPECT_FALSE(no_match->has_value());
  auto match = pattern->search("x\naaa\n");
  ASSERT_TRUE(match);
  ASSERT_TRUE(match->has_value());
  EXPECT_EQ((*match)->line, "aaa");
}

}  // namespace
}  // namespace agentty::mcp::tools
