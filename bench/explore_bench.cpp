// Explore grep speed against `grep -n` on the same text.
//
// Builds a log of terminal-like output (SGR colours, UTF-8, CR LF, progress
// bars) with a spool file, plants a rare pattern a few times, then times
//   cold: the first explore grep (converts the whole log to its text cache),
//   warm: later explore greps (the cache is up to date),
//   grep: `grep -n` of the same text written to a file (page cache warm),
// and prints MB/s of text and the warm/grep time ratio (target: <= 2).
//
// Usage: explore_bench [--mb SIZE] [--pattern REGEX]
// Files go to /tmp/agentty-bench/ and are removed at the end.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "session/explore.hpp"
#include "session/text_view.hpp"

namespace {

using agentty::session::Explorer;
using agentty::session::OutputLog;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class Lines {
 public:
  std::string next() {
    static const char* const kPieces[] = {"\x1b[31m",     "\x1b[0m",   "\x1b[1;32m", "\xc3\xa9",
                                          "\xe2\x9c\x93", "compiling", "warning:",   "src/a.cpp"};
    std::string line;
    const std::uint64_t r = rand();
    if (r % 16 == 0) line += std::to_string(r % 100) + "%\r";
    for (std::size_t w = 0, words = 3 + r % 12; w < words; ++w) {
      const std::uint64_t x = rand();
      if (x % 4 == 0) line += kPieces[(x >> 8) % 8];
      for (std::size_t i = 0, n = 2 + (x >> 16) % 8; i < n; ++i) {
        line += static_cast<char>('a' + (x >> (24 + i * 4)) % 26);
      }
      line += ' ';
    }
    return line + "\r\n";
  }

 private:
  std::uint64_t rand() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  std::uint64_t state_ = 88172645463325252ull;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t megabytes = 100;
  std::string pattern = "NEEDLE-[0-9]+-RARE";
  CLI::App app{"explore grep speed against grep -n on the same text"};
  app.add_option("--mb", megabytes, "size of the log, in MB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--pattern", pattern, "the PCRE2 pattern to search for")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::filesystem::path dir = "/tmp/agentty-bench";
  std::filesystem::create_directories(dir);
  const std::filesystem::path spool = dir / ("explore-" + std::to_string(::getpid()) + ".spool");
  const std::filesystem::path text_file = dir / ("explore-" + std::to_string(::getpid()) + ".txt");

  OutputLog log(
      {.ram_bytes = 1 << 20, .spool_cap_bytes = (megabytes + 16) << 20, .spool_path = spool});
  Lines lines;
  std::string chunk;
  const std::uint64_t target = megabytes * 1'000'000;
  std::uint64_t planted = 0;
  auto start = Clock::now();
  for (std::uint64_t n = 0; log.total_bytes() + chunk.size() < target; ++n) {
    chunk += (n % 400'000 == 199'999) ? "error: NEEDLE-" + std::to_string(++planted) + "-RARE\r\n"
                                      : lines.next();
    if (chunk.size() >= 4096) {
      log.append(chunk);
      chunk.clear();
    }
  }
  log.append(chunk);
  log.mark_complete();
  log.flush();
  std::printf("log: %.1f MB raw, ingest %.0f MB/s (generation included), %llu needles\n",
              log.total_bytes() / 1e6, log.total_bytes() / 1e6 / seconds_since(start),
              static_cast<unsigned long long>(planted));

  {  // the same text, for grep
    std::ofstream out(text_file, std::ios::binary);
    agentty::session::TextConverter converter;
    std::string text;
    for (std::uint64_t seq = 1; seq < log.latest_seq(); seq += 4 << 20) {
      text.clear();
      converter.feed(log.copy_range(seq, seq + (4 << 20)), text);
      out << text;
    }
    text.clear();
    converter.finish(text);
    out << text;
  }
  const double text_mb = std::filesystem::file_size(text_file) / 1e6;

  Explorer explorer(log);
  start = Clock::now();
  auto cold = explorer.grep({.pattern = pattern});
  const double cold_s = seconds_since(start);
  if (!cold) {
    std::fprintf(stderr, "%s\n", cold.error().c_str());
    return 1;
  }
  std::vector<double> warm, grep;
  std::size_t warm_matches = 0;
  for (int i = 0; i < 5; ++i) {
    start = Clock::now();
    auto result = explorer.grep({.pattern = pattern});
    warm.push_back(seconds_since(start));
    warm_matches = result->matches.size();
  }
  const std::string command = "grep -n -E '" + pattern + "' " + text_file.string() + " > /dev/null";
  for (int i = 0; i < 5; ++i) {
    start = Clock::now();
    if (std::system(command.c_str()) != 0) std::fprintf(stderr, "grep found nothing\n");
    grep.push_back(seconds_since(start));
  }
  const double warm_s = median(warm), grep_s = median(grep);
  std::printf("text: %.1f MB, %zu matches\n", text_mb, warm_matches);
  std::printf("explore grep cold (builds the text cache): %.3f s  %.0f MB/s\n", cold_s,
              text_mb / cold_s);
  std::printf("explore grep warm (median of 5):           %.3f s  %.0f MB/s\n", warm_s,
              text_mb / warm_s);
  std::printf("grep -n (median of 5, incl. spawn):        %.3f s  %.0f MB/s\n", grep_s,
              text_mb / grep_s);
  std::printf("ratio warm/grep: %.2f   cold/grep: %.2f\n", warm_s / grep_s, cold_s / grep_s);
  std::filesystem::remove(text_file);
  return 0;
}
