#include "mcp/tools/match_progress.hpp"

#include <algorithm>

#include "session/text_view.hpp"

namespace agentty::mcp::tools {
namespace {

// Where PCRE2 cannot say where a match could still start (settled_seq):
// complete lines are searched again within this much before the last line end.
constexpr std::size_t kMatchOverlap = 64 << 10;

// settled_seq where PCRE2 gave up: lines that ended over kMatchOverlap
// before the last line end are settled.
std::uint64_t overlap_settled_seq(std::string_view raw, std::uint64_t begin) {
  const auto last_end = raw.rfind('\n');
  if (last_end == std::string_view::npos || last_end <= kMatchOverlap) return begin;  // all again
  // The last line end before the overlap: the lines up to it are settled.
  // (Settling from the first line end within the overlap lost a pattern
  // spanning lines whose first line came in an earlier read.)
  const auto settled_end = raw.rfind('\n', last_end - kMatchOverlap - 1);
  return settled_end == std::string_view::npos ? begin : begin + settled_end + 1;
}

}  // namespace

// The log position just past the line on which `found` ends in the text of
// `raw` (which starts at seq `begin`): where the next search starts, so a
// match is reported once even when the page returned with it stops short.
std::uint64_t seq_after_match_line(std::string_view raw, std::uint64_t begin,
                                   const std::string& text, const PatternMatch& found) {
  const auto ends_before = static_cast<std::size_t>(
      std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(found.end), '\n'));
  const bool ends_line = found.end > 0 && text[found.end - 1] == '\n';
  return begin + session::raw_length_through_line(raw, ends_before + (ends_line ? 0 : 1));
}

// Where the next wake's search of a match may begin, given the raw bytes
// just searched (from seq `begin`) and their text, with no match in it: the
// line where a match could still start once more output comes
// (Pattern::pending_start), else the unfinished last line, and never more
// than kMatchOverlap before it (a (?s)a.*b could keep all). So each byte is
// searched about once. The whole newest window at every wake (each read)
// made a flood run 14x slower; the last 64 KiB again at every wake cost 5
// waits on a 15 MB flood ~10x the CPU of reading it when reads are small.
std::uint64_t settled_seq(std::string_view raw, std::uint64_t begin, const std::string& text,
                          const Pattern& pattern) {
  const auto overlap = overlap_settled_seq(raw, begin);
  const auto pending = pattern.pending_start(text);
  if (!pending) return overlap;
  const auto text_last_end = text.rfind('\n');
  if (text_last_end == std::string::npos) return begin;  // one unfinished line: all again
  if (*pending > text_last_end) {
    // Only the unfinished line again. A line end in the text that is no LF
    // in the raw bytes (a cursor move) is not settled: searched again.
    const auto raw_last_end = raw.rfind('\n');
    return raw_last_end == std::string_view::npos ? begin : begin + raw_last_end + 1;
  }
  const auto lines =
      std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*pending), '\n');
  return std::max(overlap,
                  begin + session::raw_length_through_line(raw, static_cast<std::size_t>(lines)));
}

}  // namespace agentty::mcp::tools
