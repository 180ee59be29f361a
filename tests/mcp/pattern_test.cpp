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

// Where a wait's next search must begin: the first start that more text
// could still make a match (PCRE2's hard partial match), so the lines
// before it need no search again.
TEST(Pattern, PendingStartIsWhereMoreTextCouldStillCompleteAMatch) {
  auto port = Pattern::compile("Listening on port (\\d+)\\n");
  ASSERT_TRUE(port);
  EXPECT_EQ(port->pending_start("starting\nListen"), 9u);
  EXPECT_EQ(port->pending_start("starting\nListening on port 80"), 9u);  // more digits may come
  EXPECT_EQ(port->pending_start("starting\nready\n"), 15u);              // nothing can start
  // A pattern spanning lines: its first line is still pending.
  auto lines = Pattern::compile("^begin\\n.*\\n^end$");
  ASSERT_TRUE(lines);
  EXPECT_EQ(lines->pending_start("x\nbegin\nmiddle\n"), 2u);
  EXPECT_EQ(lines->pending_start("x\nbegin\nmiddle\nother\n"), 21u);
  // `$` at the end of the text may yet be followed by more of the line.
  auto whole = Pattern::compile("^2000$");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->pending_start("1999\n2000"), 5u);
  EXPECT_EQ(whole->pending_start("1999\n20001\n"), 11u);
}

}  // namespace
}  // namespace agentty::mcp::tools
