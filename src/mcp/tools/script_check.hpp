// Helpers for execute's `script` and `argv` inputs.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/expected.hpp"
#include "base/owned_path.hpp"

namespace agentty::mcp::tools {

// Runs `BASH -n` on the script; on success returns the file holding it
// (under state_dir/scripts, 0600, its name starting with `name_prefix`: the
// server's owner tag), for the same bash to run. The file is removed when the
// last owner drops it, and at once when the check fails. Waits for bash on
// the calling coroutine's executor; a cancelled call kills it.
boost::asio::awaitable<Expected<std::shared_ptr<const OwnedPath>>> check_bash_syntax(
    const std::string& script, const std::filesystem::path& state_dir, const std::string& bash,
    const std::string& name_prefix = "");

// argv as one POSIX shell line (for SSH, where the remote side needs a string).
std::string shell_quote_argv(const std::vector<std::string>& argv);

}  // namespace agentty::mcp::tools
