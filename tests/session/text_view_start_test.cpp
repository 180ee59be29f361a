// The text view of bytes that start where the cursor's row is known: an
// execution's first byte is at the top left of a fresh terminal, and a page
// starts where the text view of the bytes before it left the cursor
// (text_start_after). From there status lines, scroll regions, rows given by
// number and redraws read as the screen shows them, however short the
// output: differential checks against libvterm, and the programs of audit 56.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "session/text_view.hpp"
#include "terminal_rows.hpp"

namespace agentty::session {
namespace {

std::string fresh(std::string_view raw, TextTerminal terminal) {
  return to_text(raw, {}, TerminalSizes{{0, terminal}}, TextStart::top_left());
}

// Random streams from the top left of a 5-row terminal: text, line ends,
// moves up and down, rows by number, save and restore, scroll regions from
// the top, erases below: as libvterm shows them.
TEST(TextViewStart, FromTheTopLeftReadsAsLibvtermShowsTheRows) {
  std::mt19937 rng(49);
  const std::vector<std::string> kText = {"a",      "hello",   "x y", "0123456789",
                                          "\x1b[K", "\x1b[2K", "\r"};
  for (int round = 0; round < 5000; ++round) {
    std::string raw =
        "\x1b"
        "7";  // libvterm's restore with nothing saved: the top left
    const int steps = 1 + static_cast<int>(rng() % 24);
    for (int step = 0; step < steps; ++step) {
      const unsigned pick = rng() % 10;
      const std::string row = std::to_string(1 + rng() % 6);
      if (pick == 0) {
        raw += kText[rng() % kText.size()];
      } else if (pick == 1) {
        raw += "L" + std::to_string(step) + "\r\n";
      } else if (pick == 2) {
        raw += "\x1b[" + row + ";" + std::to_string(1 + rng() % 5) + "H";
      } else if (pick == 3) {
        raw += "\x1b[" + row + "d";
      } else if (pick == 4) {
        raw += "\x1b" + std::string(rng() % 2 == 0 ? "7" : "8");
      } else if (pick == 5) {
        raw += "\x1b[" + row + (rng() % 2 == 0 ? "A" : "B");
      } else if (pick == 6) {
        raw += "S" + std::to_string(step);
      } else if (pick == 7) {
        raw += "\r\n";
      } else if (pick == 8) {
        raw += rng() % 4 == 0 ? "\x1b[J" : "\x1b[" + row + "E";
      } else {  // a scroll region from the top (apt's), or none
        raw += rng() % 2 == 0 ? "\x1b[1;" + std::to_string(2 + rng() % 3) + "r"
                              : std::string("\x1b[r");
      }
    }
    ASSERT_EQ(rows_of_text(fresh(raw, {300, 5})), terminal_rows(raw, {300, 5}))
        << ::testing::PrintToString(raw);
  }
}

// apt's "fancy progress" (the bytes of audit 56's script): a region above
// the last row, the status drawn there between ESC 7 and ESC 8 after each
// dpkg line, erased at the end.
std::string apt_run(int packages, std::size_t rows, std::size_t cols) {
  const std::string r = std::to_string(rows);
  std::string raw = "Reading package lists... Done\r\nThe following NEW packages\r\n";
  raw +=
      "\r\n\x1b"
      "7\x1b[0;" +
      std::to_string(rows - 1) +
      "r\x1b"
      "8\x1b[1A";
  int k = 0;
  for (const std::string verb : {"Unpacking", "Setting up"}) {
    for (int i = 1; i <= packages; ++i) {
      raw += verb + " pkg" + std::to_string(i) + " ...\r\n";
      const int pct = 100 * ++k / (2 * packages);
      const std::string label = "Progress: [" + std::to_string(pct) + "%]";
      const std::size_t size = cols - 6 - label.size();
      const std::size_t done = static_cast<std::size_t>(pct) * size / 100;
      raw +=
          "\x1b"
          "7\x1b[" +
          r + ";0f\x1b[42m\x1b[30m" + label + "\x1b[49m\x1b[39m [" + std::string(done, '#') +
          std::string(size - done, '.') +
          "] \x1b"
          "8";
    }
  }
  raw +=
      "\r\n\x1b"
      "7\x1b[0;" +
      r +
      "r\x1b"
      "8\x1b[1A\x1b[J";
  return raw + "Processing triggers\r\n";
}

TEST(TextViewStart, AptProgressInAShortOutputReadsAsTheDpkgLines) {
  for (const int packages : {3, 8}) {
    const std::string raw = apt_run(packages, 10, 60);
    const std::string text = fresh(raw, {60, 10});
    EXPECT_EQ(text.find("Progress"), std::string::npos) << text;
    EXPECT_EQ(rows_of_text(text), terminal_rows(raw, {60, 10})) << text;
  }
  // At 40 rows, 3 packages: the region never scrolls.
  const std::string raw = apt_run(3, 40, 120);
  EXPECT_EQ(rows_of_text(fresh(raw, {120, 40})), terminal_rows(raw, {120, 40}));
}

// Pages cut as the log cuts them, each read from where the bytes before it
// leave the cursor: every dpkg line once, whole, in order, as one read has
// them; a page that ends while the status row is drawn reads it last, after
// the blank rows above it (the screen showed it so then).
TEST(TextViewStart, AptProgressPagedReadsTheDpkgLinesOnce) {
  const TextTerminal terminal{60, 10};
  const std::string raw = apt_run(8, 10, 60);
  const std::vector<std::string> whole = rows_of_text(fresh(raw, terminal));
  for (std::size_t page = 200; page <= 400; page += 40) {
    std::vector<std::string> lines;
    std::size_t statuses = 0;
    for (std::size_t at = 0; at < raw.size();) {
      const std::size_t end = at + safe_page_length(std::string_view(raw).substr(at), page, false);
      const TextStart start = text_start_after(std::string_view(raw).substr(0, at), {},
                                               TerminalSizes{{0, terminal}}, TextStart::top_left());
      for (const std::string& line :
           rows_of_text(to_text(std::string_view(raw).substr(at, end - at), {},
                                TerminalSizes{{0, terminal}}, start))) {
        if (line.starts_with("Progress: [")) ++statuses;
        if (!line.empty() && !line.starts_with("Progress: [")) lines.push_back(line);
      }
      at = end;
    }
    EXPECT_EQ(lines, whole) << page;
    EXPECT_GT(statuses, 0u) << page;
  }
}

// A status line kept on the bottom row with ESC 7, CUP, ESC 8 after each log
// line, no region: the log once, the status as the screen last shows it.
TEST(TextViewStart, AStatusOnTheBottomRowReadsAsItsLastState) {
  auto run = [](bool erase, bool mid) {
    std::string raw = "compiling\r\n";
    for (int i = 1; i <= 6; ++i) {
      const std::string status =
          "\x1b"
          "7\x1b[12;1H\x1b[2K\x1b[7m[" +
          std::to_string(i) +
          "/6]\x1b[27m\x1b"
          "8";
      raw += mid ? "test" + std::to_string(i) + " ... " + status + "ok\r\n"
                 : "  CC unit" + std::to_string(i) + ".o\r\n" + status;
    }
    if (erase)
      raw +=
          "\x1b"
          "7\x1b[12;1H\x1b[2K\x1b"
          "8";
    return fresh(raw + "linked\r\n", {60, 12});
  };
  EXPECT_EQ(run(true, false),
            "compiling\n  CC unit1.o\n  CC unit2.o\n  CC unit3.o\n  CC unit4.o\n  CC unit5.o\n"
            "  CC unit6.o\nlinked\n");
  EXPECT_EQ(run(false, false),
            "compiling\n  CC unit1.o\n  CC unit2.o\n  CC unit3.o\n  CC unit4.o\n  CC unit5.o\n"
            "  CC unit6.o\nlinked\n\n\n\n[6/6]");  // the blank rows above it too
  EXPECT_EQ(run(true, true),
            "compiling\ntest1 ... ok\ntest2 ... ok\ntest3 ... ok\ntest4 ... ok\ntest5 ... ok\n"
            "test6 ... ok\nlinked\n");
}

// A split pane: a header on the top row, a region below it the log scrolls
// in, a footer on the last row redrawn after each log line. On a VT100 the
// lines that leave the region's top are gone; the text keeps them, reads the
// header once and the footer as its last state.
TEST(TextViewStart, ASplitPaneReadsTheHeaderTheLogAndTheLastFooter) {
  std::string raw = "\x1b[H\x1b[2J== build log ==\r\n\x1b[2;9r\x1b[2;1H";
  std::vector<std::string> expected = {"== build log =="};
  for (int i = 1; i <= 20; ++i) {
    const std::string line = "log line " + std::to_string(i);
    raw += line +
           "\r\n\x1b"
           "7\x1b[10;1H\x1b[2Kbuilt " +
           std::to_string(i) +
           "/20\x1b"
           "8";
    expected.push_back(line);
  }
  raw += "\x1b[r\x1b[10;1H\r\r\ndone\r\n";
  expected.insert(expected.end(), {"built 20/20", "done"});
  std::vector<std::string> lines = rows_of_text(fresh(raw, {60, 10}));
  std::erase(lines, "");
  EXPECT_EQ(lines, expected);
  // The same started lower on a screen the view does not hold (a session's
  // command after its prompt): `clear` goes above the rows it holds, and the
  // row is known from there.
  TextStart lower;
  lower.row = 6;
  lines = rows_of_text(to_text(raw, {}, TerminalSizes{{0, {60, 10}}}, lower));
  std::erase(lines, "");
  EXPECT_EQ(lines, expected);
}

// `clear` then rows rewritten by number (tput cup): the rows as rewritten.
// What `clear` erased stays in the text, a line cut by it too.
TEST(TextViewStart, ClearThenRowsByNumberReadAsTheScreen) {
  const TextTerminal terminal{60, 10};
  EXPECT_EQ(fresh("\x1b[H\x1b[2J\x1b[3Jstep 1: pending\nstep 2: pending\nstep 3: pending\n"
                  "\x1b[1;9Hdone   \x1b[4;1Hall steps done\n",
                  terminal),
            "step 1: done\nstep 2: pending\nstep 3: pending\nall steps done\n");
  EXPECT_EQ(fresh("abc\x1b[H\x1b[2Jx", terminal), "abc\nx");
  EXPECT_EQ(fresh("1\n2\n3\n\x1b[2J\x1b[1;1HX\n", terminal), "1\n2\n3\nX\n");
}

// RIS (ESC c, `reset`) clears the screen and homes the cursor; the text
// keeps what was printed before it.
TEST(TextViewStart, ResetHomesTheCursor) {
  const TextTerminal terminal{60, 10};
  EXPECT_EQ(fresh("1\n2\n3\n\x1b"
                  "cX\x1b[1;1HY\n",
                  terminal),
            "1\n2\n3\nY\n");
  // RIS drops a scroll region too.
  EXPECT_EQ(fresh("a\n\x1b[3;6r\x1b"
                  "cb\x1b[1;1HB\n",
                  terminal),
            "a\nB\n");
}

// On the alternate screen the cursor stays where it was, so a program that
// redraws part of it (watch -g: the changed digits by CUP) reads as its last
// frame; leaving restores the cursor's row.
TEST(TextViewStart, AlternateScreenRedrawsReadAsTheLastFrame) {
  const TextTerminal terminal{60, 10};
  EXPECT_EQ(fresh("before\r\n\x1b[?1049h\x1b[H\x1b[2J20:35:43\x1b[1;8H4\x1b[?1049l"
                  "watch exit 0\r\n",
                  terminal),
            "before\n20:35:44\nwatch exit 0\n");
  // Rows inserted or deleted (CSI L, M) move the rows under the cursor: the
  // view writes them as they were and takes the rows below as blank.
  EXPECT_EQ(fresh("a\nb\n\x1b[1;1H\x1b[Lc\x1b[3;1Hd\n", terminal), "a\nb\nc\n\nd\n");
}

// A page that starts where the bytes before it left the cursor's row
// unknown reads as without the start.
TEST(TextViewStart, ARowNotKnownStaysNotKnown) {
  const TextTerminal terminal{60, 10};
  const TerminalSizes sizes{{0, terminal}};
  const TextStart after = text_start_after("a\n\x1b[2;5r", {}, sizes);
  EXPECT_FALSE(after.row.has_value());
  EXPECT_TRUE(after.in_unknown_region);
  // Set where the row is known, the region is followed (and DECSTBM homes).
  const TextStart followed = text_start_after("a\n\x1b[2;5r", {}, sizes, TextStart::top_left());
  EXPECT_EQ(followed.row, 0u);
  EXPECT_EQ(followed.region_top, 1u);
  EXPECT_EQ(followed.region_bottom, 4u);
  EXPECT_EQ(text_start_after("a\nb\n", {}, sizes, TextStart::top_left()).row, 2u);
  EXPECT_EQ(text_start_after("a\nb\n", {}, sizes).row, std::nullopt);
  // A wrapped line takes its rows.
  EXPECT_EQ(text_start_after(std::string(130, 'x') + "\n", {}, sizes, TextStart::top_left()).row,
            3u);
}

// Where a line wider than the terminal wraps (a session's long command
// line, echoed as readline does) and a row move lands on it (`clear`, a
// scroll region homing the cursor), the view follows which of its rows the
// cursor is on: wherever it says it knows the row, libvterm's cursor is on
// that row. So from the first byte, and from an answer's start. (Checked
// on 300 seeds in session 50.)
TEST(TextViewStart, ARowKnownOverWrappedLinesIsLibvtermsRow) {
  std::mt19937 rng(4949);
  // Text from a column that leaves it on its row: a line printed past the
  // row's end over rows the view holds is not what this checks.
  const std::vector<std::string> kText = {"a", "hi", "\x1b[K", "\r"};
  const std::vector<std::string> kCommand = {"0123456789abc", "0123456789abcdefghijklmnopq",
                                             "0123456", "01234567", "0123456789abcdefgh"};
  // A command line as readline echoes it: typed (a space and a CR past
  // each row's end), written at once (as wide as the terminal: the space,
  // CR, a move up and the last character again), or as it is.
  const auto echoed = [&rng](const std::string& line) {
    const unsigned form = rng() % 3;
    if (form == 0) {
      std::string typed;
      for (std::size_t at = 0; at < line.size(); at += 10) {
        typed += line.substr(at, 10);
        if (at + 10 <= line.size()) typed += " \r";
      }
      return typed;
    }
    if (form == 1 && line.size() % 10 == 0) return line + " \r\x1b[A\x1b[9C\x1b[K" + line.back();
    return line;
  };
  const TerminalSizes sizes{{0, {10, 6}}};
  int known = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string raw = echoed("$ " + kCommand[rng() % kCommand.size()]) + "\r\n";
    const int steps = 1 + static_cast<int>(rng() % 16);
    for (int step = 0; step < steps; ++step) {
      const unsigned pick = rng() % 8;
      const std::string row = std::to_string(1 + rng() % 7);
      if (pick == 0 || pick == 1) {
        raw += "\x1b[" + std::to_string(1 + rng() % 5) + "G" + kText[rng() % kText.size()];
      } else if (pick == 2) {
        raw += "\r\n";
      } else if (pick == 3) {
        // Up to column 12 of 10: the cursor stops at the last.
        raw += "\x1b[" + row + ";" + std::to_string(1 + rng() % 12) + "H";
      } else if (pick == 4) {
        raw += "\x1b" + std::string(rng() % 2 == 0 ? "7" : "8");
      } else if (pick == 5) {
        raw += "\x1b[" + row + (rng() % 2 == 0 ? "A" : "B");
      } else if (pick == 6) {
        raw += "\x1b[" + std::to_string(1 + rng() % 12) + "G";
      } else {  // a scroll region from the top (apt's), or none
        raw += rng() % 2 == 0 ? "\x1b[1;" + std::to_string(3 + rng() % 3) + "r"
                              : std::string("\x1b[r");
      }
    }
    // From the first byte, and from a line end (a session's answer starts
    // with the row, the saved row and the region the bytes before left).
    std::vector<std::size_t> line_ends;
    for (std::size_t at = raw.find("\r\n"); at != std::string::npos; at = raw.find("\r\n", at + 2))
      line_ends.push_back(at + 2);
    const std::size_t cut = line_ends[rng() % line_ends.size()];
    const TextStart answer_start =
        text_start_after(raw.substr(0, cut), {}, sizes, TextStart::top_left());
    Screen screen(pty::TerminalSize{10, 6});
    screen.feed(
        "\x1b"
        "7" +
        raw);
    const auto row = static_cast<std::size_t>(screen.cursor().row);
    for (const TextStart& after : {text_start_after(raw, {}, sizes, TextStart::top_left()),
                                   text_start_after(raw.substr(cut), {}, sizes, answer_start)}) {
      if (!after.row) continue;
      ++known;
      ASSERT_EQ(*after.row, row) << ::testing::PrintToString(raw) << " cut at " << cut;
    }
  }
  EXPECT_GT(known, 4000);
}

// A session's command line (`echoed`, after the prompt) and apt's region,
// then a build status on the bottom row: the row stays known across the
// command line (the region homes the cursor onto it, the restore goes down
// through it), so the next command's status reads as its last state.
void expect_status_after_command_line(const std::string& echoed) {
  const TextTerminal terminal{40, 12};
  const TerminalSizes sizes{{0, terminal}};
  const std::string prompt = "root@vm:/check/work/main/tests/e2e# ";
  const std::string command_line = prompt + echoed + "\r\n";
  std::string apt =
      "Reading\r\n\r\n\x1b"
      "7\x1b[0;11r\x1b"
      "8\x1b[1A";
  std::string apt_text = "Reading\n";
  for (int i = 1; i <= 14; ++i) {
    apt += "Unpacking " + std::to_string(i) +
           "\r\r\n\x1b"
           "7\x1b[12;0fProgress: [" +
           std::to_string(i * 7) +
           "%]\x1b"
           "8";
    apt_text += "Unpacking " + std::to_string(i) + "\n";
  }
  apt +=
      "\r\n\x1b"
      "7\x1b[0;12r\x1b"
      "8\x1b[1A\x1b[J";
  // apt's answer: its region's home goes above the rows the answer holds.
  const TextStart apt_start = text_start_after(command_line, {}, sizes, TextStart::top_left());
  EXPECT_EQ(to_text(apt, {}, sizes, apt_start), apt_text) << ::testing::PrintToString(echoed);
  const std::string before = command_line + apt + prompt + "python3 /tmp/status.py\r\n";
  const TextStart start = text_start_after(before, {}, sizes, TextStart::top_left());
  ASSERT_EQ(start.row, 11u) << ::testing::PrintToString(echoed);
  std::string status = "compiling\r\n";
  for (int i = 1; i <= 3; ++i) {
    status += "  CC " + std::to_string(i) +
              "\r\n\x1b"
              "7\x1b[12;1H\x1b[2K[" +
              std::to_string(i) +
              "/3]\x1b"
              "8";
  }
  EXPECT_EQ(to_text(status + "linked\r\n", {}, sizes, start),
            "compiling\n  CC 1\n  CC 2\n  CC 3\nlinked\n");
}

TEST(TextViewStart, AStatusAfterALongCommandLineReadsAsItsLastState) {
  expect_status_after_command_line("python3 /tmp/apt.py");
}

// A command line as wide as the terminal, as readline echoes one written at
// once: past the margin with a space and a CR, back up a row, the last
// character again (session 49's closing CI, where the checkout's path made
// the line 80 columns).
TEST(TextViewStart, AStatusAfterACommandLineAsWideAsTheTerminalReadsAsItsLastState) {
  expect_status_after_command_line("ls 1 \r\x1b[A\x1b[39C\x1b[K1");
}

// Typed, the rest of a long command line follows readline's space and CR
// on the next row: the line reads whole, the row known after it.
TEST(TextViewStart, ACommandLineTypedPastTheMarginReadsWhole) {
  const TerminalSizes sizes{{0, {10, 6}}};
  const std::string raw = "$ echo abc \rdef\r\nabcdef\r\n$ ";
  EXPECT_EQ(to_text(raw, {}, sizes, TextStart::top_left()), "$ echo abcdef\nabcdef\n$ ");
  EXPECT_EQ(text_start_after(raw, {}, sizes, TextStart::top_left()).row, 3u);
  expect_status_after_command_line("python3 /tmp/ \rapt.py");
}

}  // namespace
}  // namespace agentty::session
