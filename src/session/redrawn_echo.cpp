#include "session/redrawn_echo.hpp"

#include "session/line_escape.hpp"
#include "session/text_units.hpp"

namespace agentty::session {

namespace {

// The longest prompt a redraw may start with on its line.
constexpr std::size_t kMaxPromptBytes = 256;

}  // namespace

bool moves_up(std::string_view raw) {
  const unsigned char* p = text_units::bytes_of(raw);
  for (std::size_t i = raw.find('\x1b'); i != std::string_view::npos && i < raw.size();
       i = raw.find('\x1b', i)) {
    const auto unit = text_units::scan_unit(p + i, raw.size() - i);
    if (unit.kind == text_units::UnitKind::kEscape &&
        line_escape(raw.substr(i, unit.length)).up > 0)
      return true;
    i += unit.length;
  }
  return false;
}

std::string without_redrawn_echo(std::string text, std::string_view typed) {
  while (typed.ends_with('\n') || typed.ends_with('\r')) typed.remove_suffix(1);
  if (typed.empty() || typed.find_first_of("\t\r") != std::string_view::npos) return text;
  for (auto first = text.find(typed); first != std::string::npos;
       first = text.find(typed, first + 1)) {
    const auto after = first + typed.size();
    if (after >= text.size() || text[after] != '\n') continue;
    const auto line = after + 1;
    const auto redraw = text.find(typed, line);
    if (redraw == std::string::npos || redraw - line > kMaxPromptBytes ||
        text.find('\n', line) < redraw)
      continue;
    const auto end = redraw + typed.size();
    if (end < text.size() && text[end] != '\n') continue;  // a longer line that starts alike
    text.erase(after, end - after);
    return text;
  }
  return text;
}

}  // namespace agentty::session
