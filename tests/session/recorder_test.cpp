#include "session/recorder.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <vector>

#include "support/json_lines.hpp"
#include "support/temp_dir.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {}

  std::unique_ptr<Recorder> open(
      std::uint64_t max_bytes = 1 << 20,
      std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now()) {
    RecorderOptions options;
    options.start = start;
    options.path = dir_ / "rec.cast";
    options.cols = 80;
    options.rows = 24;
    options.title = "make test";
    options.shell = "/bin/bash";
    options.max_bytes = max_bytes;
    auto recorder = Recorder::open(options);
    EXPECT_TRUE(recorder.ok()) << recorder.error();
    return recorder.ok() ? std::move(recorder.value()) : nullptr;
  }

  // Every line of the file, each parsed as JSON (a parse failure fails the test).
  std::vector<json> lines() { return test_util::json_lines(dir_ / "rec.cast"); }

  test_util::TempDir temp_{"agentty-recorder"};
  fs::path dir_ = temp_.path();
};

// Runs `asciinema cat FILE` with a real PTY as its controlling terminal (it
// opens /dev/tty) and its stdout redirected to a file; returns that stdout.
std::string asciinema_cat(const fs::path& cast, const fs::path& dir) {
  const std::string out_path = (dir / "cat.out").string();
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, STDOUT_FILENO);
    ::setenv("LC_ALL", "C.UTF-8", 1);
    ::setenv("ASCIINEMA_CONFIG_HOME", dir.c_str(), 1);
    ::execl("/usr/bin/asciinema", "asciinema", "cat", cast.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  EXPECT_GT(pid, 0);
  // Drain the terminal (error messages land there) until the child closes it.
  std::string terminal;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd fd{master, POLLIN, 0};
    if (::poll(&fd, 1, 1000) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO once the child side is closed
    terminal.append(buffer, static_cast<std::size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "asciinema said: " << terminal;
  std::ifstream in(out_path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST(RecorderUtf8, HoldsBackOnlyAnIncompleteTrailingCharacter) {
  std::string carry;
  EXPECT_EQ(take_complete_utf8(carry, "abc"), "abc");
  EXPECT_EQ(carry, "");
  EXPECT_EQ(take_complete_utf8(carry, "x\xE2\x82"), "x");  // first two bytes of U+20AC
  EXPECT_EQ(carry, "\xE2\x82");
  EXPECT_EQ(take_complete_utf8(carry, "\xAC!"), "\xE2\x82\xAC!");
  EXPECT_EQ(carry, "");
  EXPECT_EQ(take_complete_utf8(carry, "\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");  // whole emoji
  EXPECT_EQ(take_complete_utf8(carry, "\xF0"), "");
  EXPECT_EQ(take_complete_utf8(carry, "\x9F"), "");
  EXPECT_EQ(take_complete_utf8(carry, "\x98\x80z"), "\xF0\x9F\x98\x80z");
  EXPECT_EQ(take_complete_utf8(carry, "bad\xFF"), "bad\xFF");  // never a lead byte: not held
  EXPECT_EQ(carry, "");
}

TEST_F(RecorderTest, HeaderAndEventsAreJsonLinesWithSplitCharactersWhole) {
  auto recorder = open();
  ASSERT_TRUE(recorder);
  recorder->output("caf\xC3");
  recorder->output("\xA9 \xF0\x9F");
  recorder->output("\x98\x80\r\n");
  recorder->resize(100, 30);
  recorder->input("ls\r", false);
  recorder->input("y", true);
  recorder->marker("takeover by web");
  recorder->finish();

  const auto all = lines();
  ASSERT_EQ(all.size(), 10u);  // header, 8 events, the takeover marker
  const json& header = all[0];
  EXPECT_EQ(header["version"], 2);
  EXPECT_EQ(header["width"], 80);
  EXPECT_EQ(header["height"], 24);
  EXPECT_TRUE(header["timestamp"].is_number_integer());
  EXPECT_EQ(header["title"], "make test");
  EXPECT_EQ(header["env"]["TERM"], "xterm-256color");
  EXPECT_EQ(header["env"]["SHELL"], "/bin/bash");

  const std::vector<std::pair<std::string, std::string>> expected = {
      {"o", "caf"},         {"o", "\xC3\xA9 "}, {"o", "\xF0\x9F\x98\x80\r\n"}, {"r", "100x30"},
      {"m", "agent input"}, {"i", "ls\r"},      {"m", "human input"},          {"i", "y"}};
  double previous = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const json& event = all[i + 1];
    ASSERT_TRUE(event.is_array() && event.size() == 3) << event;
    EXPECT_GE(event[0].get<double>(), previous);
    previous = event[0].get<double>();
    EXPECT_EQ(event[1], expected[i].first) << i;
    EXPECT_EQ(event[2], expected[i].second) << i;
  }
  EXPECT_EQ(all.back()[1], "m");
  EXPECT_EQ(all.back()[2], "takeover by web");
  EXPECT_EQ(fs::status(dir_ / "rec.cast").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

// The clock starts when the program did (RecorderOptions::start), not when
// the recording was opened a moment later: output is never stamped earlier
// than it came, and the header's timestamp is the program's start.
TEST_F(RecorderTest, TimesCountFromTheGivenStart) {
  const auto now = std::chrono::system_clock::now();
  auto recorder = open(1 << 20, std::chrono::steady_clock::now() - std::chrono::seconds(30));
  ASSERT_TRUE(recorder);
  recorder->output("late\r\n");
  recorder->finish();
  const auto all = lines();
  ASSERT_EQ(all.size(), 2u);
  const auto started = std::chrono::duration_cast<std::chrono::seconds>(
                           (now - std::chrono::seconds(30)).time_since_epoch())
                           .count();
  EXPECT_NEAR(all[0]["timestamp"].get<double>(), static_cast<double>(started), 2.0);
  EXPECT_GE(all[1][0].get<double>(), 30.0);
  EXPECT_LT(all[1][0].get<double>(), 90.0);
}

TEST_F(RecorderTest, AsciinemaCatPrintsExactlyTheOutputBytes) {
  const std::vector<std::string> chunks = {
      "hello \xE2\x82",     "\xAC world\r\n", "\x1b[1;31mred\x1b[0m caf\xC3",   "\xA9\r\n",
      "emoji \xF0\x9F\x98", "\x80 done\r\n",  "progress 10%\rprogress 100%\r\n"};
  std::string expected;
  {
    auto recorder = open();
    ASSERT_TRUE(recorder);
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      recorder->output(chunks[i]);
      expected += chunks[i];
      if (i == 2) recorder->resize(132, 43);
      if (i == 3) recorder->input("q", true);
    }
  }  // the destructor finishes the file
  for (const auto& line : lines()) EXPECT_TRUE(line.is_object() || line.is_array());
  EXPECT_EQ(asciinema_cat(dir_ / "rec.cast", dir_), expected);
}

// Bulk output: large chunks of mixed text split at arbitrary bytes (inside
// characters too), a large event followed by small ones (the reused event
// buffer must not leak old bytes), one over the kept-buffer size. The "o"
// events concatenate to exactly the input, each event whole UTF-8.
TEST_F(RecorderTest, LargeChunksSplitAnywhereRecordExactlyTheOutput) {
  std::mt19937 random(5);
  const std::string pieces[] = {"plain text ",      "caf\xC3\xA9 ", "\xE2\x82\xAC",
                                "\xF0\x9F\x98\x80", "\r\n",         "\x1b[32mgreen\x1b[0m",
                                "\"q\" \\ "};
  std::string text;
  while (text.size() < (1u << 20)) text += pieces[random() % std::size(pieces)];
  const std::size_t sizes[] = {65536, 3, 1, 300 << 10, 7, 65536, 100000, 2};
  {
    auto recorder = open(8u << 20);
    ASSERT_TRUE(recorder);
    for (std::size_t at = 0, i = 0; at < text.size(); ++i) {
      const std::size_t size = std::min(sizes[i % std::size(sizes)], text.size() - at);
      recorder->output(std::string_view(text).substr(at, size));
      at += size;
    }
  }
  std::string recorded;
  const auto all = lines();
  for (std::size_t i = 1; i < all.size(); ++i) {
    ASSERT_EQ(all[i][1], "o");
    recorded += all[i][2].get<std::string>();
  }
  EXPECT_EQ(recorded, text);
}

TEST_F(RecorderTest, InvalidBytesBecomeReplacementCharacters) {
  auto recorder = open();
  ASSERT_TRUE(recorder);
  recorder->output(
      "a\xFF"
      "b\xC3(");                 // 0xFF never valid; C3 followed by ASCII
  recorder->output("\xE2\x82");  // held back, then flushed incomplete by finish
  recorder->finish();
  const auto all = lines();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1][2],
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD(");
  EXPECT_EQ(all[2][1], "o");
  EXPECT_NE(all[2][2].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos);
}

TEST_F(RecorderTest, StopsAtSizeCapWithFinalMarker) {
  constexpr std::uint64_t kCap = 4096;
  auto recorder = open(kCap);
  ASSERT_TRUE(recorder);
  const std::string chunk(100, 'x');
  for (int i = 0; i < 200; ++i) recorder->output(chunk);
  EXPECT_TRUE(recorder->stopped());
  const auto size_at_stop = fs::file_size(dir_ / "rec.cast");
  recorder->output("after the cap");
  recorder->marker("after the cap");
  recorder.reset();
  EXPECT_EQ(fs::file_size(dir_ / "rec.cast"), size_at_stop);
  EXPECT_LE(size_at_stop, kCap + 200);

  const auto all = lines();
  ASSERT_GT(all.size(), 10u);
  EXPECT_EQ(all.back()[1], "m");
  EXPECT_NE(all.back()[2].get<std::string>().find("size limit of 4096 bytes"), std::string::npos);
  for (std::size_t i = 1; i + 1 < all.size(); ++i) EXPECT_EQ(all[i][2], chunk);
}

TEST_F(RecorderTest, OpenFailsWithAClearMessage) {
  RecorderOptions options;
  options.path = dir_ / "missing-dir" / "rec.cast";
  auto recorder = Recorder::open(options);
  ASSERT_FALSE(recorder.ok());
  EXPECT_NE(recorder.error().find("cannot create recording"), std::string::npos);
  EXPECT_NE(recorder.error().find("open: No such file or directory"), std::string::npos);
}

// A full disk (here: a file size limit of 0) leaves no empty file behind,
// which the recordings list and the replay page would show as a recording.
TEST_F(RecorderTest, OpenThatCannotWriteTheHeaderLeavesNoFile) {
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* saved_handler = std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead
  struct rlimit none = saved;
  none.rlim_cur = 0;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &none), 0);
  RecorderOptions options;
  options.path = dir_ / "rec.cast";
  auto recorder = Recorder::open(options);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);
  ASSERT_FALSE(recorder.ok());
  EXPECT_NE(recorder.error().find("cannot write recording"), std::string::npos);
  EXPECT_FALSE(fs::exists(options.path));
}

// A write the disk cut short (here: a file size limit) left half an event
// and no word of it: the replay showed a cut recording as the whole session.
// The half event goes, and a marker in the room it took says why.
TEST_F(RecorderTest, AWriteCutShortEndsOnAWholeEventAndAMarkerSayingWhy) {
  auto recorder = open();
  ASSERT_TRUE(recorder);
  recorder->output("before\r\n");
  const auto whole = fs::file_size(dir_ / "rec.cast");
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* saved_handler = std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead
  struct rlimit small = saved;
  small.rlim_cur = whole + 500;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  recorder->output(std::string(2000, 'x'));  // 500 bytes of it fit
  const bool stopped = recorder->stopped();
  recorder->output("after");
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);
  EXPECT_TRUE(stopped);
  EXPECT_NE(recorder->error().find("File too large"), std::string::npos) << recorder->error();
  EXPECT_EQ(recorder->bytes_written(), fs::file_size(dir_ / "rec.cast"));
  recorder.reset();

  const auto all = lines();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1][2], "before\r\n");
  EXPECT_EQ(all[2][1], "m");
  EXPECT_EQ(all[2][2].get<std::string>().rfind(
                "recording stopped: cannot write it (write: File too large", 0),
            0u)
      << all[2][2];
}

}  // namespace
}  // namespace agentty::session
