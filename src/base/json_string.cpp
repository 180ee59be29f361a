#include "base/json_string.hpp"

#include <array>
#include <cstdint>

#include "base/byte_scan.hpp"
#include "base/utf8.hpp"

namespace agentty {

namespace {

// Byte classes: 0 copied as is, 1 needs escaping, 2 starts a multi-byte
// sequence (or is invalid there).
constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> classes{};
  for (int c = 0; c < 0x20; ++c) classes[c] = 1;
  classes['"'] = 1;
  classes['\\'] = 1;
  classes[0x7F] = 0;  // DEL is valid in JSON strings
  for (int c = 0x80; c < 0x100; ++c) classes[c] = 2;
  return classes;
}
constexpr auto kClasses = make_classes();

void append_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default: {
      static constexpr char hex[] = "0123456789abcdef";
      char escaped[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      out.append(escaped, sizeof escaped);
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  out.reserve(out.size() + n + 2);
  out += '"';
  std::size_t i = 0;
  while (i < n) {
    const std::size_t run = i + find_json_special(text.data() + i, n - i);
    out.append(text.data() + i, run - i);
    i = run;
    if (i == n) break;
    if (kClasses[p[i]] == 1) {
      append_escape(out, p[i]);
      ++i;
    } else if (const Utf8Scan scan = scan_utf8(p + i, n - i); scan.valid) {
      out.append(text.data() + i, scan.length);
      i += scan.length;
    } else {
      out += kReplacementCharacter;
      i += scan.length;
    }
  }
  out += '"';
}

}  // namespace agentty
