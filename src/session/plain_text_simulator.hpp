// PlainTextSimulator: libvterm 0.1's handling of printable ASCII, CR and LF
// with autowrap on and a full-screen scroll region, cheap enough for bulk
// output (a ring of rows, so a scroll costs one row; runs of text are copied
// with memcpy). ScreenFeeder uses it to skip libvterm on long floods of plain
// text (see screen_feeder.hpp for how its result is handed back to libvterm).
//
// Quirks it shares with libvterm (checked by the differential tests):
// writing the last column sets a pending wrap instead of moving; LF at the
// bottom row scrolls but keeps a pending wrap; CR clears it.
//
// It runs over a stream given in pieces (run() continues where the last call
// stopped); offsets count bytes from the first run(). It records
// checkpoints: positions just after a CR (column 0, no pending wrap), keeping
// only the latest one after which the text still scrolled every row away,
// and the newest `keep_lines` rows that scrolled off the top.
//
// Threading: a plain value; one owner.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_scan.hpp"

namespace agentty::session {

class PlainTextSimulator {
 public:
  struct Checkpoint {
    std::uint64_t offset = 0;  // just after a CR: column 0, no pending wrap
    int row = 0;
    std::uint64_t scrolls = 0;  // scrolls before this point
  };

  // Starts from a screen of ASCII `lines` (missing ones blank) with the
  // cursor at column 0 of `cursor_row`, no pending wrap.
  PlainTextSimulator(int cols, int rows, const std::vector<std::string>& lines, int cursor_row,
                     std::size_t keep_lines)
      : cols_(cols), rows_(rows), row_(cursor_row), keep_lines_(keep_lines) {
    rows_buf_.assign(static_cast<std::size_t>(rows),
                     std::string(static_cast<std::size_t>(cols), ' '));
    for (int r = 0; r < rows && r < static_cast<int>(lines.size()); ++r) {
      rows_buf_[r].replace(0, std::min(lines[r].size(), rows_buf_[r].size()), lines[r]);
    }
  }

  // Continues over the plain text (printable ASCII, CR, LF) at the start of
  // `text`, up to the first other byte; returns how many bytes that was.
  std::size_t run(std::string_view text) {
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
        add_checkpoint(consumed_ + static_cast<std::uint64_t>(p - begin));
      } else {
        const std::size_t n = find_not_printable(p, static_cast<std::size_t>(end - p));
        if (n == 0) break;  // not plain text: the caller's to handle
        print(p, n);
        p += n;
      }
    }
    const auto ran = static_cast<std::size_t>(p - begin);
    consumed_ += ran;
    return ran;
  }

  // Bytes run so far.
  std::uint64_t consumed() const { return consumed_; }

  // The latest CR after which the text still scrolls every row away. Once
  // there is one there always is (scrolls only grow), and it only moves on.
  std::optional<Checkpoint> tail_start() const {
    if (checkpoints_.empty() || scrolls_ - checkpoints_.front().scrolls < std::uint64_t(rows_)) {
      return std::nullopt;
    }
    return checkpoints_.front();
  }

  // Lines scrolled off (the newest keep_lines), oldest first, trimmed.
  std::vector<std::string> take_scrolled_off() {
    std::rotate(scrolled_off_.begin(),
                scrolled_off_.begin() + static_cast<std::ptrdiff_t>(
                                            scrolled_off_.size() < keep_lines_ ? 0 : next_slot_),
                scrolled_off_.end());
    for (std::string& line : scrolled_off_) {
      line = trimmed(std::move(line));
      // They may live as scrollback for the rest of a retained execution:
      // not at a full row's capacity each (~1.8 MB per 10000 rows).
      line.shrink_to_fit();
    }
    next_slot_ = 0;
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

  void add_checkpoint(std::uint64_t offset) {
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
  std::uint64_t consumed_ = 0;
  std::deque<Checkpoint> checkpoints_;
  std::vector<std::string> scrolled_off_;
  std::size_t next_slot_ = 0;
  std::size_t keep_lines_;
};

}  // namespace agentty::session
