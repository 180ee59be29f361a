// ASCII case folding for names compared case-insensitively (HTTP headers,
// ssh_config keywords, key and signal names). Bytes outside A-Z/a-z are kept
// as they are, whatever the process's locale.
#pragma once

#include <string>
#include <string_view>

namespace agentty {

inline std::string ascii_lowercase(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline std::string ascii_uppercase(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

}  // namespace agentty
