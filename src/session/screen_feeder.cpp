#include "session/screen_feeder.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>
#include <vector>

#include "base/byte_scan.hpp"
#include "session/escape_scanner.hpp"

namespace agentty::session {
namespace {

// A queue buffer larger than this is released after a catch-up.
constexpr std::size_t kKeptQueueCapacity = 64 * 1024;

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

// libvterm 0.1's handling of printable ASCII, CR and LF with autowrap on and a
// full-screen scroll region, on a ring of rows so a scroll costs one row.
// Quirks it must share with libvterm (checked by the differential tests):
// writing the last column sets a pending wrap instead of moving; LF at the
// bottom row scrolls but keeps a pending wrap; CR clears it.
class PlainTextSimulator {
 public:
  struct Checkpoint {
    std::size_t offset = 0;  // just after a CR: column 0, no pending wrap
    int row = 0;
    std::uint64_t scrolls = 0;  // scrolls before this point
  };

  PlainTextSimulator(int cols, int rows, const std::vector<std::string>& lines, int cursor_row,
                     std::size_t keep_lines)
      : cols_(cols), rows_(rows), row_(cursor_row), keep_lines_(keep_lines) {
    rows_buf_.assign(static_cast<std::size_t>(rows),
                     std::string(static_cast<std::size_t>(cols), ' '));
    for (int r = 0; r < rows && r < static_cast<int>(lines.size()); ++r) {
      rows_buf_[r].replace(0, std::min(lines[r].size(), rows_buf_[r].size()), lines[r]);
    }
  }

  void run(std::string_view text) {
    const char* begin = text.data();
    const char* p = begin;
    const char* end = p + text.size();
    while (p < end) {
      char c = *p;
      if (c == '\n') {
        linefeed();
        ++p;
      } else if (c == '\r') {
        if (col_ != 0) col_ = 0, phantom_ = false;
        ++p;
        add_checkpoint(static_cast<std::size_t>(p - begin));
      } else {
        const std::size_t n = find_control(p, static_cast<std::size_t>(end - p));
        print(p, n);
        p += n;
      }
    }
  }

  // The latest CR after which the text still scrolls every row away.
  std::optional<Checkpoint> tail_start() const {
    if (checkpoints_.empty() || scrolls_ - checkpoints_.front().scrolls < std::uint64_t(rows_)) {
      return std::nullopt;
    }
    return checkpoints_.front();
  }

  // Lines scrolled off (the newest keep_lines), oldest first.
  std::vector<std::string> take_scrolled_off() {
    std::rotate(scrolled_off_.begin(),
                scrolled_off_.begin() + static_cast<std::ptrdiff_t>(
                                            scrolled_off_.size() < keep_lines_ ? 0 : next_slot_),
                scrolled_off_.end());
    for (std::string& line : scrolled_off_) line = trimmed(std::move(line));
    return std::move(scrolled_off_);
  }
  int row() const { return row_; }
  int col() const { return col_; }

  std::vector<std::string> visible_lines() const {
    std::vector<std::string> lines;
    for (int r = 0; r < rows_; ++r) lines.push_back(trimmed(line(r)));
    return lines;
  }

 private:
  static std::string trimmed(std::string row) {
    auto last = row.find_last_not_of(' ');
    row.resize(last == std::string::npos ? 0 : last + 1);
    return row;
  }
  const std::string& line(int r) const { return rows_buf_[(top_ + r) % rows_]; }
  std::string& line(int r) { return rows_buf_[(top_ + r) % rows_]; }

  void linefeed() {
    if (row_ == rows_ - 1) {
      scroll();  // the cursor does not move, so a pending wrap survives
    } else {
      ++row_;
      phantom_ = false;
    }
  }

  void scroll() {
    std::string& top = rows_buf_[top_];
    if (keep_lines_ > 0) {
      // A ring of reused strings: most lines are overwritten, never read.
      // The row itself moves to the ring (trimmed when taken) and takes
      // the slot's old buffer: no copy, and no allocation once the ring is full.
      if (scrolled_off_.size() < keep_lines_) scrolled_off_.emplace_back();
      std::string& slot = scrolled_off_[next_slot_];
      next_slot_ = (next_slot_ + 1) % keep_lines_;
      top.swap(slot);
      top.assign(static_cast<std::size_t>(cols_), ' ');
    } else {
      std::fill(top.begin(), top.end(), ' ');
    }
    top_ = (top_ + 1) % static_cast<std::size_t>(rows_);
    ++scrolls_;
    while (checkpoints_.size() >= 2 && scrolls_ - checkpoints_[1].scrolls >= std::uint64_t(rows_)) {
      checkpoints_.pop_front();
    }
  }

  void print(const char* p, std::size_t n) {
    while (n > 0) {
      if (phantom_) {
        linefeed();
        col_ = 0;
        phantom_ = false;
      }
      std::size_t k = std::min(n, static_cast<std::size_t>(cols_ - col_));
      std::memcpy(line(row_).data() + col_, p, k);
      p += k;
      n -= k;
      if (col_ + static_cast<int>(k) >= cols_) {
        col_ = cols_ - 1;
        phantom_ = true;
      } else {
        col_ += static_cast<int>(k);
      }
    }
  }

  void add_checkpoint(std::size_t offset) {
    // Of two checkpoints with the same scroll count the later one is better.
    if (!checkpoints_.empty() && checkpoints_.back().scrolls == scrolls_) checkpoints_.pop_back();
    checkpoints_.push_back(Checkpoint{offset, row_, scrolls_});
  }

  int cols_;
  int rows_;
  std::vector<std::string> rows_buf_;
  std::size_t top_ = 0;
  int row_ = 0;
  int col_ = 0;
  bool phantom_ = false;
  std::uint64_t scrolls_ = 0;
  std::deque<Checkpoint> checkpoints_;
  std::vector<std::string> scrolled_off_;
  std::size_t next_slot_ = 0;
  std::size_t keep_lines_;
};

}  // namespace

struct ScreenFeeder::Impl {
  Impl(pty::TerminalSize size, std::size_t scrollback_limit)
      : model_size(size), scrollback_limit(scrollback_limit) {}

  // Made on first use: libvterm's two cell buffers cost ~300 KB and a
  // millisecond to set up, and most executions print a few lines of plain
  // text that nobody ever looks at as a screen.
  std::optional<Screen> lazy_screen;
  pty::TerminalSize model_size;  // the size to make it with
  std::size_t scrollback_limit;
  std::string queue;
  EscapeScanner query_scanner;   // over bytes as they arrive
  EscapeScanner stream_scanner;  // over bytes as they are fed, exactly
  ScreenFeederStats stats;

  Screen& screen() {
    if (!lazy_screen) lazy_screen.emplace(model_size, scrollback_limit);
    return *lazy_screen;
  }

  void feed(std::string_view bytes) {
    stats.bytes_fed += bytes.size();
    screen().feed(bytes);
  }

  void process(std::string_view data) {
    std::size_t i = 0;
    std::size_t fed_from = 0;
    while (i < data.size()) {
      if (stream_scanner.in_ground()) {
        std::size_t end = plain_run_end(data, i);
        if (end - i >= kMinSkipRun && stream_scanner.plain_ascii_is_literal()) {
          feed(data.substr(fed_from, i - fed_from));
          skip_run(data.substr(i, end - i));
          fed_from = end;
        }
        i = end;
        if (i == data.size()) break;
      }
      stream_scanner.step(static_cast<unsigned char>(data[i++]));
    }
    feed(data.substr(fed_from));
  }

  void skip_run(std::string_view run) {
    Screen& screen = this->screen();
    const auto size = screen.size();
    int rows = size.rows;
    int cols = size.cols;
    std::size_t head = end_of_head(run, rows);
    if (cols < 2 || head == std::string_view::npos || !screen.plain_text_scrolls_simply()) {
      return feed(run);
    }
    feed(run.substr(0, head));
    std::string_view rest = run.substr(head);
    ScreenSnapshot snap = screen.snapshot();
    if (snap.cursor.row != rows - 1 || snap.cursor.col != 0 || !all_ascii(snap.lines)) {
      return feed(rest);
    }
    PlainTextSimulator sim(cols, rows, snap.lines, snap.cursor.row, scrollback_limit);
    sim.run(rest);
    auto tail = sim.tail_start();
    if (!tail) return feed(rest);

    for (auto& line : sim.take_scrolled_off()) screen.append_scrollback(std::move(line));
    screen.set_scrollback_capture(false);
    feed("\x1b[" + std::to_string(tail->row + 1) + ";1H");
    feed(rest.substr(tail->offset));
    screen.set_scrollback_capture(true);
    stats.bytes_skipped += tail->offset;
    ++stats.skips;

    ScreenSnapshot after = screen.snapshot();
    if (after.lines != sim.visible_lines() || after.cursor.row != sim.row() ||
        after.cursor.col != sim.col()) {
      ++stats.skip_mismatches;
    }
  }

  void catch_up() {
    if (queue.empty()) return;
    process(queue);
    // A bulk burst grows the queue to kCatchUpBytes; an execution that then
    // goes quiet should not keep that megabyte for the rest of its life.
    if (queue.capacity() > kKeptQueueCapacity) {
      std::string().swap(queue);
    } else {
      queue.clear();
    }
  }
};

ScreenFeeder::ScreenFeeder(pty::TerminalSize size, std::size_t scrollback_limit)
    : impl_(std::make_unique<Impl>(size, scrollback_limit)) {}

ScreenFeeder::~ScreenFeeder() = default;

void ScreenFeeder::on_output(std::string_view bytes) {
  bool query = impl_->query_scanner.scan(bytes);
  impl_->queue.append(bytes);
  if (query || impl_->queue.size() >= kCatchUpBytes) impl_->catch_up();
}

void ScreenFeeder::catch_up() {
  impl_->catch_up();
}

bool ScreenFeeder::behind() const {
  return !impl_->queue.empty();
}

void ScreenFeeder::resize(pty::TerminalSize size) {
  impl_->catch_up();
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
