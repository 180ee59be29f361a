// Pattern: a compiled PCRE2 regular expression (UTF, multi-line, JIT when
// available) for wait(until=match).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"

namespace agentty::mcp::tools {

struct PatternMatch {
  std::string text;                 // the whole match
  std::vector<std::string> groups;  // capture groups, in order
  std::string line;                 // the line the match starts on
  std::size_t end = 0;              // offset just past the match in the searched text
};

class Pattern {
 public:
  static Expected<Pattern> compile(const std::string& pattern);
  // No match: nullopt. An error when PCRE2 gave up (its match limit: a
  // pattern that backtracks without end, such as ^(a+)+$ on a line of a's
  // ending in something else), which is no answer either way.
  Expected<std::optional<PatternMatch>> search(const std::string& text) const;
  // For `text` in which search found no match: where a match could still
  // begin once more text follows it, i.e. the start of the first partial
  // match (PCRE2's hard partial matching: matching reached the end of the
  // text, `$` and `\b` there included), or text.size() when no start can
  // become a match. nullopt when PCRE2 gave up (its match limit).
  std::optional<std::size_t> pending_start(const std::string& text) const;

 private:
  struct Code;
  std::shared_ptr<Code> code_;
};

}  // namespace agentty::mcp::tools
