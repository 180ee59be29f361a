#include "session/line_ring.hpp"

#include <algorithm>

namespace agentty::session {

namespace {
// Dropped text is erased once it is at least this much and half the buffer,
// so each byte is moved a bounded number of times.
constexpr std::size_t kMinDeadBytes = 64 * 1024;
}  // namespace

void LineRing::push_back(std::string_view line) {
  text_.append(line);
  lengths_.push_back(static_cast<std::uint32_t>(line.size()));
}

void LineRing::pop_front() {
  if (lengths_.empty()) return;
  head_ += lengths_.front();
  lengths_.pop_front();
  if (lengths_.empty()) {
    text_.clear();
    head_ = 0;
  } else if (head_ >= kMinDeadBytes && head_ >= text_.size() / 2) {
    drop_dead_prefix();
  }
}

std::string_view LineRing::front() const {
  if (lengths_.empty()) return {};
  return std::string_view(text_).substr(head_, lengths_.front());
}

std::vector<std::string> LineRing::newest(std::size_t count) const {
  const std::size_t take = std::min(count, lengths_.size());
  std::vector<std::string> lines(take);
  // Walk back from the end: the newest lines are the buffer's last bytes.
  std::size_t end = text_.size();
  for (std::size_t i = 0; i < take; ++i) {
    const std::size_t length = lengths_[lengths_.size() - 1 - i];
    end -= length;
    lines[take - 1 - i].assign(text_, end, length);
  }
  return lines;
}

void LineRing::shrink_to_fit() {
  drop_dead_prefix();
  text_.shrink_to_fit();
  lengths_.shrink_to_fit();
}

void LineRing::drop_dead_prefix() {
  text_.erase(0, head_);
  head_ = 0;
}

}  // namespace agentty::session
