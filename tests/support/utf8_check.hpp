// valid_utf8: whether bytes are well-formed UTF-8 (no overlong lead bytes,
// nothing above U+10FFFF's lead byte). Written out here rather than taken
// from base/utf8 so the tests of the text view do not check it with its own
// decoder.
#pragma once

#include <cstddef>
#include <string_view>

namespace agentty::test_util {

inline bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80                   ? 1
                          : (c >= 0xc2 && c <= 0xdf) ? 2
                          : (c >= 0xe0 && c <= 0xef) ? 3
                          : (c >= 0xf0 && c <= 0xf4) ? 4
                                                     : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

}  // namespace agentty::test_util
