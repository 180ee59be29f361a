#include "session/charset_index.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "session/output_log.hpp"
#include "session/text_view.hpp"

namespace agentty::session {
namespace {

// Marks this far apart bound a look behind the frontier (a page read again
// after a wait moved it on) to following 64 KiB: 16 bytes per 64 KiB kept.
constexpr std::uint64_t kMarkSpacing = 64 << 10;
constexpr std::uint64_t kChunkBytes = kMarkSpacing;

}  // namespace

Charsets CharsetIndex::at(const OutputLog& log, std::uint64_t seq) {
  forget_evicted(log.first_retained_seq());
  if (seq >= frontier_.seq) {
    follow(log, frontier_, seq, true);
    return frontier_.charsets;
  }
  auto after = std::upper_bound(marks_.begin(), marks_.end(), seq,
                                [](std::uint64_t s, const Mark& mark) { return s < mark.seq; });
  if (after == marks_.begin()) return {};  // before what was retained when followed
  Mark from = *std::prev(after);
  follow(log, from, seq, false);
  return from.charsets;
}

void CharsetIndex::follow(const OutputLog& log, Mark& from, std::uint64_t to, bool add_marks) {
  std::string bytes;
  std::uint64_t chunk = kChunkBytes;
  while (from.seq < to) {
    const std::uint64_t end = std::min(to, from.seq + chunk);
    log.copy_range(from.seq, end, bytes);
    if (bytes.empty()) return;  // evicted meanwhile, or past the log's end
    // A unit that goes on past `to` is not taken: `to` is inside it.
    const std::size_t taken = advance_charsets(bytes, from.charsets, true);
    from.seq += taken;
    if (taken == 0) {
      if (end == to) return;  // the unit at `from` reaches past `to`
      chunk *= 2;             // a unit longer than the chunk (a long OSC string)
      continue;
    }
    chunk = kChunkBytes;
    if (add_marks && from.seq - marks_.back().seq >= kMarkSpacing) marks_.push_back(from);
  }
}

void CharsetIndex::forget_evicted(std::uint64_t first_retained) {
  if (marks_.front().seq >= first_retained) return;
  if (frontier_.seq < first_retained) frontier_ = Mark{first_retained, {}};
  // A mark before the retained output cannot be followed from any more.
  auto kept = std::lower_bound(marks_.begin(), marks_.end(), first_retained,
                               [](const Mark& mark, std::uint64_t s) { return mark.seq < s; });
  marks_.erase(marks_.begin(), kept);
  if (marks_.empty() || marks_.front().seq > first_retained) {
    marks_.insert(marks_.begin(), Mark{first_retained, {}});  // the state there is lost
  }
}

}  // namespace agentty::session
