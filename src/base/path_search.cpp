#include "base/path_search.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace agentty {

bool is_executable_file(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::is_regular_file(path, ignored) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_executable(std::string_view name, std::string_view path_value) {
  while (true) {
    const auto colon = path_value.find(':');
    const std::string_view directory = path_value.substr(0, colon);
    if (!directory.empty()) {
      std::string candidate = std::string(directory) + "/" + std::string(name);
      if (is_executable_file(candidate)) return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    path_value.remove_prefix(colon + 1);
  }
}

std::optional<std::string> find_executable_in_path(std::string_view name) {
  const char* path = std::getenv("PATH");
  return find_executable(name, path ? path : "/usr/bin:/bin");
}

}  // namespace agentty
