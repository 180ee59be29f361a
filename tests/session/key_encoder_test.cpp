#include "session/key_encoder.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace agentty::session {
namespace {

const std::vector<std::pair<std::string, std::string>> kNormal = {
    {"ctrl-c", "\x03"},
    {"ctrl-d", "\x04"},
    {"ctrl-z", "\x1a"},
    {"ctrl-backslash", "\x1c"},
    {"ctrl-l", "\x0c"},
    {"ctrl-u", "\x15"},
    {"ctrl-w", "\x17"},
    {"ctrl-r", "\x12"},
    {"tab", "\t"},
    {"esc", "\x1b"},
    {"enter", "\r"},
    {"backspace", "\x7f"},
    {"up", "\x1b[A"},
    {"down", "\x1b[B"},
    {"right", "\x1b[C"},
    {"left", "\x1b[D"},
    {"home", "\x1b[H"},
    {"end", "\x1b[F"},
    {"pageup", "\x1b[5~"},
    {"pagedown", "\x1b[6~"},
    {"delete", "\x1b[3~"},
    {"f1", "\x1bOP"},
    {"f2", "\x1bOQ"},
    {"f3", "\x1bOR"},
    {"f4", "\x1bOS"},
    {"f5", "\x1b[15~"},
    {"f6", "\x1b[17~"},
    {"f7", "\x1b[18~"},
    {"f8", "\x1b[19~"},
    {"f9", "\x1b[20~"},
    {"f10", "\x1b[21~"},
    {"f11", "\x1b[23~"},
    {"f12", "\x1b[24~"},
    // Added after the contract's list.
    {"ctrl-a", "\x01"},
    {"ctrl-b", "\x02"},
    {"ctrl-e", "\x05"},
    {"ctrl-f", "\x06"},
    {"ctrl-g", "\x07"},
    {"ctrl-h", "\x08"},
    {"ctrl-i", "\x09"},
    {"ctrl-j", "\x0a"},
    {"ctrl-k", "\x0b"},
    {"ctrl-m", "\x0d"},
    {"ctrl-n", "\x0e"},
    {"ctrl-o", "\x0f"},
    {"ctrl-p", "\x10"},
    {"ctrl-q", "\x11"},
    {"ctrl-s", "\x13"},
    {"ctrl-t", "\x14"},
    {"ctrl-v", "\x16"},
    {"ctrl-x", "\x18"},
    {"ctrl-y", "\x19"},
    {"shift-tab", "\x1b[Z"},
    {"insert", "\x1b[2~"},
};

TEST(KeyEncoder, EveryContractKeyHasItsXtermBytes) {
  for (const auto& [name, bytes] : kNormal) {
    auto encoded = encode_key(name, ScreenModes{});
    ASSERT_TRUE(encoded.has_value()) << name;
    EXPECT_EQ(*encoded, bytes) << name;
  }
}

TEST(KeyEncoder, ApplicationCursorModeUsesSs3ForArrowsHomeEnd) {
  ScreenModes app;
  app.application_cursor_keys = true;
  EXPECT_EQ(encode_key("up", app), "\x1bOA");
  EXPECT_EQ(encode_key("down", app), "\x1bOB");
  EXPECT_EQ(encode_key("right", app), "\x1bOC");
  EXPECT_EQ(encode_key("left", app), "\x1bOD");
  EXPECT_EQ(encode_key("home", app), "\x1bOH");
  EXPECT_EQ(encode_key("end", app), "\x1bOF");
  // Other keys do not change.
  EXPECT_EQ(encode_key("pageup", app), "\x1b[5~");
  EXPECT_EQ(encode_key("f5", app), "\x1b[15~");
  EXPECT_EQ(encode_key("ctrl-c", app), "\x03");
}

TEST(KeyEncoder, UnknownNamesAreRefused) {
  EXPECT_FALSE(encode_key("ctrl-1", ScreenModes{}).has_value());
  EXPECT_FALSE(encode_key("alt-x", ScreenModes{}).has_value());
  EXPECT_FALSE(encode_key("UP", ScreenModes{}).has_value());
  EXPECT_FALSE(encode_key("", ScreenModes{}).has_value());
}

TEST(KeyEncoder, KeyNamesListIsTheContractEnum) {
  std::set<std::string> names;
  for (auto name : key_names()) names.insert(std::string(name));
  std::set<std::string> want;
  for (const auto& entry : kNormal) want.insert(entry.first);
  EXPECT_EQ(names, want);
  EXPECT_EQ(key_names().size(), kNormal.size());
}

}  // namespace
}  // namespace agentty::session
