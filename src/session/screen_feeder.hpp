// ScreenFeeder: keeps a Screen exact without paying libvterm's per-line cost
// on bulk output.
//
// Every output byte is handed to on_output() in log order. Bytes that may hold
// a terminal query (which a program waits on) are fed at once, so replies go
// out promptly. Other bytes are queued; catch_up() brings the screen up to
// date when someone looks (screen tool, a new viewer, an idle moment). A long
// run of plain text that would scroll off entirely is not fed through
// libvterm: its lines go straight to the scrollback and only the last
// screenful is fed, which gives the same screen (proved by the differential
// tests against tmux).
//
// The bulk path ("skip") applies to a run of printable ASCII, CR and LF that
// starts between escape sequences, and only while plain text behaves simply
// (Screen::plain_text_scrolls_simply(), plus G0 ASCII shifted in and neither
// insert nor newline mode, tracked by an EscapeScanner). The run is cut as
// A + M + T: A (at least 2*rows LFs, up to a CR) goes through libvterm, so
// every row on screen is then text from the run; a PlainTextSimulator starts
// from that screen and runs over M + T, storing the lines that scroll off;
// T (from a CR, scrolling at least `rows` times) goes through libvterm again
// after a CUP to the simulator's cursor, with libvterm's own scrollback
// capture off. Since T scrolls every stale row away, libvterm ends exactly
// where feeding everything would have left it. Each skip checks the
// simulator's final screen against libvterm's (stats().skip_mismatches).
//
// A flood spans many catch-up batches: a run still going at the end of a
// batch stays in the simulator (only T's bytes are kept), and while it does,
// further plain text goes straight into it without being queued. The skip
// ends (T is fed) at the first other byte, when anyone looks (catch_up(),
// resize(), a query), or when the kept bytes outgrow a batch (text with too
// few CRs). So a long flood costs one A and one T, not two per batch. Until
// then the simulator holds the newest scrollback_limit scrolled-off rows
// (cols bytes each) besides the Screen's own scrollback.
//
// libvterm's cost per byte varies a thousandfold: a clear, reset or
// alt-screen switch (`\e[2J`, `\ec`, `\e[?1049h`) rewrites every cell, so a
// megabyte of them took it 4-8 s, all that time on the one event loop. So a
// catch-up that output itself starts feeds the queue in slices for at most
// kCatchUpBudget, leaving the rest queued, and it starts once
// kCatchUpScreenWide such sequences have come as well as at catch_up_bytes,
// so their cost is measured early. Output starts at most one catch-up per
// turn of the owner (wants_turn()); the owner's turns do the rest, so output
// the model cannot take at full speed builds a queue rather than holding
// the loop in whoever hands it out. lagging() says when the queue would take
// longer than kMaxLag to catch up at the rate measured (in the thread's CPU
// time, so a catch-up preempted by other load is not read as slow bytes):
// the execution then stops reading the program's output until it has caught
// up (a slow terminal slows the program that writes to it, as a real one
// does).
//
// Repeats that change nothing never reach libvterm: in a run of full-screen
// clears, scrollback clears, resets and cursor homes (`\e[2J`, `\e[3J`,
// `\ec`, `\e[H`) with no other byte between, each kind after its first is
// dropped (EscapeScanner::ended_redundant_sequence(); they are idempotent
// and commute), and so is a screen alignment test (`\e#8`) directly after
// another, so a program printing them flat out costs what plain text does
// and is never slowed. stats().bytes_dropped counts them.
//
// The Screen itself is made on first use (a byte that may hold a query, a
// catch-up, screen()): most executions print a little plain text that nobody
// looks at as a screen, and libvterm's two cell buffers cost ~300 KB and about
// a millisecond to set up.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "session/screen.hpp"

namespace agentty::session {

struct ScreenFeederStats {
  std::uint64_t bytes_fed = 0;      // through libvterm
  std::uint64_t bytes_skipped = 0;  // simulated instead
  std::uint64_t skips = 0;
  std::uint64_t skip_mismatches = 0;  // simulator and libvterm disagreed (a bug)
  std::uint64_t bytes_dropped = 0;    // repeats that change nothing (EscapeScanner)
};

class ScreenFeeder {
 public:
  // catch_up_bytes: queued bytes that trigger a catch-up on their own (tests
  // make it small to put batch boundaries anywhere).
  explicit ScreenFeeder(pty::TerminalSize size, std::size_t scrollback_limit = 10000,
                        std::size_t catch_up_bytes = kCatchUpBytes);
  ~ScreenFeeder();

  void on_output(std::string_view bytes);
  // Feeds everything queued and ends a skip in progress: the screen is then
  // exact. Cheap when nothing is behind.
  void catch_up();
  // The output has ended. With a screen made, catches up (a skip in progress
  // holds up to scrollback_limit rows besides the Screen's own) and freezes
  // it (Screen::freeze(): libvterm's cells go, what it shows stays). Without one,
  // forgets the queue, which then holds every byte given, and returns true:
  // the caller feeds its log again through on_output() before the next look.
  // So an ended execution nobody looked at keeps no copy of its output here.
  bool finish();
  // Feeds queued bytes in slices until `budget` has passed; the rest stays
  // queued (see above).
  void catch_up_for(std::chrono::nanoseconds budget);
  // Whether the screen lags the bytes given (catch_up() would do work).
  bool behind() const;
  // Whether the latest catch-up that output started stopped at its budget
  // with bytes left: someone must call catch_up_for() again soon (a query
  // among them waits for its answer).
  bool cut_short() const;
  // Whether the owner should call catch_up_for() in its next turn: a
  // catch-up was cut short, or output has had its one catch-up of this turn
  // and more output only queues until then.
  bool wants_turn() const;
  // Whether catch_up() would take more than kMaxLag, at the cost per byte
  // measured on this output's latest catch-up.
  bool lagging() const;
  // How many more bytes the queue takes before lagging() (0 once it lags;
  // npos while no cost is measured): the owner's output slice, so a pause
  // overshoots by little and cheap output comes in whole reads.
  std::size_t bytes_before_lag() const;
  void resize(pty::TerminalSize size);  // catches up first

  // Replies to terminal queries produced so far (write them to the PTY).
  std::string take_replies();

  // The model (made now if not yet); exact only after catch_up().
  const Screen& screen() const;
  // Whether the model has been made yet.
  bool has_screen() const;
  const ScreenFeederStats& stats() const;

  // Queued bytes that trigger a catch-up on their own (by default).
  static constexpr std::size_t kCatchUpBytes = 1 << 20;
  // Sequences that may rewrite the whole screen (EscapeScanner) that
  // trigger a catch-up on their own: 256 full-screen clears at 120x40 cost
  // libvterm about 4 ms. Colours and cursor moves do not count: output full
  // of them, nobody looking, makes no screen (a screen kept per retained
  // execution cost ~240 KB).
  static constexpr std::uint64_t kCatchUpScreenWide = 256;
  // How long a catch-up that output starts may feed libvterm at a time.
  static constexpr std::chrono::milliseconds kCatchUpBudget{10};
  // The queue's estimated cost above which lagging() is true.
  static constexpr std::chrono::milliseconds kMaxLag{50};

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentty::session
