#include "session/output_log.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "session/text_view.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;

fs::path temp_spool(const char* name) {
  return fs::temp_directory_path() /
         ("agentty-log-test-" + std::to_string(::getpid()) + "-" + name + ".spool");
}

// Deterministic terminal-like output: lines of words with SGR colours,
// UTF-8, CR LF endings and short progress-bar overwrites.
class SyntheticOutput {
 public:
  explicit SyntheticOutput(std::uint64_t seed, std::uint64_t total) : state_(seed), left_(total) {}

  bool done() const { return left_ == 0; }

  std::string next_block() {
    std::string block;
    while (block.size() < (64 << 10)) append_line(block);
    if (block.size() > left_) block.resize(left_);
    left_ -= block.size();
    return block;
  }

 private:
  std::uint64_t rand() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }

  void append_line(std::string& out) {
    // With DEC line drawing in G0 and G1 (ESC ( 0, ESC ) 0 and SO), which
    // pages must carry over (OutputLog::charsets_at).
    static const char* const kPieces[] = {
        "\x1b[31m", "\x1b[0m", "\x1b[1;32m",       "\xc3\xa9", "\xe2\x9c\x93", "\xf0\x9f\x99\x82",
        "\t",       "\x1b(0",  "\x1b]0;t\x0e\x07", "\x1b(B",   "\x1b)0\x0e",   "\x0f"};
    const std::uint64_t r = rand();
    if (r % 16 == 0) {  // progress bar: short overwritten line
      for (int p = 0; p < 3; ++p) out += std::to_string(r % 100 + p) + "% done\r";
    }
    const std::size_t words = 1 + r % 12;
    for (std::size_t w = 0; w < words; ++w) {
      const std::uint64_t x = rand();
      if (x % 5 == 0) out += kPieces[(x >> 8) % std::size(kPieces)];
      const std::size_t length = 1 + (x >> 16) % 9;
      for (std::size_t i = 0; i < length; ++i) out += static_cast<char>('a' + (x >> (20 + i)) % 26);
      out += ' ';
    }
    out += "\r\n";
  }

  std::uint64_t state_;
  std::uint64_t left_;
};

// Compares two byte streams that arrive in different pieces.
class StreamMatch {
 public:
  void add_left(std::string_view s) {
    left_ += s;
    settle();
  }
  void add_right(std::string_view s) {
    right_ += s;
    settle();
  }
  bool right_behind() const { return right_.size() < left_.size(); }
  bool equal_so_far() const { return !mismatch_; }
  bool drained() const { return left_.empty() && right_.empty(); }
  std::uint64_t matched() const { return matched_; }

 private:
  void settle() {
    const std::size_t n = std::min(left_.size(), right_.size());
    if (std::memcmp(left_.data(), right_.data(), n) != 0) mismatch_ = true;
    left_.erase(0, n);
    right_.erase(0, n);
    matched_ += n;
  }
  std::string left_, right_;
  std::uint64_t matched_ = 0;
  bool mismatch_ = false;
};

std::string read_all(const OutputLog& log, std::size_t page_bytes) {
  std::string all;
  for (std::uint64_t seq = 1;;) {
    LogPage page = log.read(seq, page_bytes);
    if (page.bytes.empty()) break;
    EXPECT_EQ(page.start_seq, seq);
    all += page.bytes;
    seq = page.next_seq;
  }
  return all;
}

TEST(OutputLog, PositionsStartAtOneAndGrow) {
  OutputLog log;
  EXPECT_EQ(log.latest_seq(), 1u);
  log.append("hello ");
  log.append("world\n");
  EXPECT_EQ(log.latest_seq(), 13u);
  LogPage page = log.read(1, 100);
  EXPECT_EQ(page.bytes, "hello world\n");
  EXPECT_EQ(page.next_seq, 13u);
  EXPECT_FALSE(page.capped);
  page = log.read(7, 100);
  EXPECT_EQ(page.bytes, "world\n");
  page = log.read(50, 100);
  EXPECT_TRUE(page.bytes.empty());
  EXPECT_EQ(page.start_seq, 13u);
  EXPECT_EQ(page.next_seq, 13u);
}

TEST(OutputLog, RamOnlyLogEvictsOldestBytes) {
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  std::string data;
  for (int i = 0; i < 1000; ++i) data += "line " + std::to_string(i) + "\n";
  log.append(data);
  EXPECT_EQ(log.first_retained_seq(), log.latest_seq() - 4096);
  LogPage page = log.read(1, 1 << 20);
  EXPECT_TRUE(page.evicted);
  EXPECT_EQ(page.start_seq, log.first_retained_seq());
  EXPECT_EQ(page.bytes, data.substr(data.size() - 4096));
}

TEST(OutputLog, SpoolKeepsWhatRamEvictedAndIsRemovedAfterwards) {
  const fs::path path = temp_spool("spool");
  std::string data;
  {
    OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 1 << 20, .spool_path = path});
    EXPECT_FALSE(fs::exists(path));  // made when the first batch goes out
    std::mt19937 rng(1);
    while (data.size() < 300000) {
      std::string chunk(1 + rng() % 3000, 'x');
      for (char& c : chunk) c = static_cast<char>(' ' + rng() % 90);
      chunk += "\r\n";
      data += chunk;
      log.append(chunk);
    }
    log.append(std::string(20000, 'L'));  // one append larger than the ring
    data += std::string(20000, 'L');
    ASSERT_TRUE(log.spool_error().empty()) << log.spool_error();
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u);
    EXPECT_EQ(log.first_retained_seq(), 1u);
    EXPECT_TRUE(read_all(log, 7000) == data);
    EXPECT_EQ(log.copy_range(1000, 1100), data.substr(999, 100));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(OutputLog, ACompleteLogWhollyOnTheSpoolGivesItsRamBackAndReadsTheSame) {
  const fs::path path = temp_spool("release");
  OutputLog log({.ram_bytes = 1 << 20, .spool_cap_bytes = 8 << 20, .spool_path = path});
  std::string data;
  for (int i = 0; data.size() < 3'000'000; ++i) data += "line " + std::to_string(i) + "\r\n";
  log.append(data);
  log.release_ram();  // not complete yet: nothing changes
  EXPECT_EQ(log.tail_lines(1, 100).bytes, data.substr(data.rfind("line ")));
  log.mark_complete();
  log.release_ram();
  EXPECT_TRUE(read_all(log, 70000) == data);
  EXPECT_EQ(log.tail_lines(2, 1000).bytes,
            data.substr(data.rfind("line ", data.rfind("line ") - 1)));
  EXPECT_EQ(log.first_retained_seq(), 1u);
}

std::size_t open_fds() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

TEST(OutputLog, AReleasedLogHoldsNoFileOpenAndStillReadsItsSpool) {
  const fs::path path = temp_spool("release-fd");
  {
    OutputLog log({.ram_bytes = 1 << 16, .spool_cap_bytes = 8 << 20, .spool_path = path});
    std::string data;
    for (int i = 0; data.size() < 1'000'000; ++i) data += "row " + std::to_string(i) + "\r\n";
    log.append(data);
    log.mark_complete();
    const std::size_t before = open_fds();
    log.release_ram();
    EXPECT_EQ(open_fds(), before - 1);  // a retained record held an fd for its whole life
    EXPECT_TRUE(read_all(log, 70000) == data);
    EXPECT_EQ(log.copy_range(1, 7), "row 0\r");
    EXPECT_EQ(open_fds(), before - 1);
    log.freeze_spool();  // nothing to freeze: complete
    EXPECT_EQ(log.first_retained_seq(), 1u);
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(OutputLog, ReleasingRamKeepsEverythingWhenTheSpoolLacksPartOfIt) {
  // No spool file (all in RAM) and a RAM-only log keep their ring.
  OutputLog small(
      {.ram_bytes = 1 << 20, .spool_cap_bytes = 8 << 20, .spool_path = temp_spool("small")});
  small.append("short\r\n");
  small.mark_complete();
  small.release_ram();
  EXPECT_EQ(read_all(small, 100), "short\r\n");
  OutputLog ram_only({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  std::string data(10000, 'r');
  ram_only.append(data);
  ram_only.mark_complete();
  ram_only.release_ram();
  EXPECT_EQ(ram_only.first_retained_seq(), 10000u - 4096u + 1u);
  EXPECT_EQ(ram_only.read(ram_only.first_retained_seq(), 100000).bytes, data.substr(10000 - 4096));
}

TEST(OutputLog, SmallAppendsAreBatchedNotWrittenOneByOne) {
  const fs::path path = temp_spool("batch");
  OutputLog log({.ram_bytes = 1 << 20, .spool_cap_bytes = 1 << 30, .spool_path = path});
  for (int i = 0; i < 1000; ++i) log.append("0123456789");
  log.flush();
  EXPECT_FALSE(fs::exists(path));  // all of it fits in RAM: no file, even on flush
  for (int i = 0; i < 30000; ++i) log.append("0123456789");
  EXPECT_GE(fs::file_size(path), 256u << 10);  // one batch went out
  log.flush();
  EXPECT_EQ(fs::file_size(path), log.total_bytes());
}

TEST(OutputLog, AnUnwritableSpoolLeavesTheRingAloneWithAReason) {
  // Under a file, not a missing directory: that one would be made.
  OutputLog log(
      {.ram_bytes = 4096, .spool_cap_bytes = 1 << 20, .spool_path = "/dev/null/agentty/spool.log"});
  std::string data;
  for (int i = 0; data.size() < 20000; ++i) data += "line " + std::to_string(i) + "\n";
  for (std::size_t at = 0; at < data.size(); at += 500) log.append(data.substr(at, 500));
  EXPECT_NE(log.spool_error().find("cannot write the spool file /dev/null/agentty/spool.log: "),
            std::string::npos)
      << log.spool_error();
  EXPECT_NE(log.spool_error().find("Not a directory"), std::string::npos) << log.spool_error();
  EXPECT_EQ(log.first_retained_seq(), log.latest_seq() - 4096);
  EXPECT_TRUE(log.read(1, 100).evicted);
  EXPECT_EQ(log.copy_range(1, log.latest_seq()), data.substr(data.size() - 4096));
}

// A state dir removed by hand while the server runs: its spool directory is
// made again (0700), not every later long output lost.
TEST(OutputLog, ASpoolWhoseDirectoryWentMakesItAgain) {
  const fs::path dir = temp_spool("gone");
  const fs::path path = dir / "spool" / "x.log";
  fs::remove_all(dir);
  {
    OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 1 << 20, .spool_path = path});
    const std::string data(20000, 'x');
    log.append(data);
    ASSERT_TRUE(log.spool_error().empty()) << log.spool_error();
    EXPECT_EQ(log.first_retained_seq(), 1u);
    EXPECT_EQ(log.copy_range(1, log.latest_seq()), data);
    struct stat info {};
    ASSERT_EQ(::stat(path.parent_path().c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
  }
  fs::remove_all(dir);
}

// A spool in a directory that exists is the caller's choice: its mode stays
// (a check made "private" at every spool turned /tmp into 0700 when the
// tests spooled there as root).
TEST(OutputLog, ASpoolLeavesTheModeOfAnExistingDirectoryAlone) {
  const fs::path dir = temp_spool("shared");
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 01777);
  {
    OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 1 << 20, .spool_path = dir / "x.log"});
    log.append(std::string(20000, 'x'));
    ASSERT_TRUE(log.spool_error().empty()) << log.spool_error();
    ASSERT_TRUE(fs::exists(dir / "x.log"));
  }
  struct stat info {};
  ASSERT_EQ(::stat(dir.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 01777u);
  fs::remove_all(dir);
}

TEST(OutputLog, PastTheSpoolCapTheOldestBytesAreGone) {
  const fs::path path = temp_spool("cap");
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 65536, .spool_path = path});
  std::string data;
  for (int i = 0; data.size() < 200000; ++i) data += "row " + std::to_string(i) + "\n";
  for (std::size_t at = 0; at < data.size(); at += 1000) log.append(data.substr(at, 1000));
  const std::uint64_t first = log.first_retained_seq();
  // The spool keeps the newest 64 KiB it was given; RAM may hold a little more.
  EXPECT_LE(first, log.latest_seq() - 65536);
  EXPECT_GE(first, log.latest_seq() - 65536 - 4096);
  LogPage page = log.read(1, 1 << 20);
  EXPECT_TRUE(page.evicted);
  EXPECT_EQ(page.start_seq, first);
  EXPECT_TRUE(page.bytes == data.substr(first - 1));
  EXPECT_FALSE(log.read(first, 100).evicted);
}

// Appends lines of random lengths in random pieces and checks, after each,
// that the log knows whether the byte just before its first retained one
// (already overwritten) was a LF. `data` is everything appended so far.
void expect_known_line_start_after_each_cut(OutputLog& log, std::string& data) {
  std::mt19937 random(7);
  for (int piece = 0; piece < 3000; ++piece) {
    std::string bytes;
    const int size = std::uniform_int_distribution<int>(1, 900)(random);
    for (int i = 0; i < size; ++i)
      bytes += std::uniform_int_distribution<int>(0, 9)(random) == 0 ? '\n' : 'x';
    log.append(bytes);
    data += bytes;
    const std::uint64_t first = log.first_retained_seq();
    const bool expected = first > 1 && data[first - 2] == '\n';
    ASSERT_EQ(log.retained_starts_a_line(), expected) << "piece " << piece << " first " << first;
  }
  EXPECT_GT(log.first_retained_seq(), 100000u);
}

TEST(OutputLog, ARamOnlyLogKnowsWhetherItsOldestByteStartsALine) {
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  EXPECT_FALSE(log.retained_starts_a_line());  // nothing evicted
  std::string data;
  expect_known_line_start_after_each_cut(log, data);
}

TEST(OutputLog, ASpoolKnowsWhetherItsOldestByteStartsALine) {
  const fs::path path = temp_spool("line-start");
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 10000, .spool_path = path});
  std::string data;
  expect_known_line_start_after_each_cut(log, data);
  log.freeze_spool();  // from here the spool keeps what it holds as a ring
  expect_known_line_start_after_each_cut(log, data);
}

// What the tools tell the agent it keeps: the most it can hold, not what it
// holds so far (a running execution's count grew past the budget's words).
TEST(OutputLog, RetentionCapacityIsTheLargerStoreInUse) {
  OutputLog ram_only({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  ram_only.append("short");
  EXPECT_EQ(ram_only.retention_capacity(), 4096u);

  const fs::path path = temp_spool("capacity");
  OutputLog spooled({.ram_bytes = 4096, .spool_cap_bytes = 10000, .spool_path = path});
  EXPECT_EQ(spooled.retention_capacity(), 10000u);
  spooled.append(std::string(6000, 'x'));
  spooled.freeze_spool();  // the spool keeps the 6000 bytes it holds, as a ring
  EXPECT_EQ(spooled.retention_capacity(), 6000u);
  spooled.append(std::string(20000, 'y'));
  EXPECT_EQ(spooled.latest_seq() - spooled.first_retained_seq(), 6000u);

  OutputLog small({.ram_bytes = 4096, .spool_cap_bytes = 10000, .spool_path = temp_spool("cap2")});
  small.append("fits in RAM");
  small.freeze_spool();  // no file was needed: the ring alone keeps the newest
  EXPECT_EQ(small.retention_capacity(), 4096u);
}

TEST(OutputLog, IncompleteUnitAtTheLiveEndIsHeldBack) {
  OutputLog log;
  log.append("ok \xe2\x9c");
  LogPage page = log.read(1, 100);
  EXPECT_EQ(page.bytes, "ok ");
  EXPECT_FALSE(page.capped);
  log.append("\x93 \x1b[3");
  EXPECT_EQ(log.read(page.next_seq, 100).bytes, "\xe2\x9c\x93 ");
  log.mark_complete();
  EXPECT_EQ(log.read(page.next_seq, 100).bytes, "\xe2\x9c\x93 \x1b[3");
}

TEST(OutputLog, UnitLargerThanThePageIsReturnedWhole) {
  OutputLog log;
  const std::string osc = "\x1b]52;c;" + std::string(50000, 'A') + "\x07";
  log.append("x" + osc + "y");
  LogPage page = log.read(2, 100);
  EXPECT_EQ(page.bytes, osc);
  EXPECT_TRUE(page.capped);
  EXPECT_EQ(log.read(page.next_seq, 100).bytes, "y");
}

TEST(OutputLog, TailLinesReturnsTheNewestLines) {
  OutputLog log;
  log.append("one\ntwo\nthree\n");
  EXPECT_EQ(log.tail_lines(2, 1000).bytes, "two\nthree\n");
  EXPECT_EQ(log.tail_lines(10, 1000).bytes, "one\ntwo\nthree\n");
  log.append("four");  // a trailing partial line counts
  LogPage page = log.tail_lines(2, 1000);
  EXPECT_EQ(page.bytes, "three\nfour");
  EXPECT_EQ(page.next_seq, log.latest_seq());
  EXPECT_FALSE(page.capped);
  page = log.tail_lines(2, 6);
  EXPECT_TRUE(page.capped);
  EXPECT_EQ(page.bytes, "e\nfour");
}

TEST(OutputLog, TailLinesCutsAtASafeBoundary) {
  OutputLog log;
  log.append(
      "\x1b[38;5;196mred\xe2\x9c\x93"
      "abc");
  LogPage page = log.tail_lines(1, 12);  // lands inside the SGR sequence
  EXPECT_TRUE(page.capped);
  EXPECT_EQ(page.bytes,
            "red\xe2\x9c\x93"
            "abc");
  page = log.tail_lines(1, 5);  // lands inside the check mark
  EXPECT_EQ(page.bytes, "abc");
}

// Pages cut where read() chooses, with random caps: raw pages concatenate to
// the whole, and so do their texts (lines that overwrite themselves are
// shorter than every page, see text_view.hpp).
TEST(OutputLog, PageTextsConcatenateToTheTextOfTheWhole) {
  SyntheticOutput source(42, 3 << 20);
  OutputLog log({.ram_bytes = 4 << 20, .spool_cap_bytes = 0, .spool_path = {}});
  std::string whole;
  while (!source.done()) {
    std::string block = source.next_block();
    whole += block;
    log.append(block);
  }
  whole += "\x1b[1mlast\xe2\x9c";
  log.append("\x1b[1mlast\xe2\x9c");
  log.mark_complete();
  std::mt19937 rng(3);
  std::string raw, text;
  for (std::uint64_t seq = 1; seq < log.latest_seq();) {
    LogPage page = log.read(seq, 300 + rng() % 5000);
    ASSERT_FALSE(page.bytes.empty());
    raw += page.bytes;
    text += to_text(page.bytes, log.charsets_at(page.start_seq));
    seq = page.next_seq;
  }
  EXPECT_TRUE(raw == whole);
  EXPECT_TRUE(text == to_text(whole));
}

// The character sets at a position are those the bytes before it select,
// asked in any order (behind the index's frontier too), through a small RAM
// ring and a spool.
TEST(OutputLog, CharsetsAtAnyPositionAreThoseTheBytesBeforeItSelect) {
  const fs::path path = temp_spool("charsets");
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 16 << 20, .spool_path = path});
  SyntheticOutput source(5, 3 << 20);
  std::string whole;
  while (!source.done()) {
    const std::string block = source.next_block();
    whole += block;
    log.append(block);
  }
  log.mark_complete();
  // Unit boundaries, and the sets in use at each, by following from the start.
  std::vector<std::uint64_t> boundaries;
  std::vector<Charsets> expected;
  Charsets charsets;
  for (std::size_t at = 0; at < whole.size();) {
    boundaries.push_back(at + 1);
    expected.push_back(charsets);
    const std::size_t length = unit_length(std::string_view(whole).substr(at));
    advance_charsets(std::string_view(whole).substr(at, length), charsets, false);
    at += length;
  }
  ASSERT_NE(std::count(expected.begin(), expected.end(), Charsets()), std::ssize(expected));
  std::mt19937 rng(11);
  for (int ask = 0; ask < 400; ++ask) {
    const std::size_t k = rng() % boundaries.size();
    ASSERT_TRUE(log.charsets_at(boundaries[k]) == expected[k]) << "at " << boundaries[k];
  }
  EXPECT_TRUE(log.charsets_at(log.latest_seq()) == charsets);
  fs::remove(path);
}

TEST(OutputLog, CharsetsAfterAnEvictionStartFromWhatIsRetained) {
  OutputLog log({.ram_bytes = 4096, .spool_cap_bytes = 0, .spool_path = {}});
  log.append("\x1b(0");
  EXPECT_EQ(log.charsets_at(log.latest_seq()).slots[0], Charsets::kDecGraphics);
  log.append(std::string(10000, 'q'));  // evicts the designation unseen
  log.append("\x1b)0\x0e");
  const Charsets after = log.charsets_at(log.latest_seq());
  EXPECT_EQ(after.in_use, 1);
  EXPECT_EQ(after.slots[1], Charsets::kDecGraphics);
  EXPECT_EQ(log.charsets_at(log.first_retained_seq()), Charsets());
}

// 100 MB through a 1 MiB ring and a spool, read back in 20,000-byte cursor
// pages: byte-exact, and as text, against the regenerated source.
TEST(OutputLog, HundredMegabytesReadBackExactlyRawAndAsText) {
  constexpr std::uint64_t kTotal = 100'000'000;
  const fs::path path = temp_spool("100mb");
  OutputLog log({.ram_bytes = 1 << 20, .spool_cap_bytes = 100ull << 20, .spool_path = path});
  SyntheticOutput source(9, kTotal);
  std::chrono::nanoseconds append_time{0};
  while (!source.done()) {
    const std::string block = source.next_block();
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t at = 0; at < block.size(); at += 4095)
      log.append(std::string_view(block).substr(at, 4095));
    append_time += std::chrono::steady_clock::now() - start;
  }
  log.mark_complete();
  log.flush();
  ASSERT_EQ(log.total_bytes(), kTotal);
  ASSERT_EQ(log.first_retained_seq(), 1u);
  std::printf("ingest: %.0f MB/s\n",
              kTotal / 1e6 / std::chrono::duration<double>(append_time).count());

  SyntheticOutput raw_again(9, kTotal), text_again(9, kTotal);
  TextConverter converter;
  StreamMatch raw_match, text_match;
  for (std::uint64_t seq = 1; seq < log.latest_seq();) {
    LogPage page = log.read(seq, 20000);
    ASSERT_FALSE(page.bytes.empty());
    ASSERT_FALSE(page.evicted);
    raw_match.add_left(page.bytes);
    text_match.add_left(to_text(page.bytes, log.charsets_at(page.start_seq)));
    while (raw_match.right_behind() && !raw_again.done())
      raw_match.add_right(raw_again.next_block());
    while (text_match.right_behind() && !text_again.done()) {
      std::string text;
      converter.feed(text_again.next_block(), text);
      text_match.add_right(text);
    }
    ASSERT_TRUE(raw_match.equal_so_far()) << "raw differs near " << raw_match.matched();
    ASSERT_TRUE(text_match.equal_so_far()) << "text differs near " << text_match.matched();
    seq = page.next_seq;
  }
  std::string rest;
  converter.finish(rest);
  text_match.add_right(rest);
  EXPECT_TRUE(raw_again.done());
  EXPECT_TRUE(raw_match.drained() && raw_match.equal_so_far());
  EXPECT_TRUE(text_match.drained() && text_match.equal_so_far());
  EXPECT_EQ(raw_match.matched(), kTotal);
}

}  // namespace
}  // namespace agentty::session
