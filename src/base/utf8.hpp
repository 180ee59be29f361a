// UTF-8 by Unicode's table 3-7 (no overlong forms, no surrogates, nothing
// past U+10FFFF): one reading of it for the text view, JSON escaping, the
// salvage of a broken request, the screen and the text view's line cells.
//
// Threading: pure functions (inline: the text view and JSON escaping call
// them per non-ASCII character).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agentty {

// U+FFFD REPLACEMENT CHARACTER, what every reader here shows for bytes that
// are not UTF-8.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// The sequence at the start of `p` (`n` >= 1 bytes).
struct Utf8Scan {
  // A valid sequence's length; else its maximal valid prefix, at least one
  // byte (what one U+FFFD replaces).
  std::size_t length = 1;
  bool valid = false;
  // Not valid only because the bytes ran out inside a sequence that was
  // well-formed so far: more may come.
  bool truncated = false;
};

inline Utf8Scan scan_utf8(const unsigned char* p, std::size_t n) {
  const unsigned char lead = p[0];
  if (lead < 0x80) return {1, true, false};
  std::size_t length = 0;
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
    return {1, false, false};
  }
  for (std::size_t i = 1; i < length; ++i) {
    if (i >= n) return {i, false, true};
    const unsigned char byte = p[i];
    if (byte < (i == 1 ? low : 0x80) || byte > (i == 1 ? high : 0xBF)) return {i, false, false};
  }
  return {length, true, false};
}

inline bool is_utf8_continuation(unsigned char byte) {
  return (byte & 0xC0) == 0x80;
}
inline bool is_utf8_continuation(char byte) {
  return is_utf8_continuation(static_cast<unsigned char>(byte));
}

// `i` moved back to the start of the character it falls in, so a cut at
// the result does not split one.
inline std::size_t utf8_char_start(std::string_view text, std::size_t i) {
  while (i > 0 && i < text.size() && is_utf8_continuation(text[i])) --i;
  return i;
}

// `i` moved forward past continuation bytes, onto the next character.
inline std::size_t utf8_next_char_start(std::string_view text, std::size_t i) {
  while (i < text.size() && is_utf8_continuation(text[i])) ++i;
  return i;
}

// The length of the valid sequence at `p`, 0 if there is none.
inline std::size_t valid_utf8_length(const unsigned char* p, std::size_t n) {
  const Utf8Scan scan = scan_utf8(p, n);
  return scan.valid ? scan.length : 0;
}

// The codepoint of the valid sequence at text[i]; moves i past it.
inline char32_t decode_utf8(std::string_view text, std::size_t& i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  char32_t cp = length == 1   ? lead
                : length == 2 ? (lead & 0x1F)
                : length == 3 ? (lead & 0x0F)
                              : (lead & 0x07);
  for (std::size_t k = 1; k < length && i + k < text.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  i += length;
  return cp;
}

// Appends `cp` encoded; nothing for a value past U+10FFFF.
inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x110000) {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Length of `text` without a sequence cut short at its end, one that more
// bytes could still complete: what a reader of a stream in chunks holds back.
inline std::size_t complete_utf8_prefix(std::string_view text) {
  const std::size_t lowest = text.size() > 3 ? text.size() - 3 : 0;
  for (std::size_t i = text.size(); i > lowest; --i) {
    const auto* lead = reinterpret_cast<const unsigned char*>(text.data()) + (i - 1);
    if (is_utf8_continuation(*lead)) continue;
    return scan_utf8(lead, text.size() - (i - 1)).truncated ? i - 1 : text.size();
  }
  return text.size();
}

}  // namespace agentty
