#include "session/wide_stand_ins.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "base/utf8.hpp"

namespace agentty::session {
namespace {

struct Range {
  std::uint32_t first;
  std::uint32_t last;
};

// Codepoints glibc 2.36 (Unicode 15) makes two columns wide and libvterm
// 0.1.4 one, found by feeding libvterm every codepoint and comparing its
// cursor with wcwidth(). All lie in U+16000..U+1FFFF.
constexpr std::array<Range, 36> kTooNarrow = {{
    {0x16FE1, 0x16FE3}, {0x16FF0, 0x16FF1}, {0x187ED, 0x187F7}, {0x18AF3, 0x18CD5},
    {0x18D00, 0x18D08}, {0x1AFF0, 0x1AFF3}, {0x1AFF5, 0x1AFFB}, {0x1AFFD, 0x1AFFE},
    {0x1B002, 0x1B122}, {0x1B150, 0x1B152}, {0x1B164, 0x1B167}, {0x1B170, 0x1B2FB},
    {0x1F260, 0x1F265}, {0x1F6D5, 0x1F6D7}, {0x1F6DD, 0x1F6DF}, {0x1F6F7, 0x1F6FC},
    {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F90F}, {0x1F91F, 0x1F91F},
    {0x1F928, 0x1F92F}, {0x1F931, 0x1F932}, {0x1F93F, 0x1F93F}, {0x1F94C, 0x1F94F},
    {0x1F95F, 0x1F97F}, {0x1F992, 0x1F9BF}, {0x1F9C1, 0x1F9FF}, {0x1FA70, 0x1FA74},
    {0x1FA78, 0x1FA7C}, {0x1FA80, 0x1FA86}, {0x1FA90, 0x1FAAC}, {0x1FAB0, 0x1FABA},
    {0x1FAC0, 0x1FAC5}, {0x1FAD0, 0x1FAD9}, {0x1FAE0, 0x1FAE7}, {0x1FAF0, 0x1FAF6},
}};

// Stand-in = codepoint + kShift: U+16000..U+1FFFF -> U+34000..U+3DFFF.
constexpr std::uint32_t kShift = 0x1E000;
constexpr std::uint32_t kFirstStandIn = 0x16000 + kShift;
static_assert(kFirstStandIn == kFirstWideStandIn);
constexpr std::uint32_t kLastStandIn = 0x1FFFF + kShift;

bool too_narrow(std::uint32_t cp) {
  auto it = std::upper_bound(kTooNarrow.begin(), kTooNarrow.end(), cp,
                             [](std::uint32_t value, const Range& r) { return value < r.first; });
  return it != kTooNarrow.begin() && cp <= std::prev(it)->last;
}

// The codepoint of a 4-byte sequence at `p` (its lead byte is 0xF0).
std::uint32_t decode4(const unsigned char* p) {
  return (static_cast<std::uint32_t>(p[1] & 0x3F) << 12) |
         (static_cast<std::uint32_t>(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
}

// Writes the 4-byte sequence of a plane 1..3 codepoint (lead byte 0xF0).
void encode4(std::uint32_t cp, char* out) {
  out[0] = static_cast<char>(0xF0);
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
}

// Rewrites, in `text`, each 4-byte sequence whose codepoint `select` picks
// into `map(codepoint)`; both lie in planes 1..3, so the length stays.
template <typename Select, typename Map>
bool rewrite_in_place(std::string& text, Select select, Map map) {
  bool changed = false;
  auto* data = reinterpret_cast<unsigned char*>(text.data());
  std::size_t size = text.size();
  for (std::size_t i = 0; i + 3 < size; ++i) {
    if (data[i] != 0xF0 || !is_utf8_continuation(data[i + 1]) ||
        !is_utf8_continuation(data[i + 2]) || !is_utf8_continuation(data[i + 3])) {
      continue;
    }
    std::uint32_t cp = decode4(data + i);
    if (select(cp)) {
      encode4(map(cp), text.data() + i);
      changed = true;
    }
    i += 3;
  }
  return changed;
}

}  // namespace

std::string_view with_wide_stand_ins(std::string_view bytes, std::string& storage) {
  // The first lead byte of a plane-1 character; most output has none.
  const void* lead = std::memchr(bytes.data(), 0xF0, bytes.size());
  if (lead == nullptr) return bytes;
  std::size_t from = static_cast<const char*>(lead) - bytes.data();
  bool any = false;
  for (std::size_t i = from; i + 3 < bytes.size(); ++i) {
    auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + i);
    if (p[0] == 0xF0 && is_utf8_continuation(p[1]) && is_utf8_continuation(p[2]) &&
        is_utf8_continuation(p[3]) && too_narrow(decode4(p))) {
      any = true;
      break;
    }
  }
  if (!any) return bytes;
  storage.assign(bytes);
  rewrite_in_place(storage, too_narrow, [](std::uint32_t cp) { return cp + kShift; });
  return storage;
}

std::string_view without_utf8_c1_controls(std::string_view bytes, std::string& storage) {
  auto is_c1_at = [&bytes](std::size_t i) {
    return i + 1 < bytes.size() && static_cast<unsigned char>(bytes[i + 1]) >= 0x80 &&
           static_cast<unsigned char>(bytes[i + 1]) <= 0x9F;
  };
  std::size_t at = bytes.find('\xC2');
  while (at != std::string_view::npos && !is_c1_at(at)) at = bytes.find('\xC2', at + 1);
  if (at == std::string_view::npos) return bytes;
  storage.assign(bytes.substr(0, at));
  for (std::size_t i = at; i < bytes.size(); ++i) {
    if (bytes[i] == '\xC2' && is_c1_at(i)) {
      ++i;  // C2 is a lead byte only, so this pair is one whole character
      continue;
    }
    storage += bytes[i];
  }
  return storage;
}

std::uint32_t stand_in_original(std::uint32_t codepoint) {
  bool stand_in =
      codepoint >= kFirstStandIn && codepoint <= kLastStandIn && too_narrow(codepoint - kShift);
  return stand_in ? codepoint - kShift : codepoint;
}

std::string without_wide_stand_ins(std::string_view text) {
  std::string out(text);
  rewrite_in_place(
      out, [](std::uint32_t cp) { return without_wide_stand_in(cp) != cp; },
      [](std::uint32_t cp) { return cp - kShift; });
  return out;
}

}  // namespace agentty::session
