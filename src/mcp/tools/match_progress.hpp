// Where a wait(until="match") goes on from: the log positions its next
// search starts at, after a match (each match is reported once) or after a
// search that found none (each byte is searched about once, yet a match
// whose start has come stays findable when its end comes). Pure functions
// of the raw bytes searched, their text view, and the pattern.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mcp/tools/pattern.hpp"

namespace agentty::mcp::tools {

// The log position just past the line on which `found` ends in `text`, the
// text view of `raw` (which starts at seq `begin`).
std::uint64_t seq_after_match_line(std::string_view raw, std::uint64_t begin,
                                   const std::string& text, const PatternMatch& found);

// Where the next search may begin when `text` (of `raw`, from seq `begin`)
// held no match of `pattern`.
std::uint64_t settled_seq(std::string_view raw, std::uint64_t begin, const std::string& text,
                          const Pattern& pattern);

}  // namespace agentty::mcp::tools
