// Byte scans for the bulk-output hot path: find the first byte of a class in
// a buffer, 16 bytes per step. Every byte a program prints goes through a few
// of these (screen feeder, asciicast JSON escaping), and a byte-at-a-time
// loop was the largest user-space cost of `execute` on bulk output.
//
// Portable: GCC/Clang vector extensions (SSE2 on x86-64, NEON on arm64, plain
// scalar code elsewhere); the tail shorter than 16 bytes is scanned one byte
// at a time. Each function returns the index of the first matching byte, or
// `size` when there is none.
//
// Threading: pure functions.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace agentty {

namespace byte_scan_detail {

using Bytes16 = unsigned char __attribute__((vector_size(16)));
using Mask16 = signed char __attribute__((vector_size(16)));

inline Bytes16 load16(const char* p) {
  Bytes16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

constexpr Bytes16 splat(unsigned char c) {
  return Bytes16{c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c};
}

// A lane comparison's result as a mask (its element type differs by compiler).
template <typename Comparison>
inline Mask16 mask(Comparison comparison) {
  return std::bit_cast<Mask16>(comparison);
}

// Index of the first set lane of a comparison mask, or 16.
inline std::size_t first_set(Mask16 mask) {
#if defined(__SSE2__)
  // One instruction gathers the lanes' top bits: no loop over the lanes, which
  // mattered where a match comes every line (CR, LF in bulk output).
  using Chars16 = char __attribute__((vector_size(16)));
  const unsigned bits =
      static_cast<unsigned>(__builtin_ia32_pmovmskb128(std::bit_cast<Chars16>(mask)));
  return bits == 0 ? 16 : static_cast<std::size_t>(std::countr_zero(bits));
#else
  std::uint64_t halves[2];
  std::memcpy(halves, &mask, sizeof halves);
  if ((halves[0] | halves[1]) == 0) return 16;
  for (std::size_t i = 0; i < 16; ++i)
    if (mask[i]) return i;
  return 16;
#endif
}

// Runs `lane_mask` (Bytes16 -> Mask16) over whole blocks and `byte_match`
// (unsigned char -> bool) over the tail.
template <typename LaneMask, typename ByteMatch>
std::size_t find_first(const char* data, std::size_t size, LaneMask lane_mask,
                       ByteMatch byte_match) {
  std::size_t i = 0;
  for (; i + 16 <= size; i += 16) {
    const std::size_t at = first_set(lane_mask(load16(data + i)));
    if (at != 16) return i + at;
  }
  for (; i < size; ++i)
    if (byte_match(static_cast<unsigned char>(data[i]))) return i;
  return size;
}

}  // namespace byte_scan_detail

// First byte that is not printable ASCII (0x20-0x7E), CR or LF.
inline std::size_t find_not_plain_text(const char* data, std::size_t size) {
  using namespace byte_scan_detail;
  return find_first(
      data, size,
      [](Bytes16 v) -> Mask16 {
        return (mask(v < splat(0x20)) | mask(v > splat(0x7e))) & mask(v != splat('\r')) &
               mask(v != splat('\n'));
      },
      [](unsigned char c) { return (c < 0x20 || c > 0x7e) && c != '\r' && c != '\n'; });
}

// First byte that is not printable ASCII (0x20-0x7E).
inline std::size_t find_not_printable(const char* data, std::size_t size) {
  using namespace byte_scan_detail;
  return find_first(
      data, size, [](Bytes16 v) -> Mask16 { return mask(v < splat(0x20)) | mask(v > splat(0x7e)); },
      [](unsigned char c) { return c < 0x20 || c > 0x7e; });
}

// First C0 control character (below 0x20).
inline std::size_t find_control(const char* data, std::size_t size) {
  using namespace byte_scan_detail;
  return find_first(
      data, size, [](Bytes16 v) -> Mask16 { return mask(v < splat(0x20)); },
      [](unsigned char c) { return c < 0x20; });
}

// First byte a JSON string cannot hold as it is: a control character, '"',
// '\\', or any byte of 0x80 and up (UTF-8 to validate).
inline std::size_t find_json_special(const char* data, std::size_t size) {
  using namespace byte_scan_detail;
  return find_first(
      data, size,
      [](Bytes16 v) -> Mask16 {
        return mask(v < splat(0x20)) | mask(v > splat(0x7f)) | mask(v == splat('"')) |
               mask(v == splat('\\'));
      },
      [](unsigned char c) { return c < 0x20 || c > 0x7f || c == '"' || c == '\\'; });
}

}  // namespace agentty
