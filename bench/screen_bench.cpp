// screen_bench: how fast output reaches the screen model.
//
// (a) a plain 100-column text file with CR LF line ends (generated, cached in
//     /tmp/agentty-bench/) through ScreenFeeder (on_output in 64 KiB chunks,
//     then catch_up) and through Screen::feed directly;
// (b) colour-heavy output (generated: every word in its own SGR colour, the
//     shape of `ls --color`), both ways;
// (c) the final 120x40 screen for (a) compared with tmux running `cat` of the
//     same file (and tmux's own time, for reference).
//
// Usage: screen_bench [--mb SIZE]   (default 128)
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "session/screen_feeder.hpp"

using namespace agentty;
namespace fs = std::filesystem;

namespace {

const fs::path kBenchDir = "/tmp/agentty-bench";
constexpr pty::TerminalSize kSize{120, 40};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

fs::path plain_file(std::size_t mb) {
  fs::path path = kBenchDir / ("plain-100col-" + std::to_string(mb) + "MB.txt");
  if (fs::exists(path) && fs::file_size(path) == mb << 20) return path;
  fs::create_directories(kBenchDir);
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::mt19937 rng(1);
  std::string data;
  data.reserve(mb << 20);
  std::string line(100, ' ');
  while (data.size() < (mb << 20)) {
    for (char& c : line) c = kAlphabet[rng() % 64];
    data += line;
    data += "\r\n";
  }
  data.resize(mb << 20);
  std::ofstream(path, std::ios::binary) << data;
  return path;
}

std::string colour_text(std::size_t bytes) {
  std::mt19937 rng(2);
  std::string data;
  while (data.size() < bytes) {
    for (int word = 0; word < 8; ++word) {
      data += "\x1b[01;" + std::to_string(31 + rng() % 7) + "m";
      for (int i = 0; i < 3 + static_cast<int>(rng() % 10); ++i) data += char('a' + rng() % 26);
      data += "\x1b[0m  ";
    }
    data += "\r\n";
  }
  return data;
}

// Wall time and this process's CPU time: on a shared, loaded machine the
// CPU figure is the steadier one.
struct Stopwatch {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  std::clock_t cpu = std::clock();
};

void report(const char* what, std::size_t bytes, const Stopwatch& start) {
  double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start.wall).count();
  double cpu = double(std::clock() - start.cpu) / CLOCKS_PER_SEC;
  double mb = double(bytes) / (1 << 20);
  std::printf("  %-34s %8.1f MB/s wall (%.2f s), %8.1f MB/s cpu (%.2f s)\n", what, mb / wall, wall,
              mb / cpu, cpu);
}

session::ScreenSnapshot via_feeder(const std::string& data, const char* label) {
  session::ScreenFeeder feeder(kSize);
  Stopwatch start;
  for (std::size_t i = 0; i < data.size(); i += 64 * 1024) {
    feeder.on_output(std::string_view(data).substr(i, 64 * 1024));
  }
  feeder.catch_up();
  report(label, data.size(), start);
  const auto& stats = feeder.stats();
  std::printf("    fed %.1f MB, skipped %.1f MB in %llu skips, mismatches %llu\n",
              double(stats.bytes_fed) / (1 << 20), double(stats.bytes_skipped) / (1 << 20),
              static_cast<unsigned long long>(stats.skips),
              static_cast<unsigned long long>(stats.skip_mismatches));
  return feeder.screen().snapshot();
}

session::ScreenSnapshot via_screen(const std::string& data, const char* label) {
  session::Screen screen(kSize);
  Stopwatch start;
  for (std::size_t i = 0; i < data.size(); i += 64 * 1024) {
    screen.feed(std::string_view(data).substr(i, 64 * 1024));
  }
  report(label, data.size(), start);
  return screen.snapshot();
}

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

// Runs tmux on the file at 120x40 and returns its visible lines.
std::vector<std::string> tmux_lines(const fs::path& file, std::size_t bytes) {
  std::string socket = (kBenchDir / ("tmux-" + std::to_string(getpid()) + ".sock")).string();
  std::string conf = (kBenchDir / "tmux.conf").string();
  std::ofstream(conf) << "set -g status off\n";
  std::string tmux = "tmux -S " + socket + " -f " + conf;
  Stopwatch start;
  run_command(tmux + " new-session -d -x 120 -y 40 'stty -opost; cat " + file.string() + "; " +
              tmux + " wait-for -S done; exec sleep 600'");
  run_command("timeout 600 " + tmux + " wait-for done");
  // CPU time here is only ours (waiting): read tmux's wall time.
  report("tmux cat (reference, wall only)", bytes, start);
  std::string captured = run_command(tmux + " capture-pane -p");
  run_command(tmux + " kill-server");
  std::vector<std::string> lines;
  std::stringstream in(captured);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void drop_trailing_empty(std::vector<std::string>& lines) {
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mb = 128;
  CLI::App app{"how fast output reaches the screen model, and its final screen against tmux"};
  app.add_option("--mb", mb, "size of the plain text file, in MB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  fs::path path = plain_file(mb);
  std::string plain = read_file(path);
  std::printf("(a) plain 100-column text, %zu MB, screen 120x40\n", mb);
  auto fast = via_feeder(plain, "ScreenFeeder (on_output+catch_up)");
  auto slow = via_screen(plain, "Screen::feed (libvterm only)");
  bool same = fast.lines == slow.lines && fast.cursor.row == slow.cursor.row &&
              fast.cursor.col == slow.cursor.col;
  std::printf("  same screen both ways: %s\n", same ? "yes" : "NO");

  std::string colour = colour_text(std::max<std::size_t>(mb / 4, 1) << 20);
  std::printf("(b) colour-heavy text (SGR per word), %zu MB\n", colour.size() >> 20);
  via_feeder(colour, "ScreenFeeder (on_output+catch_up)");
  via_screen(colour, "Screen::feed (libvterm only)");

  std::printf("(c) tmux on the plain file at 120x40\n");
  auto theirs = tmux_lines(path, plain.size());
  auto ours = fast.lines;
  drop_trailing_empty(theirs);
  drop_trailing_empty(ours);
  bool tmux_same = !theirs.empty() && theirs == ours;
  std::printf("  final screen equals tmux capture-pane: %s\n", tmux_same ? "yes" : "NO");
  return same && tmux_same ? 0 : 1;
}
