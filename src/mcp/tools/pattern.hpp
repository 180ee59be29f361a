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

 private:
  struct Code;
  std::shared_ptr<Code> code_;
};

}  // namespace agentty::mcp::tools
