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

// The code point of an invisible character at `i` that can make a label
// read as something else where it is shown (Trojan Source): bidi controls
// (U+061C, U+200E/F, U+202A-E, U+2066-9), and in a one-line label the line
// and paragraph separators (U+2028/9), the zero-width space (U+200B) and
// BOM (U+FEFF). The zero-width joiner is kept: emoji sequences need it.
std::optional<unsigned> disguise_at(std::string_view text, std::size_t i, LabelLines lines) {
  auto byte = [&](std::size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  if (byte(0) == 0xd8 && byte(1) == 0x9c) return 0x061c;
  unsigned code = 0;
  if (byte(0) == 0xe2 && (byte(1) == 0x80 || byte(1) == 0x81) && (byte(2) & 0xc0) == 0x80)
    code = 0x2000 + ((byte(1) & 0x3f) << 6) + (byte(2) & 0x3f);
  else if (byte(0) == 0xef && byte(1) == 0xbb && byte(2) == 0xbf)
    code = 0xfeff;
  const bool bidi = code == 0x200e || code == 0x200f || (code >= 0x202a && code <= 0x202e) ||
                    (code >= 0x2066 && code <= 0x2069);
  const bool hidden = code == 0x2028 || code == 0x2029 || code == 0x200b || code == 0xfeff;
  if (bidi || (hidden && lines == LabelLines::one)) return code;
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
  for (std::size_t i = 0; i < label.size(); ++i) {
    if (const auto code = disguise_at(label, i, lines)) {
      return make_error(std::string(key) + ": contains the invisible character " +
                        code_point_name(*code) + " at byte " + std::to_string(i) +
                        " (a bidi control, line separator or zero-width character), which can "
                        "make it read as other text in ps or the dashboard. Nothing was "
                        "started. Give plain printable text.");
    }
  }
  return label;
}

}  // namespace agentty::mcp::tools
