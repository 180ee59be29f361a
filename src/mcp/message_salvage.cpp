#include "mcp/message_salvage.hpp"

#include <regex>

#include "base/utf8.hpp"

namespace agentty::mcp {

namespace {

using json = nlohmann::json;

constexpr std::string_view kReplacementEscape = "\\ufffd";
// Where an id is looked for; clients put it first or last.
constexpr std::size_t kIdWindowBytes = 512;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The UTF-16 code unit of the \uXXXX escape at `at`, if there is one.
std::optional<unsigned> escaped_unit(std::string_view text, std::size_t at) {
  if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return std::nullopt;
  unsigned unit = 0;
  for (std::size_t i = at + 2; i < at + 6; ++i) {
    int digit = hex_digit(text[i]);
    if (digit < 0) return std::nullopt;
    unit = unit * 16 + static_cast<unsigned>(digit);
  }
  return unit;
}

bool is_high_surrogate(unsigned unit) {
  return unit >= 0xD800 && unit <= 0xDBFF;
}

bool is_low_surrogate(unsigned unit) {
  return unit >= 0xDC00 && unit <= 0xDFFF;
}

bool holds_replacement(const std::string& text) {
  return text.find(kReplacementCharacter) != std::string::npos;
}

std::string replaced_text_path(const json& value, const std::string& path) {
  if (value.is_string()) return holds_replacement(value.get_ref<const std::string&>()) ? path : "";
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      std::string full = path.empty() ? key : path + "." + key;
      if (holds_replacement(key)) return full;
      if (auto found = replaced_text_path(item, full); !found.empty()) return found;
    }
  }
  if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      auto found = replaced_text_path(value[i], path + "[" + std::to_string(i) + "]");
      if (!found.empty()) return found;
    }
  }
  return "";
}

// An id as JSON-RPC allows it here: an integer or a string without escapes.
constexpr const char* kIdValue = R"((-?[0-9]{1,18}|"[^"\\]{0,256}"))";

json id_from(const std::smatch& match) {
  return json::parse(match[1].str(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace

std::optional<std::string> replace_invalid_text(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  bool replaced = false;
  bool in_string = false;
  std::size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    std::size_t take = 1;
    if (in_string && c == '\\') {
      auto unit = escaped_unit(line, i);
      if (!unit) {
        take = std::min<std::size_t>(2, line.size() - i);  // \" \\ \n ...: kept
      } else if (auto next = escaped_unit(line, i + 6);
                 is_high_surrogate(*unit) && next && is_low_surrogate(*next)) {
        take = 12;  // a pair: one character
      } else if (is_high_surrogate(*unit) || is_low_surrogate(*unit)) {
        out += kReplacementEscape;
        replaced = true;
        i += 6;
        continue;
      } else {
        take = 6;
      }
    } else if (c == '"') {
      in_string = !in_string;
    } else if ((take = valid_utf8_length(reinterpret_cast<const unsigned char*>(line.data()) + i,
                                         line.size() - i)) == 0) {
      out += kReplacementCharacter;
      replaced = true;
      ++i;
      continue;
    }
    out.append(line.substr(i, take));
    i += take;
  }
  if (!replaced) return std::nullopt;
  return out;
}

std::string path_of_replaced_text(const json& value) {
  return replaced_text_path(value, "");
}

json find_request_id(std::string_view head, std::string_view tail) {
  head = head.substr(0, kIdWindowBytes);
  if (tail.size() > kIdWindowBytes) tail.remove_prefix(tail.size() - kIdWindowBytes);
  static const std::regex first(
      std::string(R"(^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*)") + kIdValue +
      R"(\s*[,}])");
  static const std::regex last(std::string(R"([,{]\s*"id"\s*:\s*)") + kIdValue + R"(\s*\}\s*$)");
  std::smatch match;
  std::string head_text(head), tail_text(tail);
  if (std::regex_search(head_text, match, first)) return id_from(match);
  if (std::regex_search(tail_text, match, last)) return id_from(match);
  return nullptr;
}

std::string invalid_text_problem(std::string at) {
  if (at.rfind("arguments.", 0) == 0) at.erase(0, 10);
  return at +
         ": holds text that is not valid Unicode (an unpaired UTF-16 surrogate escape such as "
         "\\ud800, or bytes that are not UTF-8), which no program, path or terminal can take; "
         "nothing was done. Send it as valid UTF-8 (a string cut inside an emoji keeps half of "
         "it).";
}

}  // namespace agentty::mcp
