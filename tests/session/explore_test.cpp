#include "session/explore.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace agentty::session {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const char* name) {
  return fs::temp_directory_path() /
         ("agentty-explore-test-" + std::to_string(::getpid()) + "-" + name);
}

// "row 1\n" ... "row N\n" in coloured CR LF output.
void append_rows(OutputLog& log, std::uint64_t from, std::uint64_t to) {
  std::string chunk;
  for (std::uint64_t i = from; i <= to; ++i) {
    chunk += (i % 7 == 0 ? "\x1b[32mrow " : "row ") + std::to_string(i) + "\x1b[0m\r\n";
    if (chunk.size() > 60000) {
      log.append(chunk);
      chunk.clear();
    }
  }
  log.append(chunk);
}

TEST(Explore, StatCountsTextLinesAndTheOpenLine) {
  OutputLog log;
  log.append("a\r\nbb\x1b[31mcc\r\n10%\r100%\nlast");
  Explorer explorer(log);
  ExploreStat stat = explorer.stat();
  EXPECT_EQ(stat.size_bytes, 16u);  // "a\nbbcc\n100%\nlast"
  EXPECT_EQ(stat.line_count, 4u);
  EXPECT_EQ(stat.max_line_bytes, 4u);
  EXPECT_FALSE(stat.evicted);
  log.append(" line is longer\nnew");
  stat = explorer.stat();  // only the new bytes are converted
  EXPECT_EQ(stat.line_count, 5u);
  EXPECT_EQ(stat.max_line_bytes, 19u);
  log.mark_complete();
  EXPECT_EQ(explorer.stat().line_count, 5u);
}

TEST(Explore, GrepGivesLineNumbersAndContext) {
  OutputLog log;
  log.append("alpha\r\nbeta\r\nERROR one\r\ngamma\r\ndelta\r\nERROR two\r\n");
  Explorer explorer(log);
  auto result = explorer.grep({.pattern = "^ERROR", .before = 1, .after = 2});
  ASSERT_TRUE(result.ok()) << result.error();
  ASSERT_EQ(result->matches.size(), 2u);
  const GrepMatch& first = result->matches[0];
  EXPECT_EQ(first.line.line_number, 3u);
  EXPECT_EQ(first.line.text, "ERROR one");
  ASSERT_EQ(first.before.size(), 1u);
  EXPECT_EQ(first.before[0].text, "beta");
  EXPECT_EQ(first.before[0].line_number, 2u);
  ASSERT_EQ(first.after.size(), 2u);
  EXPECT_EQ(first.after[1].text, "delta");
  EXPECT_EQ(first.after[1].line_number, 5u);
  EXPECT_EQ(result->matches[1].line.line_number, 6u);
  EXPECT_TRUE(result->matches[1].after.empty());
  EXPECT_FALSE(result->capped);
}

TEST(Explore, GrepNeverMatchesAcrossLines) {
  OutputLog log;
  log.append("foo\nbar\nfoo bar\n");
  Explorer explorer(log);
  auto across = explorer.grep({.pattern = "foo\\s+bar"});
  ASSERT_TRUE(across.ok());
  ASSERT_EQ(across->matches.size(), 1u);
  EXPECT_EQ(across->matches[0].line.line_number, 3u);
  auto end_anchor = explorer.grep({.pattern = "o$", .ignore_case = true});
  ASSERT_TRUE(end_anchor.ok());
  ASSERT_EQ(end_anchor->matches.size(), 1u);
  EXPECT_EQ(end_anchor->matches[0].line.line_number, 1u);
}

TEST(Explore, InvalidPatternIsAClearError) {
  OutputLog log;
  log.append("x\n");
  Explorer explorer(log);
  auto result = explorer.grep({.pattern = "(abc"});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("missing closing parenthesis"), std::string::npos)
      << result.error();
  EXPECT_NE(result.error().find("offset 4"), std::string::npos) << result.error();
}

TEST(Explore, GrepLimitAndBytesCapAndContinuation) {
  OutputLog log;
  append_rows(log, 1, 1000);
  Explorer explorer(log);
  auto page = explorer.grep({.pattern = "^row \\d*5$", .limit = 10});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->matches.size(), 10u);
  EXPECT_TRUE(page->capped);
  EXPECT_EQ(page->matches[9].line.text, "row 95");
  EXPECT_EQ(page->next_start_line, 105u);
  auto next = explorer.grep({.pattern = "^row \\d*5$", .limit = 10, .start_line = 105});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->matches[0].line.line_number, 105u);
  auto small = explorer.grep({.pattern = "^row", .max_bytes = 50});
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->matches.size(), 9u);  // "row 1".."row 9" are 5 bytes each, "row 10" 6
  EXPECT_TRUE(small->capped);
}

// Text larger than one grep block and the spool-backed cache file.
TEST(Explore, LargeSpooledLogLineNumbersAndReads) {
  const fs::path spool = temp_path("large.spool");
  {
    OutputLog log({.ram_bytes = 1 << 20, .spool_cap_bytes = 1ull << 30, .spool_path = spool});
    append_rows(log, 1, 1'200'000);  // ~16 MB raw, ~12 MB text
    Explorer explorer(log);
    EXPECT_EQ(explorer.stat().line_count, 1'200'000u);
    EXPECT_TRUE(fs::exists(spool.string() + ".text"));
    auto found = explorer.grep({.pattern = "^row (777777|1199999)$", .before = 2});
    ASSERT_TRUE(found.ok());
    ASSERT_EQ(found->matches.size(), 2u);
    EXPECT_EQ(found->matches[0].line.line_number, 777777u);
    EXPECT_EQ(found->matches[0].before[0].text, "row 777775");
    EXPECT_EQ(found->matches[1].line.line_number, 1199999u);
    auto rows = explorer.read({.line_offset = 999'999, .limit = 3});
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->lines.size(), 3u);
    EXPECT_EQ(rows->lines[0].text, "row 1000000");
    EXPECT_EQ(rows->lines[0].line_number, 1'000'000u);
    EXPECT_EQ(rows->next_line_offset, 1'000'002);
    auto last = explorer.read({.line_offset = -2, .limit = 10});
    ASSERT_TRUE(last.ok());
    ASSERT_EQ(last->lines.size(), 2u);
    EXPECT_EQ(last->lines[1].text, "row 1200000");
    EXPECT_TRUE(last->at_end);
  }
  EXPECT_FALSE(fs::exists(spool.string() + ".text"));
}

TEST(Explore, ReadContinuesInsideALongLine) {
  OutputLog log;
  std::string long_line;
  for (int i = 0; i < 3000; ++i)
    long_line +=
        "\xc3\xa9"
        "abc";  // 5 bytes, 4 characters
  log.append("short\n" + long_line + "\nafter\n");
  Explorer explorer(log);
  auto first = explorer.read({.line_offset = 0, .limit = 10, .max_bytes = 4000});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->lines.size(), 2u);
  EXPECT_TRUE(first->lines[1].truncated);
  EXPECT_TRUE(first->capped);
  EXPECT_EQ(first->next_line_offset, 1);
  std::string rebuilt = first->lines[1].text;
  ExploreReadOptions next{
      .line_offset = 1, .limit = 1, .max_bytes = 4000, .byte_offset = first->next_byte_offset};
  while (next.byte_offset != 0) {
    auto more = explorer.read(next);
    ASSERT_TRUE(more.ok());
    ASSERT_FALSE(more->lines.empty());
    rebuilt += more->lines[0].text;
    next.line_offset = more->next_line_offset;
    next.byte_offset = more->next_byte_offset;
  }
  EXPECT_EQ(rebuilt, long_line);
  EXPECT_EQ(next.line_offset, 2);
}

TEST(Explore, EvictedBytesRebuildTheCacheFromTheFirstRetainedLine) {
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  append_rows(log, 1, 10);
  Explorer explorer(log);
  EXPECT_EQ(explorer.stat().line_count, 10u);
  append_rows(log, 11, 5000);
  ExploreStat stat = explorer.stat();
  EXPECT_TRUE(stat.evicted);
  EXPECT_LT(stat.line_count, 1000u);
  auto last = explorer.read({.line_offset = -1, .limit = 1});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->lines[0].text, "row 5000");
  EXPECT_EQ(last->lines[0].line_number, stat.line_count);
}

TEST(Explore, AfterAnEvictionLineOneIsTheFirstWholeLine) {
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  append_rows(log, 1, 5000);
  Explorer explorer(log);
  const ExploreStat stat = explorer.stat();
  ASSERT_TRUE(stat.evicted);
  EXPECT_FALSE(stat.first_line_cut);
  EXPECT_GT(stat.text_seq, stat.first_retained_seq);  // the cut line's end was skipped
  auto first = explorer.read({.line_offset = 0, .limit = 2});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->lines.size(), 2u);
  const std::string& one = first->lines[0].text;
  ASSERT_TRUE(one.starts_with("row ")) << one;
  EXPECT_EQ(first->lines[1].text, "row " + std::to_string(std::stoi(one.substr(4)) + 1));
  EXPECT_EQ(stat.line_count, 5000u - std::stoul(one.substr(4)) + 1);
}

TEST(Explore, AnEvictionThatCutJustAfterALineEndKeepsTheLineAfterIt) {
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  // 8-byte lines: the 4096-byte ring keeps exactly the newest 512, whole.
  for (int i = 0; i < 1000; ++i) log.append("l" + std::to_string(100000 + i) + "\n");
  Explorer explorer(log);
  const ExploreStat stat = explorer.stat();
  ASSERT_TRUE(stat.evicted);
  ASSERT_EQ(stat.first_retained_seq, 8000u - 4096u + 1u);
  EXPECT_FALSE(stat.first_line_cut);
  EXPECT_EQ(stat.text_seq, stat.first_retained_seq);
  EXPECT_EQ(stat.line_count, 512u);
  auto first = explorer.read({.line_offset = 0, .limit = 1});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->lines[0].text, "l100488");
}

TEST(Explore, AnEvictedLineWithNoEndLeftIsKeptAndSaidCut) {
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  log.append(std::string(10000, 'x'));
  Explorer explorer(log);
  const ExploreStat stat = explorer.stat();
  EXPECT_TRUE(stat.evicted);
  EXPECT_TRUE(stat.first_line_cut);
  EXPECT_EQ(stat.line_count, 1u);
  EXPECT_EQ(stat.size_bytes, 4096u);
}

std::size_t open_fds() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

TEST(Explore, TheCacheFileIsOpenOnlyDuringACall) {
  const fs::path spool = temp_path("fd.log");
  {
    OutputLog log({.ram_bytes = 1 << 16, .spool_cap_bytes = 8 << 20, .spool_path = spool});
    append_rows(log, 1, 100000);
    const std::size_t before = open_fds();
    Explorer explorer(log);
    EXPECT_EQ(explorer.stat().line_count, 100000u);
    EXPECT_TRUE(fs::exists(spool.string() + ".text"));
    EXPECT_EQ(open_fds(), before);  // an explored record kept one for its whole life
    append_rows(log, 100001, 100010);
    auto last = explorer.read({.line_offset = -1, .limit = 1});
    ASSERT_TRUE(last.ok());
    EXPECT_EQ(last->lines[0].text, "row 100010");
    // The file was removed behind its back: made again from the log.
    fs::remove(spool.string() + ".text");
    auto again = explorer.grep({.pattern = "^row 99999$"});
    ASSERT_TRUE(again.ok()) << again.error();
    ASSERT_EQ(again->matches.size(), 1u);
    EXPECT_EQ(again->matches[0].line.line_number, 99999u);
    EXPECT_EQ(open_fds(), before);
  }
  EXPECT_FALSE(fs::exists(spool.string() + ".text"));
}

TEST(Explore, AnEndlessLineGoesToTheCacheAndStaysSearchable) {
  const fs::path spool = temp_path("endless.log");
  {
    OutputLog log({.ram_bytes = 1 << 20, .spool_cap_bytes = 64 << 20, .spool_path = spool});
    Explorer explorer(log);
    log.append("first\r\n");
    const std::string block(1 << 20, 'a');
    for (int i = 0; i < 5; ++i) log.append(block);
    log.append("MIDDLE");
    EXPECT_EQ(explorer.stat().line_count, 2u);
    for (int i = 0; i < 2; ++i) log.append(block);
    // The CR goes back to where the line's text was last taken to the cache
    // (just after MIDDLE), not to the line's start.
    log.append("\rEND");
    ExploreStat stat = explorer.stat();
    EXPECT_EQ(stat.line_count, 2u);
    EXPECT_GE(explorer.cache_bytes(), 5u << 20);  // on disk, not in memory
    auto middle = explorer.grep({.pattern = "aMIDDLEENDa"});
    ASSERT_TRUE(middle.ok()) << middle.error();
    ASSERT_EQ(middle->matches.size(), 1u);
    EXPECT_EQ(middle->matches[0].line.line_number, 2u);
    auto end = explorer.grep({.pattern = "ENDa+$"});
    ASSERT_TRUE(end.ok()) << end.error();
    EXPECT_EQ(end->matches.size(), 1u);
    log.mark_complete();
    stat = explorer.stat();
    EXPECT_EQ(stat.line_count, 2u);
    EXPECT_EQ(stat.max_line_bytes, stat.size_bytes - 6);
    auto tail = explorer.read(
        {.line_offset = -1, .limit = 1, .max_bytes = 256, .byte_offset = stat.max_line_bytes - 4});
    ASSERT_TRUE(tail.ok());
    EXPECT_EQ(tail->lines[0].text, "aaaa");
    auto first = explorer.read({.line_offset = 0, .limit = 1});
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->lines[0].text, "first");
  }
  EXPECT_FALSE(fs::exists(spool.string() + ".text"));
}

}  // namespace
}  // namespace agentty::session
