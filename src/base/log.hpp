// Logging: spdlog to stderr (never stdout: stdout belongs to the MCP protocol),
// optionally also to a file. Call init_logging once from main.
#pragma once

#include <spdlog/spdlog.h>

#include <cstddef>
#include <string>

#include "base/expected.hpp"

namespace agentty {

struct LogOptions {
  std::string level = "info";  // trace, debug, info, warn, error, off
  std::string file;            // empty: stderr only
  // The file is rotated at this size (FILE -> FILE.1 ... FILE.N, the oldest
  // dropped), so a server left running for weeks at debug level cannot fill
  // the disk.
  std::size_t file_max_bytes = 10 * 1024 * 1024;
  std::size_t file_rotations = 3;
};

// Fails (with the path and the reason) only when the log file cannot be opened.
Expected<void> init_logging(const LogOptions& options);

}  // namespace agentty
