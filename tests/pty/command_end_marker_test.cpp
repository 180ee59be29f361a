#include "pty/command_end_marker.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace agentty::pty {
namespace {

// What a filter passes on of `chunks`, fed one after another, with what it
// held back at the end.
std::string passed(const std::vector<std::string>& chunks, CommandEndFilter& filter) {
  std::string out, scratch;
  for (const auto& chunk : chunks) out += filter.filter(chunk, scratch);
  return out + filter.flush();
}

TEST(CommandEndFilterTest, OutputWithoutTheMarkerPassesUntouched) {
  CommandEndFilter filter;
  const std::string colours = "\033[31mred\033[0m\r\n\033]0;title\007\033";
  EXPECT_EQ(passed({colours, "[1mbold"}, filter), colours + "[1mbold");
  EXPECT_FALSE(filter.seen());
}

// The marker goes, wherever the reads cut it, and everything else stays in
// order.
TEST(CommandEndFilterTest, TheMarkerIsTakenOutWhereverTheReadsCutIt) {
  const std::string stream = "cmd\r\n" + std::string(kCommandEndMarker) + "job\r\n";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    for (std::size_t second = cut; second <= stream.size(); ++second) {
      CommandEndFilter filter;
      EXPECT_EQ(
          passed({stream.substr(0, cut), stream.substr(cut, second - cut), stream.substr(second)},
                 filter),
          "cmd\r\njob\r\n")
          << cut << " " << second;
      EXPECT_TRUE(filter.seen());
    }
  }
}

// A start of the marker waits only until the next read tells; at the end
// of the output it is given up.
TEST(CommandEndFilterTest, APossibleStartIsHeldOnlyUntilTheNextRead) {
  CommandEndFilter filter;
  std::string scratch;
  EXPECT_EQ(filter.filter("a\033]77", scratch), "a");
  EXPECT_EQ(filter.filter("x", scratch), "\033]77x");
  EXPECT_EQ(filter.filter("b\033]7771;agentty", scratch), "b");
  EXPECT_EQ(filter.flush(), "\033]7771;agentty");
  EXPECT_FALSE(filter.seen());
}

// Once seen, the command has ended: a second marker (a job that printed
// one) passes, untouched.
TEST(CommandEndFilterTest, OnlyTheFirstMarkerIsTakenOut) {
  CommandEndFilter filter;
  const std::string marker(kCommandEndMarker);
  EXPECT_EQ(passed({"a" + marker + "b" + marker}, filter), "ab" + marker);
}

}  // namespace
}  // namespace agentty::pty
