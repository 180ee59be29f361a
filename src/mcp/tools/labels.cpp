#include "mcp/tools/labels.hpp"

#include <cstdio>
#include <optional>

#include "base/ascii_space.hpp"

namespace agentty::mcp::tools {

namespace {

// The code point of the control character at `i`, if one starts there: C0,
// DEL, or C1 (U+0080-U+009F, two bytes in UTF-8; some terminals read U+009B
// as CSI).
std::optional<unsigned> control_at(std::string_view text, std::size_t i) {
  const auto byte = static_cast<unsigned char>(text[i]);
  if (byte < 0x20 || byte == 0x7f) return byte;
  if (byte == 0xc2 && i + 1 < text.size()) {
    const auto next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9f) return next;
  }
  return std::nullopt;
}

std::string code_point_name(unsigned code) {
  char name[8];
  std::snprintf(name, sizeof name, "U+%04X", code);
  return name;
}

}  // namespace

Expected<std::string> label_argument(const json& args, std::string_view key, LabelLines lines) {
  const auto it = args.find(key);
  if (it == args.end() || !it->is_string()) return std::string();
  std::string label(trim_ascii_space(it->get_ref<const std::string&>()));
  for (std::size_t i = 0; i < label.size(); ++i) {
    const auto control = control_at(label, i);
    if (!control) continue;
    if (lines == LabelLines::many && (*control == '\n' || *control == '\t')) continue;
    const std::string what = lines == LabelLines::one
                                 ? "a one-line label; give printable text, e.g. " +
                                       std::string(key) + "=\"build and test\""
                                 : "shown as text; give printable text (newlines and tabs "
                                   "are kept)";
    return make_error(std::string(key) + ": contains the control character " +
                      code_point_name(*control) + " at byte " + std::to_string(i) +
                      ", which would draw on the screen of whoever reads it in ps or the "
                      "dashboard. Nothing was started. " +
                      std::string(key) + " is " + what + ".");
  }
  return label;
}

}  // namespace agentty::mcp::tools
