// scan_utf8 / valid_utf8_length / decode_utf8 / append_utf8: one reading of
// UTF-8 (Unicode's table 3-7) for every layer.
#include "base/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace agentty {
namespace {

Utf8Scan scan(std::string_view bytes) {
  return scan_utf8(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

TEST(Utf8, WellFormedSequencesOfEachLength) {
  for (std::string_view s : {"a", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80"}) {
    auto r = scan(s);
    EXPECT_TRUE(r.valid) << s;
    EXPECT_EQ(r.length, s.size()) << s;
    EXPECT_FALSE(r.truncated);
  }
  EXPECT_EQ(scan("\xc3\xa9rest").length, 2u);  // only the first character
}

TEST(Utf8, IllFormedSequencesAreTheirMaximalValidPrefix) {
  EXPECT_EQ(scan("\x80").length, 1u);              // a continuation byte alone
  EXPECT_EQ(scan("\xc0\xaf").length, 1u);          // overlong lead
  EXPECT_EQ(scan("\xe0\x80\xaf").length, 1u);      // overlong: second byte out of range
  EXPECT_EQ(scan("\xed\xa0\x80").length, 1u);      // a surrogate
  EXPECT_EQ(scan("\xf4\x90\x80\x80").length, 1u);  // past U+10FFFF
  EXPECT_EQ(scan("\xf5\x80").length, 1u);          // never a lead
  auto broken = scan("\xe4\xb8x");                 // lead, one good byte, then ASCII
  EXPECT_FALSE(broken.valid);
  EXPECT_EQ(broken.length, 2u);
  EXPECT_FALSE(broken.truncated);
}

TEST(Utf8, ASequenceCutByTheEndOfTheBytesIsTruncated) {
  auto cut = scan("\xf0\x9f\x98");
  EXPECT_FALSE(cut.valid);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.length, 3u);
  const unsigned char lead = 0xe4;
  EXPECT_EQ(valid_utf8_length(&lead, 1), 0u);
}

TEST(Utf8, DecodeAndAppendRoundTrip) {
  for (char32_t cp : {U'a', U'\u00e9', U'\u4e2d', U'\U0001F600', U'\U0010FFFF'}) {
    std::string bytes;
    append_utf8(bytes, cp);
    std::size_t i = 0;
    EXPECT_EQ(decode_utf8(bytes, i), cp);
    EXPECT_EQ(i, bytes.size());
    EXPECT_TRUE(scan(bytes).valid);
  }
  std::string none;
  append_utf8(none, 0x110000);  // not a codepoint: nothing
  EXPECT_TRUE(none.empty());
}

TEST(Utf8, CharStartBacksOffToTheLeadNotPastIt) {
  const std::string text =
      "a\xe4\xb8\xad"
      "b";  // a, U+4E2D, b
  EXPECT_EQ(utf8_char_start(text, 3), 1u);
  EXPECT_EQ(utf8_char_start(text, 2), 1u);
  EXPECT_EQ(utf8_char_start(text, 1), 1u);
  EXPECT_EQ(utf8_char_start(text, 4), 4u);
  EXPECT_EQ(utf8_char_start(text, 9), 9u);  // past the end: unchanged
  EXPECT_EQ(utf8_next_char_start(text, 2), 4u);
  EXPECT_EQ(utf8_next_char_start("\x80\x80", 0), 2u);
}

TEST(Utf8, CompletePrefixHoldsBackOnlyWhatMoreBytesCouldComplete) {
  EXPECT_EQ(complete_utf8_prefix("ab"), 2u);
  EXPECT_EQ(complete_utf8_prefix("ab\xe4\xb8"), 2u);          // U+4E2D cut short
  EXPECT_EQ(complete_utf8_prefix("ab\xf0\x9f\x98"), 2u);      // U+1F600 cut short
  EXPECT_EQ(complete_utf8_prefix("ab\xf0\x9f\x98\x80"), 6u);  // whole
  EXPECT_EQ(complete_utf8_prefix("ab\xe0\x80"), 4u);          // an overlong: no byte can mend it
  EXPECT_EQ(complete_utf8_prefix("\x80\x80\x80\x80"), 4u);
  EXPECT_EQ(complete_utf8_prefix(""), 0u);
}

}  // namespace
}  // namespace agentty
