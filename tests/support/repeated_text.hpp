// repeated: `piece` over and over until at least `bytes` long (floods for
// the screen feeder's tests).
#pragma once

#include <cstddef>
#include <string>

namespace agentty::test_util {

inline std::string repeated(const std::string& piece, std::size_t bytes) {
  std::string text;
  text.reserve(bytes + piece.size());
  while (text.size() < bytes) text += piece;
  return text;
}

}  // namespace agentty::test_util
