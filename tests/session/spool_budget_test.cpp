// The total spool budget (AGENTTY_MAX_TOTAL_SPOOL_BYTES) while output flows:
// OutputLog::freeze_spool stops a log's spool from growing, and the Registry
// freezes the spool of the execution writing once all executions together
// pass the budget, with real processes under real PTYs.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "session/output_log.hpp"
#include "session/registry.hpp"
#include "support/registry_fixture.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path spool_file(const char* name) {
  return fs::temp_directory_path() /
         ("agentty-budget-test-" + std::to_string(::getpid()) + "-" + name + ".spool");
}

std::string rows(std::size_t bytes, std::size_t from = 0) {
  std::string data;
  for (std::size_t i = from; data.size() < bytes; ++i) data += "row " + std::to_string(i) + "\n";
  data.resize(bytes);
  return data;
}

TEST(SpoolFreeze, AFrozenSpoolKeepsItsSizeAndTheNewestBytes) {
  const fs::path path = spool_file("frozen");
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 1 << 20, .spool_path = path});
  const std::string data = rows(200000);
  log.append(data.substr(0, 50000));
  log.freeze_spool();
  EXPECT_EQ(log.spool_frozen_at(), 50001u);
  for (std::size_t at = 50000; at < data.size(); at += 1000) log.append(data.substr(at, 1000));
  // The spool holds the 50000 bytes it had, now the newest ones; RAM a little more.
  EXPECT_EQ(fs::file_size(path), 50000u);
  const std::uint64_t first = log.first_retained_seq();
  EXPECT_LE(first, log.latest_seq() - 50000);
  EXPECT_GE(first, log.latest_seq() - 50000 - 4096);
  LogPage page = log.read(1, 1 << 20);
  EXPECT_TRUE(page.evicted);
  EXPECT_EQ(page.start_seq, first);
  EXPECT_TRUE(page.bytes == data.substr(first - 1));
  log.freeze_spool();  // idempotent
  EXPECT_EQ(log.spool_frozen_at(), 50001u);
}

TEST(SpoolFreeze, FrozenWhileEverythingFitsInRamTheRingAloneRemains) {
  const fs::path path = spool_file("ram");
  OutputLog log({.ram_bytes = 8192, .spool_cap_bytes = 1 << 20, .spool_path = path});
  const std::string data = rows(100000);
  log.append(data.substr(0, 3000));
  log.freeze_spool();
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(log.read(1, 1 << 20).bytes, data.substr(0, 3000));
  for (std::size_t at = 3000; at < data.size(); at += 1000) log.append(data.substr(at, 1000));
  EXPECT_EQ(log.first_retained_seq(), log.latest_seq() - 8192);
  EXPECT_TRUE(log.read(1, 100).evicted);
  EXPECT_EQ(log.copy_range(1, log.latest_seq()), data.substr(data.size() - 8192));
}

class SpoolBudget : public test_support::RegistryFixture {
 protected:
  void configure(RegistryOptions& options) override {
    options.execution.log.ram_bytes = 16 << 10;
    options.execution.log.spool_cap_bytes = 8 << 20;
    options.max_total_spool_bytes = kBudget;
  }

  void wait_finished(const std::shared_ptr<Execution>& execution) {
    ASSERT_TRUE(eventually([&] { return execution->finished(); })) << "did not finish";
  }

  static constexpr std::uint64_t kBudget = 256 << 10;
};

// Two programs print 650 KB each against a 256 KiB budget: both run to the end
// (never blocked or killed), the total stays within the budget plus one RAM
// ring per execution, and the newest output of each is still readable.
TEST_F(SpoolBudget, OutputPastTheBudgetFreezesTheWritersSpoolAndNeverStopsThem) {
  const std::string print =
      "i=0; while [ $i -lt 20000 ]; do echo \"line $i of fifty bytes......\"; "
      "i=$((i+1)); done; echo done";
  auto first = start(print);
  auto second = start(print);
  ASSERT_TRUE(first && second);
  wait_finished(first);
  wait_finished(second);
  loop_.on_loop([&] {
    for (auto& execution : {first, second}) {
      EXPECT_EQ(execution->status(), ExecutionStatus::completed);
      EXPECT_EQ(execution->exit_status()->shell_code(), 0);
      EXPECT_GT(execution->log().total_bytes(), 600000u);
      EXPECT_NE(execution->log().spool_frozen_at(), 0u);
      EXPECT_TRUE(execution->log().read(1, 100).evicted);
      auto tail = execution->log().tail_lines(1, 1000);
      EXPECT_EQ(tail.bytes, "done\r\n");
    }
    // Past the budget by at most, for each writer, the chunk that found the
    // total over it (both may cross it at once) and its RAM ring.
    EXPECT_LE(registry_->spool_bytes(), kBudget + 2 * (64 << 10) + 2 * (16 << 10));
    return 0;
  });
}

// An ended execution's record is dropped before a running one is frozen.
TEST_F(SpoolBudget, EndedRecordsAreDroppedBeforeARunningSpoolIsFrozen) {
  auto old = start("head -c 200000 /dev/zero | tr '\\0' x; echo");
  ASSERT_TRUE(old);
  wait_finished(old);
  const std::string id = old->id();
  auto fresh = start("head -c 150000 /dev/zero | tr '\\0' y; echo");
  ASSERT_TRUE(fresh);
  wait_finished(fresh);
  loop_.on_loop([&] {
    EXPECT_EQ(registry_->find(id), nullptr);
    EXPECT_EQ(fresh->log().spool_frozen_at(), 0u);
    EXPECT_FALSE(fresh->log().read(1, 100).evicted);
    return 0;
  });
}

}  // namespace
}  // namespace agentty::session
