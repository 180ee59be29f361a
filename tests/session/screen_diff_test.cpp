// Differential screen tests: the same bytes through ScreenFeeder and through
// tmux (a real terminal emulator run as a detached session on a private
// socket); the visible text and cursor must agree with `capture-pane -p`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "session/screen_feeder.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;

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

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

void drop_trailing_empty(std::vector<std::string>& lines) {
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
}

struct TerminalView {
  std::vector<std::string> lines;
  int cursor_row = 0;
  int cursor_col = 0;
  bool alt_screen = false;
  std::string title;
};

// One tmux server on a private socket that cats a file into an 80x24 pane
// (output post-processing off, so bytes arrive as written) and signals a
// wait-for channel when done. The server is killed on destruction.
class TmuxRun {
 public:
  TmuxRun(const std::string& bytes, int cols, int rows) {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("agentty-scr-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir_);
    socket_ = (dir_ / "tmux.sock").string();
    std::ofstream(dir_ / "tmux.conf") << "set -g status off\n";
    std::ofstream(dir_ / "fixture.bin", std::ios::binary) << bytes;
    // -u: without a UTF-8 locale (LANG unset, as on a fresh Debian) tmux
    // would print a title's non-ASCII characters as '_'.
    std::string tmux = "tmux -u -S " + socket_ + " -f " + (dir_ / "tmux.conf").string();
    std::string pane = "stty -opost; cat " + (dir_ / "fixture.bin").string() + "; " + tmux +
                       " wait-for -S agentty-done; exec sleep 600";
    run_command(tmux + " new-session -d -x " + std::to_string(cols) + " -y " +
                std::to_string(rows) + " '" + pane + "'");
    // The channel remembers a signal sent before anyone waits.
    run_command("timeout 120 " + tmux + " wait-for agentty-done");
    view_.lines = split_lines(run_command(tmux + " capture-pane -p"));
    drop_trailing_empty(view_.lines);
    auto cursor = run_command(tmux + " display -p '#{cursor_x} #{cursor_y} #{alternate_on}'");
    int alt = 0;
    std::sscanf(cursor.c_str(), "%d %d %d", &view_.cursor_col, &view_.cursor_row, &alt);
    view_.alt_screen = alt != 0;
    // A pane no program titled shows the host name, as the model's "" does.
    view_.title = run_command(tmux + " display -p '#{pane_title}'");
    if (!view_.title.empty() && view_.title.back() == '\n') view_.title.pop_back();
    std::array<char, 256> host{};
    if (gethostname(host.data(), host.size() - 1) == 0 && view_.title == host.data()) {
      view_.title.clear();
    }
    tmux_ = tmux;
  }
  ~TmuxRun() {
    run_command(tmux_ + " kill-server 2>/dev/null");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const TerminalView& view() const { return view_; }

 private:
  fs::path dir_;
  std::string socket_;
  std::string tmux_;
  TerminalView view_;
};

TerminalView agentty_view(ScreenFeeder& feeder) {
  feeder.catch_up();
  auto snap = feeder.screen().snapshot();
  TerminalView view;
  view.lines = snap.lines;
  drop_trailing_empty(view.lines);
  view.cursor_row = snap.cursor.row;
  view.cursor_col = snap.cursor.col;
  view.alt_screen = snap.modes.alt_screen;
  view.title = snap.title;
  return view;
}

void expect_same_as_tmux(const std::string& bytes, int cols = 80, int rows = 24) {
  ScreenFeeder feeder(
      pty::TerminalSize{static_cast<std::uint16_t>(cols), static_cast<std::uint16_t>(rows)});
  for (std::size_t i = 0; i < bytes.size(); i += 1000) {
    feeder.on_output(std::string_view(bytes).substr(i, 1000));
  }
  TerminalView ours = agentty_view(feeder);
  TmuxRun tmux(bytes, cols, rows);
  const TerminalView& theirs = tmux.view();
  ASSERT_FALSE(theirs.lines.empty()) << "tmux showed nothing: did it run?";
  ASSERT_LE(theirs.lines.size(), static_cast<std::size_t>(rows));
  EXPECT_EQ(ours.lines, theirs.lines);
  EXPECT_EQ(ours.cursor_row, theirs.cursor_row);
  EXPECT_EQ(ours.cursor_col, theirs.cursor_col);
  EXPECT_EQ(ours.alt_screen, theirs.alt_screen);
  EXPECT_EQ(ours.title, theirs.title);
}

std::string numbered_lines(int count) {
  std::string out;
  for (int i = 1; i <= count; ++i) out += "line " + std::to_string(i) + " of the output\r\n";
  return out;
}

TEST(ScreenDiff, PlainScrollingText) {
  expect_same_as_tmux(numbered_lines(100) + "$ ");
}

TEST(ScreenDiff, ColouredText) {
  std::string bytes;
  for (int i = 0; i < 30; ++i) {
    bytes += "\x1b[" + std::to_string(31 + i % 7) + "mcolour " + std::to_string(i) +
             "\x1b[0m \x1b[1;4mbold-under\x1b[0m \x1b[38;5;" + std::to_string(100 + i) +
             "m256\x1b[0m \x1b[48;2;1;2;3mrgb\x1b[0m\r\n";
  }
  expect_same_as_tmux(bytes);
}

TEST(ScreenDiff, CursorMovementAndErase) {
  std::string bytes = "\x1b[H\x1b[2J";
  for (int i = 0; i < 24; ++i) bytes += std::string(80, static_cast<char>('a' + i % 26));
  bytes +=
      "\x1b[5;10HXX\x1b[3AUP\x1b[2BDOWN\x1b[4CFWD\x1b[7DBK"
      "\x1b[10;40H\x1b[K\x1b[11;40H\x1b[1K\x1b[12;1H\x1b[2K"
      "\x1b[20;20H\x1b[J\x1b[2;5H\x1b[1J\x1b[15;15Hend";
  expect_same_as_tmux(bytes);
}

TEST(ScreenDiff, CarriageReturnProgressBar) {
  std::string bytes = "downloading\r\n";
  for (int pct = 0; pct <= 100; pct += 5) {
    bytes += "\r[" + std::string(pct / 5, '#') + std::string(20 - pct / 5, ' ') + "] " +
             std::to_string(pct) + "%";
  }
  bytes += "\r\ndone\r\n";
  expect_same_as_tmux(bytes);
}

TEST(ScreenDiff, WideCharacters) {
  std::string cjk = "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97";  // 中文字
  std::string bytes;
  for (int i = 0; i < 5; ++i) bytes += cjk + " line " + std::to_string(i) + "\r\n";
  for (int i = 0; i < 30; ++i) bytes += cjk;              // 180 columns: wraps twice
  bytes += "\r\n" + std::string(79, '-') + cjk + "\r\n";  // a wide char cannot split
  bytes += "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e: \xed\x95\x9c\xea\xb5\xad\xec\x96\xb4\r\n";
  expect_same_as_tmux(bytes);
}

// A character written over half of a wide one: xterm and tmux blank the
// other half; libvterm 0.1.4 kept the wide character (over its second half)
// or made the narrow one two columns (over its first), so the text after it
// read one column off. The kernel's erase echo in a cooked-mode read (one
// "\b \b" for a wide character) is the everyday case.
TEST(ScreenDiff, WritingOverHalfAWideCharacterBlanksTheOtherHalf) {
  const std::string zhong = "\xe4\xb8\xad";                             // 中
  const std::string wen = "\xe6\x96\x87";                               // 文
  std::string bytes = "a" + zhong + "b\x1b[2GX\r\n";                    // over the first half
  bytes += "a" + zhong + "b\x1b[3GX\r\n";                               // over the second
  bytes += zhong + wen + "b\x1b[2G\xe5\xad\x97\r\n";                    // 字 over both neighbours
  bytes += "a" + zhong + "\b \bb\r\n";                                  // the erase echo
  bytes += "\x1b[41m" + zhong + "\x1b[0m|\x1b[2GY\r\n";                 // a coloured one
  for (int i = 0; i < 30; ++i) bytes += "x" + zhong + "y\x1b[3Dz\r\n";  // into scrollback
  expect_same_as_tmux(bytes);
}

// C1 controls written as UTF-8 (U+0080..U+009F): Windows-1252 text read as
// Latin-1 ("don\u0092t"), or binary junk. tmux shows nothing for them;
// libvterm drew each -1 columns wide, so the next character overwrote the
// one before it.
TEST(ScreenDiff, Utf8C1ControlsShowNothing) {
  expect_same_as_tmux(
      "don\xc2\x92t stop\r\nA\xc2\x85"
      "B|\xc2\x9b"
      "31mC|\xc2\x80\xc2\x9f\xc2\xa0"
      "D\r\n");
}

// Emoji of Unicode 9..15 (U+1F7E2 green circle, U+1F972, U+1F9D1 person):
// two columns for wcwidth, tmux and the program, one in libvterm 0.1's table.
TEST(ScreenDiff, NewerEmojiTakeTwoColumns) {
  std::string green = "\xf0\x9f\x9f\xa2";
  std::string smiling = "\xf0\x9f\xa5\xb2";
  std::string person = "\xf0\x9f\xa7\x91";
  std::string bytes = green + "X|" + smiling + "Y|" + person + "Z\r\n";
  bytes += green + "\x1b[6GQ\r\n";                          // a column counted after it
  for (int i = 0; i < 45; ++i) bytes += person;             // 90 columns: wraps after 40
  bytes += "\r\n" + std::string(79, '-') + green + "\r\n";  // cannot split: wraps whole
  bytes += "\x1b]2;" + green + " build\x07" + person + "$ ";
  expect_same_as_tmux(bytes);
}

// vim saves the title (CSI 22;2 t), sets its own, and on exit sets "Thanks
// for flying Vim" then restores the saved one (CSI 23;2 t).
TEST(ScreenDiff, TitleStackRestoresTheSavedTitle) {
  expect_same_as_tmux(
      "\x1b]2;shell\x07\x1b[22;2t\x1b]2;file.txt - VIM\x07\x1b]2;Thanks for flying "
      "Vim\x07\x1b[23;2t$ ");
  // Saved twice, restored once: the inner title comes back.
  expect_same_as_tmux(
      "\x1b]0;one\x07\x1b[22;0t\x1b]0;two\x07\x1b[22;0t\x1b]0;three\x07\x1b[23;0t$ ");
}

// Insert/delete characters and lines, erase and repeat characters, scrolling
// inside a region, combining marks: what ncurses and readline redraw with.
TEST(ScreenDiff, EditingSequences) {
  std::string bytes = "\x1b[H\x1b[2J";
  for (int i = 1; i <= 24; ++i) bytes += "row " + std::to_string(i) + " abcdefghij\r\n";
  bytes +=
      "\x1b[2;5H\x1b[3@INS"  // ICH 3, then text into the gap
      "\x1b[3;5H\x1b[4P"     // DCH 4
      "\x1b[4;1H\x1b[2L"     // IL 2
      "\x1b[8;1H\x1b[3M"     // DL 3
      "\x1b[10;3H\x1b[5X"    // ECH 5
      "\x1b[11;1H=\x1b[20b"  // REP 20
      "\x1b[12;20r\x1b[14;1H\x1b[2L\x1b[16;1H\x1b[M\x1b[2S\x1b[T\x1b[r"
      "\x1b[22;1He\xcc\x81 n\xcc\x83o a\xcc\x8a\xcc\x81 \xe4\xb8\xad\xcc\x81 end";
  expect_same_as_tmux(bytes);
}

TEST(ScreenDiff, AltScreenEnterDrawLeave) {
  std::string main_text = numbered_lines(10);
  std::string app = "\x1b[?1049h\x1b[H\x1b[2J\x1b[5;5Hfull screen app\x1b[24;1Hstatus line";
  expect_same_as_tmux(main_text + app + "\x1b[?1049l");
  expect_same_as_tmux(main_text + app);
}

TEST(ScreenDiff, ScrollRegions) {
  std::string bytes = "\x1b[H\x1b[2J";
  for (int i = 1; i <= 24; ++i) bytes += "row " + std::to_string(i) + "\r\n";
  bytes += "\x1b[5;15r\x1b[15;1H";  // region rows 5-15, cursor at its bottom
  for (int i = 0; i < 4; ++i) bytes += "\nscrolled in " + std::to_string(i) + "\r";
  bytes += "\x1b[5;1H\x1bM\x1bMreverse\r";  // RI at the region top scrolls down
  bytes += "\x1b[r\x1b[24;1Hbottom";
  expect_same_as_tmux(bytes);
}

TEST(ScreenDiff, LongLinesWrapIncludingExactWidth) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    int length = (i % 4 == 0) ? 80 : (i % 4 == 1) ? 160 : (i % 4 == 2) ? 79 : 200;
    bytes +=
        std::string(static_cast<std::size_t>(length), static_cast<char>('A' + i % 26)) + "\r\n";
  }
  expect_same_as_tmux(bytes);
}

// Printable ASCII with CR LF and CR-only endings, lines of every width: the
// shape of bulk build or log output, large enough to take the skip path.
std::string bulk_plain_text(std::size_t bytes, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < bytes) {
    int length = static_cast<int>(rng() % 5 == 0 ? rng() % 240 : rng() % 100);
    for (int i = 0; i < length; ++i) out += static_cast<char>(0x20 + rng() % 95);
    out += rng() % 25 == 0 ? "\r" : "\r\n";
  }
  return out;
}

TEST(ScreenDiff, BulkPlainTextTakesTheSkipPathAndMatchesTmux) {
  std::string bytes = "\x1b[32mgreen start\x1b[0m\r\n" + bulk_plain_text(3 << 20, 42) + "$ ";
  ScreenFeeder feeder(pty::TerminalSize{80, 24});
  feeder.on_output(bytes);
  feeder.catch_up();
  EXPECT_GT(feeder.stats().skips, 0u);
  EXPECT_GT(feeder.stats().bytes_skipped, bytes.size() / 2);
  EXPECT_EQ(feeder.stats().skip_mismatches, 0u);
  expect_same_as_tmux(bytes);

  // And the same screen and last scrollback lines as libvterm fed directly.
  Screen direct(pty::TerminalSize{80, 24}, 2000);
  direct.feed(bytes);
  ScreenFeeder skipped(pty::TerminalSize{80, 24}, 2000);
  skipped.on_output(bytes);
  skipped.catch_up();
  auto want = direct.snapshot(2000);
  auto got = skipped.screen().snapshot(2000);
  EXPECT_EQ(got.lines, want.lines);
  EXPECT_TRUE(got.scrollback == want.scrollback);
  EXPECT_EQ(got.scrollback.size(), 2000u);
}

// A flood spanning many catch-up batches (the simulator carried between
// them), interrupted by colour, a wide character and cursor movement, then a
// second flood: the same screen as tmux, and as libvterm fed every byte.
TEST(ScreenDiff, FloodInterruptedMidwayMatchesTmux) {
  std::string bytes = bulk_plain_text(5 << 19, 43) + "\x1b[33mmid\xe4\xb8\xad" +
                      bulk_plain_text(5 << 19, 44) + "\x1b[0m\x1b[5;5Hmoved" +
                      bulk_plain_text(200 << 10, 45) + "$ ";
  ScreenFeeder feeder(pty::TerminalSize{80, 24}, 1000);
  for (std::size_t i = 0; i < bytes.size(); i += 4096) {
    feeder.on_output(std::string_view(bytes).substr(i, 4096));
  }
  feeder.catch_up();
  EXPECT_GE(feeder.stats().skips, 2u);
  EXPECT_EQ(feeder.stats().skip_mismatches, 0u);
  expect_same_as_tmux(bytes);

  Screen direct(pty::TerminalSize{80, 24}, 1000);
  direct.feed(bytes);
  EXPECT_EQ(feeder.screen().render_ansi(), direct.render_ansi());
  EXPECT_TRUE(feeder.screen().snapshot(1000).scrollback == direct.snapshot(1000).scrollback);
}

}  // namespace
}  // namespace agentty::session
