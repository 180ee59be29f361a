#include "mcp/tools/pattern.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "base/pcre2_handles.hpp"

namespace agentty::mcp::tools {

struct Pattern::Code {
  Pcre2Code code;
  // For pending_start: the same pattern with PCRE2_ALT_CIRCUMFLEX. A
  // multi-line `^` does not match after the text's final newline, so a
  // pattern whose next line starts with `^` (`^begin\n^end`) was no partial
  // match there, though the next line may well come.
  Pcre2Code partial;
};

Expected<Pattern> Pattern::compile(const std::string& pattern) {
  int error_code = 0;
  PCRE2_SIZE offset = 0;
  // UCP: \w, \d, \s, \b and [[:alpha:]] know non-ASCII letters, as in a
  // Unicode-aware grep. Without it, PCRE2 10.42's JIT with MATCH_INVALID_UTF
  // also fails \S, \D and \W on every non-ASCII character.
  constexpr std::uint32_t kOptions =
      PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | PCRE2_MATCH_INVALID_UTF;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   kOptions, &error_code, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    return make_error("invalid PCRE2 pattern at offset " + std::to_string(offset) + ": " +
                      reinterpret_cast<char*>(message) +
                      "; fix the regular expression, or escape the special characters ( ) [ ] "
                      "{ } . * + ? | ^ $ \\ with a backslash to match them literally.");
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // best effort: falls back to the interpreter
  Pattern result;
  result.code_ = std::make_shared<Code>();
  result.code_->code.reset(code);
  pcre2_code* partial =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    kOptions | PCRE2_ALT_CIRCUMFLEX, &error_code, &offset, nullptr);
  if (partial) pcre2_jit_compile(partial, PCRE2_JIT_PARTIAL_HARD);
  result.code_->partial.reset(partial);  // none: pending_start cannot tell
  return result;
}

Expected<std::optional<PatternMatch>> Pattern::search(const std::string& text) const {
  Pcre2MatchData data(pcre2_match_data_create_from_pattern(code_->code.get(), nullptr));
  int rc = pcre2_match(code_->code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0,
                       0, data.get(), nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return std::optional<PatternMatch>();
  if (rc < 0) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(rc, message, sizeof message);
    return make_error(std::string("matching failed: ") + reinterpret_cast<char*>(message) +
                      "; simplify the regular expression (a nested repeat such as (a+)+ tries "
                      "every way to split a line before it gives up)");
  }
  PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
  PatternMatch match;
  match.text = text.substr(ovector[0], ovector[1] - ovector[0]);
  match.end = std::max(ovector[0], ovector[1]);
  for (int i = 1; i < rc; ++i) {
    if (ovector[2 * i] == PCRE2_UNSET) {
      match.groups.emplace_back();
    } else {
      match.groups.push_back(text.substr(ovector[2 * i], ovector[2 * i + 1] - ovector[2 * i]));
    }
  }
  auto line_start = text.rfind('\n', ovector[0] == 0 ? 0 : ovector[0] - 1);
  line_start = (line_start == std::string::npos || ovector[0] == 0) ? 0 : line_start + 1;
  auto line_end = text.find('\n', ovector[0]);
  match.line = text.substr(
      line_start, line_end == std::string::npos ? std::string::npos : line_end - line_start);
  return std::optional<PatternMatch>(std::move(match));
}

std::optional<std::size_t> Pattern::pending_start(const std::string& text) const {
  if (!code_->partial) return std::nullopt;
  Pcre2MatchData data(pcre2_match_data_create_from_pattern(code_->partial.get(), nullptr));
  int rc = pcre2_match(code_->partial.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(),
                       0, PCRE2_PARTIAL_HARD, data.get(), nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return text.size();
  // A complete match (a caller that did not search first) starts there too.
  if (rc == PCRE2_ERROR_PARTIAL || rc > 0) return pcre2_get_ovector_pointer(data.get())[0];
  return std::nullopt;
}

}  // namespace agentty::mcp::tools
