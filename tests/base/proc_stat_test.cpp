// parse_proc_stat / read_proc_stat: the one /proc/PID/stat parser.
#include "base/proc_stat.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace agentty {
namespace {

TEST(ProcStat, FieldsCountFromTheLastParenthesisOfTheCommandName) {
  // A command name with spaces and parentheses of its own.
  auto stat = parse_proc_stat(
      "4242 (a) b (c d) S 1 4242 4200 34816 4250 4194304 100 0 0 0 5 2 0 0 20 0 1 0 987654 "
      "1000 200 18446744073709551615\n");
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 1);
  EXPECT_EQ(stat->pgrp, 4242);
  EXPECT_EQ(stat->session, 4200);
  EXPECT_EQ(stat->tpgid, 4250);
  EXPECT_EQ(stat->start_time, 987654u);
}

TEST(ProcStat, NoTerminalAndTruncatedLines) {
  auto detached = parse_proc_stat("7 (d) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55\n");
  ASSERT_TRUE(detached);
  EXPECT_EQ(detached->tpgid, -1);
  EXPECT_EQ(detached->start_time, 55u);
  EXPECT_FALSE(parse_proc_stat("7 (d) R 1 7 7 0 -1"));
  EXPECT_FALSE(parse_proc_stat("7 (d"));
  EXPECT_FALSE(parse_proc_stat(""));
}

TEST(ProcStat, ReadsThisProcess) {
  auto stat = read_proc_stat(::getpid());
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->ppid, ::getppid());
  EXPECT_EQ(stat->pgrp, ::getpgrp());
  EXPECT_EQ(stat->session, ::getsid(0));
  EXPECT_GT(stat->start_time, 0u);
  EXPECT_FALSE(read_proc_stat("/proc/nonexistent"));
}

}  // namespace
}  // namespace agentty
