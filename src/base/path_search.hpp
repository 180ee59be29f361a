// Finding a program as a shell's PATH search would, for checks made before
// anything runs (open's shell, --shell at start-up).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace agentty {

// A regular file this process may execute.
bool is_executable_file(const std::string& path);

// The first `DIR/name` that is an executable file, DIR taken in order from
// `path_value` (colon-separated, as PATH). Empty entries are skipped: they
// would mean whatever directory the caller happens to be in.
std::optional<std::string> find_executable(std::string_view name, std::string_view path_value);

// find_executable in this process's PATH (/usr/bin:/bin when unset).
std::optional<std::string> find_executable_in_path(std::string_view name);

}  // namespace agentty
