#include "session/key_encoder.hpp"

#include <array>

namespace agentty::session {
namespace {

struct KeyEntry {
  std::string_view name;
  std::string_view normal;       // bytes in normal mode
  std::string_view application;  // bytes with DECCKM set (empty: same as normal)
};

constexpr std::array<KeyEntry, 54> kKeys = {{
    {"ctrl-c", "\x03", ""},
    {"ctrl-d", "\x04", ""},
    {"ctrl-z", "\x1a", ""},
    {"ctrl-backslash", "\x1c", ""},
    {"ctrl-l", "\x0c", ""},
    {"ctrl-u", "\x15", ""},
    {"ctrl-w", "\x17", ""},
    {"ctrl-r", "\x12", ""},
    {"tab", "\t", ""},
    {"esc", "\x1b", ""},
    {"enter", "\r", ""},
    {"backspace", "\x7f", ""},
    {"up", "\x1b[A", "\x1bOA"},
    {"down", "\x1b[B", "\x1bOB"},
    {"right", "\x1b[C", "\x1bOC"},
    {"left", "\x1b[D", "\x1bOD"},
    {"home", "\x1b[H", "\x1bOH"},
    {"end", "\x1b[F", "\x1bOF"},
    {"pageup", "\x1b[5~", ""},
    {"pagedown", "\x1b[6~", ""},
    {"delete", "\x1b[3~", ""},
    {"f1", "\x1bOP", ""},
    {"f2", "\x1bOQ", ""},
    {"f3", "\x1bOR", ""},
    {"f4", "\x1bOS", ""},
    {"f5", "\x1b[15~", ""},
    {"f6", "\x1b[17~", ""},
    {"f7", "\x1b[18~", ""},
    {"f8", "\x1b[19~", ""},
    {"f9", "\x1b[20~", ""},
    {"f10", "\x1b[21~", ""},
    {"f11", "\x1b[23~", ""},
    {"f12", "\x1b[24~", ""},
    // Beyond the contract's list (appended, so its order stays): the other
    // ctrl-letters (nano's ctrl-o/ctrl-x, readline's ctrl-a/ctrl-e, vim's
    // ctrl-f), back-tab and insert.
    {"ctrl-a", "\x01", ""},
    {"ctrl-b", "\x02", ""},
    {"ctrl-e", "\x05", ""},
    {"ctrl-f", "\x06", ""},
    {"ctrl-g", "\x07", ""},
    {"ctrl-h", "\x08", ""},
    {"ctrl-i", "\x09", ""},
    {"ctrl-j", "\x0a", ""},
    {"ctrl-k", "\x0b", ""},
    {"ctrl-m", "\x0d", ""},
    {"ctrl-n", "\x0e", ""},
    {"ctrl-o", "\x0f", ""},
    {"ctrl-p", "\x10", ""},
    {"ctrl-q", "\x11", ""},
    {"ctrl-s", "\x13", ""},
    {"ctrl-t", "\x14", ""},
    {"ctrl-v", "\x16", ""},
    {"ctrl-x", "\x18", ""},
    {"ctrl-y", "\x19", ""},
    {"shift-tab", "\x1b[Z", ""},
    {"insert", "\x1b[2~", ""},
}};

constexpr std::size_t kKeyCount = kKeys.size();

constexpr std::array<std::string_view, kKeyCount> make_names() {
  std::array<std::string_view, kKeyCount> names{};
  for (std::size_t i = 0; i < kKeyCount; ++i) names[i] = kKeys[i].name;
  return names;
}
constexpr auto kNames = make_names();

}  // namespace

std::span<const std::string_view> key_names() {
  return kNames;
}

std::optional<std::string> encode_key(std::string_view name, const ScreenModes& modes) {
  for (std::size_t i = 0; i < kKeyCount; ++i) {
    const KeyEntry& key = kKeys[i];
    if (key.name != name) continue;
    if (modes.application_cursor_keys && !key.application.empty()) {
      return std::string(key.application);
    }
    return std::string(key.normal);
  }
  return std::nullopt;
}

}  // namespace agentty::session
