#include "session/pasted_echo.hpp"

namespace agentty::session {

std::string without_redrawn_paste(std::string text, std::string_view pasted) {
  while (pasted.ends_with('\n') || pasted.ends_with('\r')) pasted.remove_suffix(1);
  if (pasted.find('\n') == std::string_view::npos ||
      pasted.find_first_of("\t\r") != std::string_view::npos)
    return text;
  for (auto first = text.find(pasted); first != std::string::npos;
       first = text.find(pasted, first + 1)) {
    const auto after = first + pasted.size();
    if (after >= text.size() || text[after] != '\n') continue;
    auto redraw = after + 1;
    while (redraw < text.size() && text[redraw] == ' ') ++redraw;
    const auto end = redraw + pasted.size();
    if (text.compare(redraw, pasted.size(), pasted) != 0) continue;
    if (end < text.size() && text[end] != '\n') continue;  // a longer line that starts alike
    text.erase(after, end - after);
    return text;
  }
  return text;
}

}  // namespace agentty::session
