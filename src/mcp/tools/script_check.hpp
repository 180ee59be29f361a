// Helpers for execute's `script` and `argv` inputs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/expected.hpp"

namespace agentty::mcp::tools {

// Runs `bash -n` on the script; on success returns the path of a file
// holding it (under state_dir/scripts, 0600), ready to run with bash.
Expected<std::string> check_bash_syntax(const std::string& script,
                                        const std::filesystem::path& state_dir);

// argv as one POSIX shell line (for SSH, where the remote side needs a string).
std::string shell_quote_argv(const std::vector<std::string>& argv);

}  // namespace agentty::mcp::tools
