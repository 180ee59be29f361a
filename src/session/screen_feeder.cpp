#include "session/screen_feeder.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "base/byte_scan.hpp"
#include "base/thread_cpu_time.hpp"
#include "session/escape_scanner.hpp"
#include "session/plain_text_simulator.hpp"

namespace agentty::session {
namespace {

// A queue buffer larger than this is released after a catch-up.
constexpr std::size_t kKeptQueueCapacity = 64 * 1024;

// What catch_up_for() feeds between looks at the clock: at most this, and
// less once bytes are known to be slow (16 KiB of DECALN took libvterm
// 80-240 ms), down to the smallest slice. A catch-up of newly queued
// screen-wide sequences starts with the smallest: they may cost a thousand
// times what the latest catch-up measured.
constexpr std::size_t kSliceBytes = 16 * 1024;
constexpr std::size_t kMinSliceBytes = 256;
// A slice is at most this many times the one before it, so one cheap slice
// (a clock read, a cache hit) cannot make the next one the largest.
constexpr std::size_t kSliceGrowth = 4;

// A catch-up's CPU time tells the cost per byte once it fed this many bytes
// or took this long (below both, a clock read or a cache miss dominates).
constexpr std::size_t kMinCostSample = 4 * 1024;
constexpr auto kMinCostTime = std::chrono::milliseconds(1);

// Runs shorter than this are not worth the two screenfuls a skip feeds.
constexpr std::size_t kMinSkipRun = 64 * 1024;

std::size_t plain_run_end(std::string_view data, std::size_t from) {
  return from + find_not_plain_text(data.data() + from, data.size() - from);
}

// End of the head A of a run: just past the first CR after the 2*rows-th LF.
// After that many LFs every row on screen holds text from the run.
std::size_t end_of_head(std::string_view run, int rows) {
  std::size_t pos = 0;
  for (int seen = 0; seen < 2 * rows; ++seen) {
    const void* lf = std::memchr(run.data() + pos, '\n', run.size() - pos);
    if (!lf) return std::string_view::npos;
    pos = static_cast<std::size_t>(static_cast<const char*>(lf) - run.data()) + 1;
  }
  std::size_t cr = run.find('\r', pos);
  return cr == std::string_view::npos ? cr : cr + 1;
}

bool all_ascii(const std::vector<std::string>& lines) {
  return std::all_of(lines.begin(), lines.end(), [](const std::string& line) {
    return std::all_of(line.begin(), line.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  });
}

}  // namespace

struct ScreenFeeder::Impl {
  Impl(pty::TerminalSize size, std::size_t scrollback_limit, std::size_t catch_up_bytes)
      : model_size(size), scrollback_limit(scrollback_limit), catch_up_bytes(catch_up_bytes) {}

  // Made on first use: libvterm's two cell buffers cost ~300 KB and a
  // millisecond to set up, and most executions print a few lines of plain
  // text that nobody ever looks at as a screen.
  std::optional<Screen> lazy_screen;
  pty::TerminalSize model_size;  // the size to make it with
  std::size_t scrollback_limit;
  std::size_t catch_up_bytes;
  std::string queue;
  // query_scanner's count of screen-wide sequences at the latest catch-up.
  std::uint64_t screen_wide_fed = 0;
  // libvterm's cost per queued byte in CPU time, measured on the latest
  // catch_up_for().
  double nanoseconds_per_byte = 0;
  bool cut_short = false;  // the latest advance_for() left bytes queued
  // Output started a catch-up since the owner's latest catch_up_for(): more
  // output only queues until the owner's turn (see on_output).
  bool output_caught_up = false;
  EscapeScanner query_scanner;   // over bytes as they arrive
  EscapeScanner stream_scanner;  // over bytes as they are fed, exactly
  ScreenFeederStats stats;
  // A skip in progress: libvterm stands where the head A left it, the
  // simulator has run everything since, and sim_tail holds the bytes it ran
  // from offset sim_tail_origin on (at least from its tail_start(), or all
  // of them while it has none).
  std::optional<PlainTextSimulator> sim;
  std::string sim_tail;
  std::uint64_t sim_tail_origin = 0;

  Screen& screen() {
    if (!lazy_screen) lazy_screen.emplace(model_size, scrollback_limit);
    return *lazy_screen;
  }

  void feed(std::string_view bytes) {
    if (bytes.empty()) return;
    stats.bytes_fed += bytes.size();
    screen().feed(bytes);
  }

  // Brings the screen up to the end of the queue. Unless `settle`, a run of
  // plain text reaching the end may stay in the simulator: a flood then goes
  // on in the next batch without handing back to libvterm in between.
  void advance(bool settle) {
    if (!queue.empty()) {
      process(queue, settle);
      clear_queue();
    }
    if (settle) end_skip();
  }

  // Like advance(false), but stops after the first slice that ends past
  // `budget` (one slice at least, so each call makes progress), and measures
  // libvterm's cost per byte on the way. A `probe` starts with the smallest
  // slice rather than trust the cost last measured.
  void advance_for(std::chrono::nanoseconds budget, bool probe = false) {
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    const auto cpu_started = thread_cpu_time();
    std::size_t done = 0;
    auto elapsed = Clock::duration::zero();
    std::size_t slice_bytes = probe ? kMinSliceBytes : slice_within(budget);
    while (done < queue.size() && (done == 0 || elapsed < budget)) {
      const std::size_t slice = std::min(slice_bytes, queue.size() - done);
      process(std::string_view(queue).substr(done, slice), false);
      done += slice;
      const auto before = elapsed;
      elapsed = Clock::now() - started;
      slice_bytes = next_slice(slice, elapsed - before, budget);
    }
    // In CPU time: in wall time, one catch-up preempted on a loaded machine
    // read as slow bytes, and a plain-text flood was paused until a later
    // turn measured again.
    const auto cpu = thread_cpu_time() - cpu_started;
    if (done >= kMinCostSample || cpu >= kMinCostTime) {
      nanoseconds_per_byte = static_cast<double>(cpu.count()) / static_cast<double>(done);
    }
    cut_short = done < queue.size();
    if (!cut_short) return clear_queue();
    queue.erase(0, done);
  }

  // A slice that takes about half of `budget` at the cost last measured.
  std::size_t slice_within(std::chrono::nanoseconds budget) const {
    if (nanoseconds_per_byte <= 0) return kSliceBytes;
    return fit_slice(budget, nanoseconds_per_byte, kSliceBytes);
  }

  // A slice that takes about half of `budget` at the cost of the one just
  // fed (`slice` bytes in `took`), so a catch-up stops within about half a
  // budget of it.
  static std::size_t next_slice(std::size_t slice, std::chrono::nanoseconds took,
                                std::chrono::nanoseconds budget) {
    const std::size_t most = std::min(kSliceBytes, slice * kSliceGrowth);
    if (took.count() <= 0) return most;
    return fit_slice(budget, static_cast<double>(took.count()) / static_cast<double>(slice), most);
  }

  // The bytes that take half of `budget` at `ns_per_byte`, within
  // [kMinSliceBytes, most].
  static std::size_t fit_slice(std::chrono::nanoseconds budget, double ns_per_byte,
                               std::size_t most) {
    const double fit = static_cast<double>(budget.count()) / 2 / ns_per_byte;
    if (fit >= static_cast<double>(most)) return most;
    return std::max(kMinSliceBytes, static_cast<std::size_t>(fit));
  }

  void clear_queue() {
    cut_short = false;
    // A bulk burst grows the queue to catch_up_bytes; an execution that then
    // goes quiet should not keep that megabyte for the rest of its life.
    if (queue.capacity() > kKeptQueueCapacity) {
      std::string().swap(queue);
    } else {
      queue.clear();
    }
  }

  void process(std::string_view data, bool settle) {
    std::size_t i = 0;
    if (sim) {
      i = continue_skip(data);
      if (i < data.size()) end_skip();
    }
    std::size_t fed_from = i;
    // Where the sequence being scanned began in `data` (npos: before it).
    std::size_t sequence_start = std::string_view::npos;
    while (i < data.size()) {
      if (stream_scanner.in_ground()) {
        const std::size_t end = plain_run_end(data, i);
        if (end != i) stream_scanner.passed_text();
        const bool open = end == data.size() && !settle;  // may go on in the next batch
        if ((open || end - i >= kMinSkipRun) && stream_scanner.plain_ascii_is_literal()) {
          feed(data.substr(fed_from, i - fed_from));
          fed_from = end;
          begin_skip(data.substr(i, end - i));
          if (!open) end_skip();
        }
        i = end;
        if (i == data.size()) break;
        sequence_start = i;
      }
      stream_scanner.step(static_cast<unsigned char>(data[i++]));
      if (stream_scanner.ended_redundant_sequence() && sequence_start != std::string_view::npos) {
        // A repeat that changes nothing (a flood of `\e[2J`): libvterm
        // would rewrite every cell for it.
        feed(data.substr(fed_from, sequence_start - fed_from));
        stats.bytes_dropped += i - sequence_start;
        fed_from = i;
      }
    }
    feed(data.substr(fed_from));
  }

  // Feeds the head A of a plain run and starts the simulator on the rest
  // (or feeds it all when the run or the screen does not allow a skip).
  void begin_skip(std::string_view run) {
    Screen& screen = this->screen();
    const auto size = screen.size();
    const int rows = size.rows;
    const int cols = size.cols;
    const std::size_t head = end_of_head(run, rows);
    if (cols < 2 || head == std::string_view::npos || !screen.plain_text_scrolls_simply()) {
      return feed(run);
    }
    feed(run.substr(0, head));
    const std::string_view rest = run.substr(head);
    const ScreenSnapshot snap = screen.snapshot();
    if (snap.cursor.row != rows - 1 || snap.cursor.col != 0 || !all_ascii(snap.lines)) {
      return feed(rest);
    }
    sim.emplace(cols, rows, snap.lines, snap.cursor.row, scrollback_limit);
    sim_tail.clear();
    sim_tail_origin = 0;
    continue_skip(rest);
  }

  // Runs the plain text at the start of `text` through the simulator,
  // keeping the bytes end_skip() may need to feed; returns its length.
  std::size_t continue_skip(std::string_view text) {
    const std::uint64_t text_start = sim->consumed();
    text = text.substr(0, sim->run(text));
    if (text.empty()) return 0;
    const auto tail = sim->tail_start();
    const std::uint64_t keep_from = tail ? tail->offset : 0;
    if (keep_from >= text_start) {
      sim_tail.assign(text.substr(keep_from - text_start));
      sim_tail_origin = keep_from;
    } else {
      sim_tail.append(text);
      // Drop the dead prefix only once it is most of the buffer: small pieces
      // of output would otherwise move the whole tail each time.
      if (keep_from - sim_tail_origin > sim_tail.size() / 2) {
        sim_tail.erase(0, keep_from - sim_tail_origin);
        sim_tail_origin = keep_from;
      }
    }
    // Text with too few CRs to hand back cheaply: hand back now, so what
    // end_skip() feeds stays bounded; the next batch may start a new skip.
    if (sim_tail.size() > catch_up_bytes) end_skip();
    return text.size();
  }

  // Hands the simulator's result back to libvterm, which is then exactly
  // where feeding every byte would have left it. No-op without a skip.
  void end_skip() {
    if (!sim) return;
    const auto tail = sim->tail_start();
    if (!tail) {
      feed(sim_tail);  // too little scrolled to hand over: libvterm runs it all
    } else {
      Screen& screen = this->screen();
      for (auto& line : sim->take_scrolled_off()) screen.append_scrollback(std::move(line));
      screen.set_scrollback_capture(false);
      feed("\x1b[" + std::to_string(tail->row + 1) + ";1H");
      feed(std::string_view(sim_tail).substr(tail->offset - sim_tail_origin));
      screen.set_scrollback_capture(true);
      stats.bytes_skipped += tail->offset;
      ++stats.skips;
      const ScreenSnapshot after = screen.snapshot();
      if (after.lines != sim->visible_lines() || after.cursor.row != sim->row() ||
          after.cursor.col != sim->col()) {
        ++stats.skip_mismatches;
      }
    }
    sim.reset();
    if (sim_tail.capacity() > kKeptQueueCapacity) {
      std::string().swap(sim_tail);
    } else {
      sim_tail.clear();
    }
  }
};

ScreenFeeder::ScreenFeeder(pty::TerminalSize size, std::size_t scrollback_limit,
                           std::size_t catch_up_bytes)
    : impl_(std::make_unique<Impl>(size, scrollback_limit, catch_up_bytes)) {}

ScreenFeeder::~ScreenFeeder() = default;

void ScreenFeeder::on_output(std::string_view bytes) {
  Impl& impl = *impl_;
  const bool query = impl.query_scanner.scan(bytes);
  if (impl.sim && impl.queue.empty()) {
    // A flood in progress: its plain text goes on into the simulator without
    // being queued.
    bytes.remove_prefix(impl.continue_skip(bytes));
  }
  impl.queue.append(bytes);
  // A query is answered once fed; one left queued is the owner's to feed
  // in its next turn (wants_turn()).
  const std::uint64_t screen_wide = impl.query_scanner.screen_wide_sequences();
  // Output gets one catch-up per turn of the owner; what comes after it
  // goes on in the owner's next turn. A budget spent per output call held
  // the loop: small output calls near a pause made it 16 times 10 ms per
  // turn, and an SSH connection hands out many packets in one handler
  // (64 x 5 ms for a flood of reverse indexes, each catch-up finishing in
  // time). Queued instead, such output shows in lagging(), and its channel
  // is paused rather than the loop held.
  if (impl.cut_short || impl.output_caught_up) return;
  if (query || impl.queue.size() >= impl.catch_up_bytes ||
      screen_wide - impl.screen_wide_fed >= kCatchUpScreenWide) {
    const bool wide_queued = screen_wide != impl.screen_wide_fed;
    impl.screen_wide_fed = screen_wide;
    impl.advance_for(kCatchUpBudget, wide_queued);
    impl.output_caught_up = true;
  }
}

void ScreenFeeder::catch_up() {
  impl_->advance(true);
  impl_->output_caught_up = false;
}

void ScreenFeeder::catch_up_for(std::chrono::nanoseconds budget) {
  impl_->advance_for(budget);
  impl_->output_caught_up = false;
}

bool ScreenFeeder::finish() {
  Impl& impl = *impl_;
  impl.output_caught_up = false;  // no more turns: the output has ended
  if (impl.lazy_screen) {
    impl.advance(true);
    impl.lazy_screen->freeze();
    return false;
  }
  std::string().swap(impl.queue);
  impl.query_scanner = EscapeScanner();
  impl.stream_scanner = EscapeScanner();
  return true;
}

bool ScreenFeeder::behind() const {
  return !impl_->queue.empty() || impl_->sim.has_value();
}

bool ScreenFeeder::cut_short() const {
  return impl_->cut_short;
}

bool ScreenFeeder::wants_turn() const {
  return impl_->cut_short || impl_->output_caught_up;
}

bool ScreenFeeder::lagging() const {
  const double queued_ns = static_cast<double>(impl_->queue.size()) * impl_->nanoseconds_per_byte;
  return queued_ns > static_cast<double>(std::chrono::nanoseconds(kMaxLag).count());
}

std::size_t ScreenFeeder::bytes_before_lag() const {
  const double per_byte = impl_->nanoseconds_per_byte;
  if (per_byte <= 0) return std::string::npos;
  const double room = static_cast<double>(std::chrono::nanoseconds(kMaxLag).count()) / per_byte -
                      static_cast<double>(impl_->queue.size());
  if (room <= 0) return 0;
  if (room >= static_cast<double>(std::string::npos / 2)) return std::string::npos;
  return static_cast<std::size_t>(room);
}

void ScreenFeeder::resize(pty::TerminalSize size) {
  impl_->advance(true);
  if (impl_->lazy_screen) impl_->lazy_screen->resize(size);
  impl_->model_size = size;
}

std::string ScreenFeeder::take_replies() {
  return impl_->lazy_screen ? impl_->lazy_screen->take_replies() : std::string();
}

const Screen& ScreenFeeder::screen() const {
  return impl_->screen();
}

bool ScreenFeeder::has_screen() const {
  return impl_->lazy_screen.has_value();
}

const ScreenFeederStats& ScreenFeeder::stats() const {
  return impl_->stats;
}

}  // namespace agentty::session
