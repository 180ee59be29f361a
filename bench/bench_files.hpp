// Input files shared by the benchmarks, generated once and cached in
// /tmp/agentty-bench/ so every benchmark (and every run) reads the same bytes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace agentty::bench {

inline const std::filesystem::path kBenchDir = "/tmp/agentty-bench";
constexpr int kLineBytes = 100;  // 99 printable characters and '\n'

// `megabytes` MiB of base64-alphabet lines from a fixed xorshift stream:
// nothing in the path can compress or special-case them, and they are the
// same on every run.
inline std::filesystem::path ensure_lines_file(std::uint64_t megabytes) {
  namespace fs = std::filesystem;
  std::uint64_t lines = (megabytes << 20) / kLineBytes;
  fs::path path = kBenchDir / ("lines-" + std::to_string(megabytes) + "M.txt");
  std::error_code ec;
  if (fs::file_size(path, ec) == lines * kLineBytes) return path;
  fs::create_directories(kBenchDir);
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  fs::path partial = path;
  partial += ".partial";
  FILE* out = std::fopen(partial.c_str(), "w");
  if (!out) {
    std::perror("bench file");
    std::exit(1);
  }
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  char line[kLineBytes];
  for (std::uint64_t i = 0; i < lines; ++i) {
    for (int c = 0; c < kLineBytes - 1; ++c) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      line[c] = alphabet[state & 63];
    }
    line[kLineBytes - 1] = '\n';
    std::fwrite(line, 1, sizeof line, out);
  }
  std::fclose(out);
  fs::rename(partial, path);
  return path;
}

}  // namespace agentty::bench
