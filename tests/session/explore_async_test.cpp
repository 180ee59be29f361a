// Explorer's *_async calls: the same answers as the blocking ones, in steps
// that let the event loop run other handlers in between.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "session/explore.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;

fs::path temp_path(const char* name) {
  return fs::temp_directory_path() /
         ("agentty-explore-async-test-" + std::to_string(::getpid()) + "-" + name);
}

// "row 1\n" ... "row N\n" as CR LF output.
void append_rows(OutputLog& log, std::uint64_t from, std::uint64_t to) {
  std::string chunk;
  for (std::uint64_t i = from; i <= to; ++i) {
    chunk += "row " + std::to_string(i) + "\r\n";
    if (chunk.size() > 60000) {
      log.append(chunk);
      chunk.clear();
    }
  }
  log.append(chunk);
}

// Runs `work` on a loop with a handler that re-posts itself; returns how
// often that handler ran before the work finished.
std::size_t other_turns_during(asio::io_context& io, std::function<asio::awaitable<void>()> work) {
  bool done = false;
  std::size_t turns = 0;
  std::function<void()> other = [&] {
    if (done) return;
    ++turns;
    asio::post(io, other);
  };
  asio::post(io, other);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await work();
        done = true;
      },
      asio::detached);
  io.run();
  return turns;
}

class ExploreAsync : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove(spool_); }
  const fs::path spool_ = temp_path("rows.spool");
};

TEST_F(ExploreAsync, ConversionAndGrepYieldBetweenBlocks) {
  OutputLog log({.ram_bytes = 1 << 20, .spool_cap_bytes = 1ull << 30, .spool_path = spool_});
  append_rows(log, 1, 2'000'000);  // ~24 MB raw: several conversion and search blocks
  log.mark_complete();
  Explorer explorer(log);
  asio::io_context io;
  std::optional<Expected<GrepResult>> found;
  // Options as a named local: GCC 12 destroys temporaries in a co_await
  // expression twice.
  const GrepOptions options{.pattern = "^row (1|777777|1999999)$", .before = 1};
  const std::size_t turns = other_turns_during(io, [&]() -> asio::awaitable<void> {
    auto result = co_await explorer.grep_async(options);
    found.emplace(std::move(result));
  });
  EXPECT_GE(turns, 5u) << "the loop ran nothing else while the output was converted and searched";
  ASSERT_TRUE(found && found->ok()) << (found ? found->error() : "no answer");
  const auto& matches = (*found)->matches;
  ASSERT_EQ(matches.size(), 3u);
  EXPECT_EQ(matches[0].line.line_number, 1u);
  EXPECT_EQ(matches[1].line.line_number, 777777u);
  EXPECT_EQ(matches[1].before[0].text, "row 777776");
  EXPECT_EQ(matches[2].line.text, "row 1999999");
  EXPECT_EQ((*found)->lines_searched, 2'000'000u);
  const ExploreStat stat = explorer.cached_stat();
  EXPECT_EQ(stat.line_count, 2'000'000u);
  // The blocking call agrees (it converts nothing more).
  auto same = explorer.grep({.pattern = "^row (1|777777|1999999)$", .before = 1});
  ASSERT_TRUE(same.ok());
  ASSERT_EQ(same->matches.size(), 3u);
  EXPECT_EQ(same->matches[2].line.line_number, 1999999u);
}

// A lookahead still sees past the end of a search window, and the matches on
// either side of every window boundary are all found.
TEST_F(ExploreAsync, WindowsDoNotChangeWhatMatches) {
  OutputLog log({.ram_bytes = 1 << 20, .spool_cap_bytes = 1ull << 30, .spool_path = spool_});
  append_rows(log, 1, 2'000'000);
  log.mark_complete();
  Explorer explorer(log);
  auto every = explorer.grep({.pattern = "^row \\d*0000$", .limit = 1000});
  ASSERT_TRUE(every.ok()) << every.error();
  EXPECT_EQ(every->matches.size(), 200u);
  EXPECT_FALSE(every->capped);
  auto ahead = explorer.grep({.pattern = "^row \\d+(?=\\nrow 1500000$)"});
  ASSERT_TRUE(ahead.ok()) << ahead.error();
  ASSERT_EQ(ahead->matches.size(), 1u);
  EXPECT_EQ(ahead->matches[0].line.text, "row 1499999");
}

// Calls on one explorer take turns; each gets its own answer.
TEST_F(ExploreAsync, ConcurrentCallsTakeTurns) {
  OutputLog log({.ram_bytes = 1 << 20, .spool_cap_bytes = 1ull << 30, .spool_path = spool_});
  append_rows(log, 1, 1'000'000);
  log.mark_complete();
  auto explorer = std::make_shared<Explorer>(log);
  asio::io_context io;
  std::optional<Expected<GrepResult>> first, second;
  std::optional<Expected<ExploreReadResult>> third;
  std::optional<ExploreStat> fourth;
  // Each call holds the explorer, as the explore tool does.
  asio::co_spawn(
      io,
      [&, held = explorer]() -> asio::awaitable<void> {
        const GrepOptions options{.pattern = "^row 999999$"};
        auto result = co_await held->grep_async(options);
        first.emplace(std::move(result));
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&, held = explorer]() -> asio::awaitable<void> {
        const GrepOptions options{.pattern = "^row 5$"};
        auto result = co_await held->grep_async(options);
        second.emplace(std::move(result));
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&, held = explorer]() -> asio::awaitable<void> {
        const ExploreReadOptions options{.line_offset = -1};
        auto result = co_await held->read_async(options);
        third.emplace(std::move(result));
      },
      asio::detached);
  asio::co_spawn(
      io, [&, held = explorer]() -> asio::awaitable<void> { fourth = co_await held->stat_async(); },
      asio::detached);
  explorer.reset();  // as a spool-budget drop does: the calls keep it
  io.run();
  ASSERT_TRUE(first && first->ok() && second && second->ok() && third && third->ok() && fourth);
  ASSERT_EQ((*first)->matches.size(), 1u);
  EXPECT_EQ((*first)->matches[0].line.line_number, 999999u);
  ASSERT_EQ((*second)->matches.size(), 1u);
  EXPECT_EQ((*second)->matches[0].line.line_number, 5u);
  ASSERT_EQ((*third)->lines.size(), 1u);
  EXPECT_EQ((*third)->lines[0].text, "row 1000000");
  EXPECT_EQ(fourth->line_count, 1'000'000u);
}

}  // namespace
}  // namespace agentty::session
