// Owning handles for PCRE2's objects, for every user of PCRE2 (explore's
// grep, wait's patterns, command rules, the redactor): each is freed by its
// own pcre2_*_free, on every path.
#pragma once

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include <memory>

namespace agentty {

struct Pcre2Free {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
  void operator()(pcre2_match_context* context) const { pcre2_match_context_free(context); }
};

using Pcre2Code = std::unique_ptr<pcre2_code, Pcre2Free>;
using Pcre2MatchData = std::unique_ptr<pcre2_match_data, Pcre2Free>;
using Pcre2MatchContext = std::unique_ptr<pcre2_match_context, Pcre2Free>;

}  // namespace agentty
