#include "base/byte_scan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

namespace agentty {
namespace {

template <typename Predicate>
std::size_t first_scalar(const std::string& text, std::size_t from, Predicate predicate) {
  for (std::size_t i = from; i < text.size(); ++i)
    if (predicate(static_cast<unsigned char>(text[i]))) return i - from;
  return text.size() - from;
}

// Buffers of mostly printable text with rare bytes of every value, scanned
// from every offset of a 16-byte block (so both the vector steps and the
// scalar tail meet a match at each lane), agree with a byte-at-a-time loop.
TEST(ByteScan, AgreesWithAByteLoopAtEveryAlignment) {
  std::mt19937 random(3);
  for (int round = 0; round < 3000; ++round) {
    std::string text(random() % 80, ' ');
    for (char& c : text) {
      const unsigned roll = random() % 16;
      c = static_cast<char>(roll == 0   ? random() % 256
                            : roll == 1 ? '\r'
                            : roll == 2 ? '\n'
                                        : 0x20 + random() % 0x5f);
    }
    const std::size_t from = std::min<std::size_t>(random() % 17, text.size());
    const char* data = text.data() + from;
    const std::size_t size = text.size() - from;
    ASSERT_EQ(find_not_plain_text(data, size),
              first_scalar(
                  text, from,
                  [](unsigned char c) { return (c < 0x20 || c > 0x7e) && c != '\r' && c != '\n'; }))
        << text;
    ASSERT_EQ(find_control(data, size),
              first_scalar(text, from, [](unsigned char c) { return c < 0x20; }))
        << text;
    ASSERT_EQ(
        find_json_special(data, size),
        first_scalar(text, from,
                     [](unsigned char c) { return c < 0x20 || c > 0x7f || c == '"' || c == '\\'; }))
        << text;
  }
}

TEST(ByteScan, EveryByteValueIsClassifiedAsDocumented) {
  for (int value = 0; value < 256; ++value) {
    // The byte at lane 5 of a 32-byte plain buffer, and alone (scalar tail).
    std::string text(32, 'a');
    text[5] = static_cast<char>(value);
    const auto c = static_cast<unsigned char>(value);
    const bool plain = (c >= 0x20 && c <= 0x7e) || c == '\r' || c == '\n';
    const bool json_special = c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
    EXPECT_EQ(find_not_plain_text(text.data(), text.size()), plain ? 32u : 5u) << value;
    EXPECT_EQ(find_control(text.data(), text.size()), c < 0x20 ? 5u : 32u) << value;
    EXPECT_EQ(find_json_special(text.data(), text.size()), json_special ? 5u : 32u) << value;
    EXPECT_EQ(find_json_special(text.data() + 5, 1), json_special ? 0u : 1u) << value;
  }
}

}  // namespace
}  // namespace agentty
