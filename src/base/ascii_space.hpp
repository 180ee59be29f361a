// ASCII white space (space, tab, CR, LF) around text a person or an agent
// typed: a setting's value, a label. Other bytes are kept, whatever the
// process's locale.
#pragma once

#include <string_view>

namespace agentty {

inline std::string_view trim_ascii_space(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

}  // namespace agentty
