#include "session/line_escape.hpp"

#include <algorithm>

namespace agentty::session {
namespace {

// Numeric parameter `index` of a CSI's parameter string, or `fallback` when
// it is absent or 0 (every count here treats 0 as 1).
std::size_t csi_param(std::string_view params, std::size_t index, std::size_t fallback) {
  std::size_t value = 0;
  for (std::size_t i = 0, field = 0; i < params.size(); ++i) {
    const char c = params[i];
    if (c == ';') {
      if (field++ == index) break;
      continue;
    }
    if (field == index && c >= '0' && c <= '9')
      value = std::min<std::size_t>(value * 10 + (c - '0'), 1u << 20);
  }
  return value == 0 ? fallback : value;
}

LineEscape csi_action(std::string_view unit) {
  const char final_byte = unit.back();
  if (final_byte == 'm') return {};  // SGR, the most common by far
  const std::string_view params = unit.substr(2, unit.size() - 3);
  if ((final_byte == 'h' || final_byte == 'l') &&
      (params == "?1049" || params == "?1047" || params == "?47")) {
    return {.op = LineOp::kScreenSwitch,
            .n = final_byte == 'h' ? 1u : 0u,
            .cursor_saved = params == "?1049"};
  }
  // Other private (CSI ? ...) and intermediate forms are other functions.
  if (!params.empty() && (params[0] < '0' || params[0] > ';')) return {};
  if (params.find_first_not_of("0123456789;") != std::string_view::npos) return {};
  const std::size_t n = csi_param(params, 0, 1);
  switch (final_byte) {
    case 'D':
      return {LineOp::kLeft, n};
    case 'C':
    case 'a':
      return {LineOp::kRight, n};
    case 'G':
    case '`':
      return {LineOp::kColumn, n - 1};
    case 'Z':
      return {LineOp::kBackTab, n};
    case 'I':
      return {LineOp::kTab, n};
    case '@':
      return {LineOp::kInsert, n};
    case 'P':
      return {LineOp::kDelete, n};
    case 'X':
      return {LineOp::kEraseCells, n};
    case 'b':
      return {LineOp::kRepeat, n};
    case 'A':
      return {LineOp::kRowKeepColumn, n, n};
    case 'B':
    case 'e':
      return {LineOp::kRowKeepColumn, n, 0, n};
    case 'd':
      return {.op = LineOp::kRowKeepColumn, .n = n, .row = n};
    case 'E':
      return {LineOp::kRowToColumn, 0, 0, n};
    case 'F':
      return {LineOp::kRowToColumn, 0, n};
    case 'H':
    case 'f':
      return {.op = LineOp::kRowToColumn, .n = csi_param(params, 1, 1) - 1, .row = n};
    case 'L':
    case 'M':
    case 'S':
    case 'T':
      return {LineOp::kShiftRows, n};
    case 'r':
      return {.op = LineOp::kScrollRegion, .n = n, .row = csi_param(params, 1, 0)};
    case 's':
    case 'u':
      if (!params.empty()) return {};
      return {final_byte == 's' ? LineOp::kSave : LineOp::kRestore, 0};
    case 'K':
    case 'J': {
      const bool below = final_byte == 'J';
      if (params.empty() || params == "0") return {LineOp::kEraseToEnd, 0, 0, 0, below};
      if (params == "1") return {LineOp::kEraseToStart, 0};
      if (params == "2") return {LineOp::kEraseLine, 0, 0, 0, below};
      return {};
    }
    default:
      return {};
  }
}

}  // namespace

LineEscape line_escape(std::string_view unit) {
  if (unit.size() >= 3 && unit[1] == '[') return csi_action(unit);
  if (unit.size() != 2) return {};
  switch (unit[1]) {
    case '7':
      return {LineOp::kSave, 0};
    case '8':
      return {LineOp::kRestore, 0};
    case 'M':
      return {.op = LineOp::kRowKeepColumn, .n = 1, .up = 1, .scrolls_at_top = true};
    case 'D':
    case 'E':
      return {LineOp::kNewLine, 0};
    case 'c':
      return {LineOp::kReset, 0};
    default:
      return {};
  }
}

}  // namespace agentty::session
