// Lines kept oldest first, the oldest dropped as new ones come: a screen's
// scrollback. One buffer holds the text of all of them back to back, because
// a std::deque<std::string> spent a 32-byte string per line (and a heap
// block per line over 15 bytes): ~330 KB for the 10000 short lines that a
// retained record of `seq 1 200000` keeps, against ~110 KB here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace agentty::session {

class LineRing {
 public:
  void push_back(std::string_view line);
  void pop_front();
  std::string_view front() const;
  std::size_t size() const { return lengths_.size(); }
  bool empty() const { return lengths_.empty(); }
  // Text bytes of the lines held.
  std::size_t bytes() const { return text_.size() - head_; }
  // The newest `count` lines (all when fewer), oldest first.
  std::vector<std::string> newest(std::size_t count) const;
  // Gives back what growth left spare (for a record kept only for reads).
  void shrink_to_fit();

 private:
  void drop_dead_prefix();

  std::string text_;                   // lines back to back, the oldest at head_
  std::size_t head_ = 0;               // bytes of dropped lines still in text_
  std::deque<std::uint32_t> lengths_;  // each line's length, oldest first
};

}  // namespace agentty::session
