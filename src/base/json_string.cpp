#include "base/json_string.hpp"

#include <array>
#include <cstdint>

#include "base/byte_scan.hpp"

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

// Length of the valid UTF-8 sequence at `p` (at most `n` bytes), 0 if invalid.
std::size_t valid_sequence_length(const unsigned char* p, std::size_t n) {
  unsigned char lead = p[0];
  std::size_t length;
  unsigned char low = 0x80, high = 0xBF;  // bounds of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlongs
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // no overlongs
    if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (n < length || p[1] < low || p[1] > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if ((p[i] & 0xC0) != 0x80) return 0;
  return length;
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
    } else if (std::size_t length = valid_sequence_length(p + i, n - i); length > 0) {
      out.append(text.data() + i, length);
      i += length;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  out += '"';
}

}  // namespace agentty
