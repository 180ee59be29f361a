// Logging: spdlog to stderr (never stdout: stdout belongs to the MCP protocol),
// optionally also to a file. Call init_logging once from main.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace agentty {

struct LogOptions {
  std::string level = "info";  // trace, debug, info, warn, error, off
  std::string file;            // empty: stderr only
};

void init_logging(const LogOptions& options);

}  // namespace agentty
