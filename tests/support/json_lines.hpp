// json_lines: the lines of a JSON-lines file (the audit log, an asciicast
// recording), each parsed; a line that is not JSON fails the test and is
// kept as a discarded value so the caller's counts still line up.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace agentty::test_util {

inline std::vector<nlohmann::json> json_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << "not JSON: " << line;
    out.push_back(parsed);
  }
  return out;
}

}  // namespace agentty::test_util
