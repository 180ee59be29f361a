#include "session/audit_log.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "support/json_lines.hpp"
#include "support/temp_dir.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = dir_ / "state" / "audit.jsonl"; }

  std::unique_ptr<AuditLog> open(AuditLogOptions options = {}) {
    options.path = path_;
    auto log = AuditLog::open(std::move(options));
    EXPECT_TRUE(log.ok()) << log.error();
    return log.ok() ? std::move(log.value()) : nullptr;
  }

  static std::string read_all(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
  }

  test_util::TempDir temp_{"agentty-audit"};
  fs::path dir_ = temp_.path();
  fs::path path_;
};

TEST_F(AuditLogTest, WritesOneParseableLinePerRecordWithTimeFirst) {
  auto log = open();
  ASSERT_TRUE(log);
  ToolCallRecord call;
  call.tool = "execute";
  call.execution_id = "e1";
  call.purpose = "run the tests";
  call.side_effects = {"MODIFIES_WORKSPACE_FILES"};
  call.command = "make test";
  call.status = "completed";
  call.exit_code = 0;
  call.bytes = 1234;
  log->record(call);
  log->record(HumanEventRecord{HumanEventKind::handoff, "e1", "agent", "needs a 2FA code"});
  log->record(json{{"event", "takeover"}, {"time", "bogus"}, {"who", "web"}});
  EXPECT_EQ(log->last_error(), "");

  const std::string raw = read_all(path_);
  const std::regex time_first(R"(^\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",)");
  std::istringstream lines(raw);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    EXPECT_TRUE(std::regex_search(line, time_first)) << line;
  }
  EXPECT_EQ(count, 3);

  const auto records = test_util::json_lines(path_);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]["kind"], "tool");
  EXPECT_EQ(records[0]["tool"], "execute");
  EXPECT_EQ(records[0]["side_effects"], json::array({"MODIFIES_WORKSPACE_FILES"}));
  EXPECT_EQ(records[0]["exit_code"], 0);
  EXPECT_EQ(records[0]["held"], false);
  EXPECT_EQ(records[0]["bytes"], 1234);
  EXPECT_FALSE(records[0].contains("error"));
  EXPECT_EQ(records[1]["kind"], "handoff");
  EXPECT_EQ(records[1]["reason"], "needs a 2FA code");
  EXPECT_EQ(records[2]["event"], "takeover");
  EXPECT_NE(records[2]["time"], "bogus");
  EXPECT_EQ(fs::status(path_).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(AuditLogTest, AppendsToAnExistingLogAndTightensItsPermissions) {
  fs::create_directories(path_.parent_path());
  std::ofstream(path_) << "{\"old\":true}\n";
  fs::permissions(path_, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  auto log = open();
  ASSERT_TRUE(log);
  log->record(json{{"n", 1}});
  const auto records = test_util::json_lines(path_);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["old"], true);
  EXPECT_EQ(records[1]["n"], 1);
  EXPECT_EQ(fs::status(path_).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(AuditLogTest, RotatesAtTheSizeAndKeepsTheNewestFiles) {
  AuditLogOptions options;
  options.max_bytes = 1000;
  options.keep_files = 2;
  auto log = open(options);
  ASSERT_TRUE(log);
  const std::string padding(60, 'p');
  for (int n = 0; n < 60; ++n) log->record(json{{"n", n}, {"padding", padding}});

  const fs::path first = path_.string() + ".1";
  const fs::path second = path_.string() + ".2";
  ASSERT_TRUE(fs::exists(first));
  ASSERT_TRUE(fs::exists(second));
  EXPECT_FALSE(fs::exists(path_.string() + ".3"));
  const auto line_size = read_all(path_).find('\n') + 1;
  for (const auto& file : {path_, first, second}) {
    EXPECT_LE(fs::file_size(file), 1000u) << file;
    if (file != path_) {
      EXPECT_GT(fs::file_size(file) + line_size, 1000u) << file;
    }
  }
  // Oldest to newest, the kept files hold consecutive records ending at the last one.
  std::vector<int> numbers;
  for (const auto& file : {second, first, path_}) {
    for (const auto& record : test_util::json_lines(file))
      numbers.push_back(record["n"].get<int>());
  }
  ASSERT_FALSE(numbers.empty());
  EXPECT_EQ(numbers.back(), 59);
  for (std::size_t i = 1; i < numbers.size(); ++i) EXPECT_EQ(numbers[i], numbers[i - 1] + 1);
  EXPECT_GT(numbers.front(), 0);  // the oldest file was dropped
}

TEST_F(AuditLogTest, NeverWritesASecret) {
  const std::string secret = "Zq9\"web\\secret-7f3a";  // a quote and a backslash: escaped in JSON
  AuditLogOptions options;
  options.secrets = {"", secret, "7f3a"};
  options.redact = [](std::string_view text) {
    std::string out(text);
    const auto at = out.find("password=");
    if (at != std::string::npos) out = out.substr(0, at) + "password=***";
    return out;
  };
  auto log = open(options);
  ASSERT_TRUE(log);
  ToolCallRecord call;
  call.tool = "execute";
  call.command = "curl -H 'X-Secret: " + secret + "' http://127.0.0.1/?password=hunter2";
  call.purpose = "check " + secret + secret + " twice\xff";
  call.side_effects = {"MAKES_NETWORK_REQUESTS", secret};
  call.error = "token " + secret;
  log->record(call);
  log->record(json{{secret, {{"nested", json::array({secret, 7})}}}});

  const std::string raw = read_all(path_);
  EXPECT_EQ(raw.find(secret), std::string::npos) << raw;
  EXPECT_EQ(raw.find("7f3a"), std::string::npos) << raw;
  EXPECT_EQ(raw.find("Zq9\\\"web"), std::string::npos) << raw;  // the JSON-escaped form
  EXPECT_EQ(raw.find("hunter2"), std::string::npos) << raw;
  const auto records = test_util::json_lines(path_);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["command"], "curl -H 'X-Secret: [REDACTED]' http://127.0.0.1/?password=***");
  EXPECT_EQ(records[0]["purpose"], "check [REDACTED][REDACTED] twice\xEF\xBF\xBD");
  EXPECT_EQ(records[0]["side_effects"][1], "[REDACTED]");
  EXPECT_EQ(records[1]["[REDACTED]"]["nested"][0], "[REDACTED]");
}

TEST_F(AuditLogTest, ConcurrentWritersProduceWholeLines) {
  auto log = open();
  ASSERT_TRUE(log);
  auto writer = [&](int id) {
    for (int n = 0; n < 200; ++n) log->record(json{{"writer", id}, {"n", n}});
  };
  std::thread a(writer, 1);
  std::thread b(writer, 2);
  a.join();
  b.join();
  EXPECT_EQ(test_util::json_lines(path_).size(), 400u);
}

// Past RLIMIT_FSIZE a write fails (EFBIG) as on a full disk (ENOSPC): it
// writes what fits, then fails.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limited = saved_;
    limited.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limited);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  struct rlimit saved_ {};
  void (*old_handler_)(int) = nullptr;
};

// A full disk once lost records without a word (last_error() was never read)
// and left half a JSON line that the next record was appended to.
TEST_F(AuditLogTest, AFailedWriteLeavesWholeLinesAndTheGapIsRecorded) {
  auto log = open();
  ASSERT_TRUE(log);
  log->record(json{{"n", 1}});
  {
    FileSizeLimit limit(fs::file_size(path_) + 20);  // room for part of the next line only
    log->record(json{{"n", 2}, {"pad", std::string(100, 'x')}});
    log->record(json{{"n", 3}, {"pad", std::string(100, 'x')}});
    EXPECT_NE(log->last_error().find("File too large"), std::string::npos) << log->last_error();
  }
  log->record(json{{"n", 4}});
  auto lines = test_util::json_lines(path_);
  ASSERT_EQ(lines.size(), 3u) << read_all(path_);
  EXPECT_EQ(lines[0]["n"], 1);
  EXPECT_EQ(lines[1]["event"], "audit_records_lost");
  EXPECT_EQ(lines[1]["lost_records"], 2);
  EXPECT_NE(lines[1]["error"].get<std::string>().find("File too large"), std::string::npos);
  EXPECT_EQ(lines[2]["n"], 4);
}

// AGENTTY_AUDIT_LOG=/dev/null (no audit) must not chmod the device for everyone.
TEST_F(AuditLogTest, ADeviceIsUsedAsItIsWithoutChangingItsMode) {
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  AuditLogOptions options;
  options.path = "/dev/null";
  auto log = AuditLog::open(options);
  ASSERT_TRUE(log.ok()) << log.error();
  (*log)->record(json{{"n", 1}});
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_EQ(after.st_mode, before.st_mode);
  EXPECT_EQ((*log)->last_error(), "");
}

TEST_F(AuditLogTest, OpenFailureNamesThePath) {
  std::ofstream(dir_ / "file") << "x";
  AuditLogOptions options;
  options.path = dir_ / "file" / "audit.jsonl";
  auto log = AuditLog::open(options);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.error().find((dir_ / "file").string()), std::string::npos) << log.error();
}

// The default file in the state dir: a link planted there names any file of
// the user's (a ~/.bashrc) to append to and chmod. A path the operator gave
// may be a link.
TEST_F(AuditLogTest, ALinkIsRefusedUnlessLinksAreFollowed) {
  fs::create_directories(path_.parent_path());
  const fs::path target = dir_ / "target";
  std::ofstream(target) << "mine\n";
  fs::create_symlink(target, path_);
  AuditLogOptions options;
  options.path = path_;
  options.follow_links = false;
  auto refused = AuditLog::open(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("is a symbolic link"), std::string::npos) << refused.error();
  EXPECT_EQ(read_all(target), "mine\n");
  options.follow_links = true;
  auto followed = AuditLog::open(options);
  ASSERT_TRUE(followed.ok()) << followed.error();
  (*followed)->record(json{{"n", 1}});
  const auto written = read_all(target);
  EXPECT_EQ(written.rfind("mine\n", 0), 0u) << written;
  EXPECT_NE(written.find("\"n\":1"), std::string::npos) << written;
}

}  // namespace
}  // namespace agentty::session
