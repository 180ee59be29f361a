#include "pty/command_end_marker.hpp"

#include <algorithm>
#include <utility>

namespace agentty::pty {

namespace {

// How many bytes at the end of `bytes` are a start of the marker (and not
// the whole of it): those must wait for the next chunk.
std::size_t partial_marker_at_end(std::string_view bytes) {
  const std::size_t longest = std::min(bytes.size(), kCommandEndMarker.size() - 1);
  for (std::size_t n = longest; n > 0; --n) {
    if (kCommandEndMarker.starts_with(bytes.substr(bytes.size() - n))) return n;
  }
  return 0;
}

}  // namespace

std::string_view CommandEndFilter::filter(std::string_view chunk, std::string& scratch) {
  if (seen_) return chunk;
  std::string_view bytes = chunk;
  if (!held_.empty()) {
    scratch = std::move(held_);
    held_.clear();
    scratch.append(chunk);
    bytes = scratch;
  }
  if (const auto at = bytes.find(kCommandEndMarker); at != std::string_view::npos) {
    seen_ = true;
    std::string out;
    out.reserve(bytes.size() - kCommandEndMarker.size());
    out.append(bytes.substr(0, at)).append(bytes.substr(at + kCommandEndMarker.size()));
    scratch = std::move(out);
    return scratch;
  }
  // The marker starts with ESC: a chunk without one at its end holds nothing.
  const std::size_t held = partial_marker_at_end(bytes);
  if (held == 0) return bytes;
  held_.assign(bytes.substr(bytes.size() - held));
  return bytes.substr(0, bytes.size() - held);
}

std::string CommandEndFilter::flush() {
  return std::exchange(held_, {});
}

}  // namespace agentty::pty
