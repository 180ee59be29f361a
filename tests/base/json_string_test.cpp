#include "base/json_string.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

namespace agentty {
namespace {

std::string ours(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string reference(std::string_view text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(JsonString, EscapesLikeNlohmann) {
  for (std::string_view text :
       {std::string_view(""), std::string_view("plain"), std::string_view("a\"b\\c"),
        std::string_view("\r\n\t\b\f\x01\x1b[31m\x7f"),
        std::string_view("caf\xC3\xA9 \xE2\x82\xAC"), std::string_view("\xF0\x9F\x98\x80"),
        std::string_view("\0x", 2)}) {
    EXPECT_EQ(ours(text), reference(text)) << text;
  }
}

TEST(JsonString, InvalidUtf8BecomesReplacementCharacters) {
  // Lone continuation, overlong, surrogate, past U+10FFFF, truncated sequence.
  for (std::string_view text :
       {std::string_view("\x80"), std::string_view("\xC0\xAF"), std::string_view("\xED\xA0\x80"),
        std::string_view("\xF4\x90\x80\x80"), std::string_view("ab\xE2\x82")}) {
    std::string out = ours(text);
    EXPECT_NE(out.find("\xEF\xBF\xBD"), std::string::npos) << out;
    EXPECT_TRUE(nlohmann::json::accept(out)) << out;
  }
}

// As the screen model and the text view show them: a sequence cut short is
// one character, not one per byte (a replay's line would be a column longer).
TEST(JsonString, OneReplacementCharacterPerMaximalInvalidSubpart) {
  EXPECT_EQ(ours("cut \xE2\x82X"), "\"cut \xEF\xBF\xBDX\"");
  EXPECT_EQ(ours("\xF0\x9F\x98"), "\"\xEF\xBF\xBD\"");
  EXPECT_EQ(ours("\xFF\xFE"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(ours("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // a surrogate
}

TEST(JsonString, RandomBytesAlwaysParseBackToValidJson) {
  std::mt19937 random(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text(random() % 64, '\0');
    for (char& c : text) c = static_cast<char>(random() % 256);
    std::string out = ours(text);
    ASSERT_TRUE(nlohmann::json::accept(out)) << out;
  }
}

// Long runs of plain text with a few special bytes at every alignment: the
// 16-byte scan must stop exactly where a byte needs escaping or validating.
TEST(JsonString, SparseSpecialBytesInLongTextEscapeLikeNlohmann) {
  std::mt19937 random(11);
  const std::string specials[] = {"\r\n", "\"",       "\\",           "\x1b",
                                  "\x7f", "\xC3\xA9", "\xE2\x82\xAC", "\xFF"};
  auto plain = [&] {
    std::string run(random() % 40, 'x');
    for (char& c : run) c = static_cast<char>(0x20 + random() % 0x5f);
    return run;
  };
  for (int round = 0; round < 3000; ++round) {
    std::string text = plain();
    for (int k = 0; k < 2; ++k) text += specials[random() % std::size(specials)] + plain();
    ASSERT_EQ(ours(text), reference(text)) << text;
  }
}

}  // namespace
}  // namespace agentty
