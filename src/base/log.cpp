#include "base/log.hpp"

#include "base/private_dir.hpp"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace agentty {

Expected<void> init_logging(const LogOptions& options) {
  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (!options.file.empty()) {
    spdlog::file_event_handlers handlers;
    // Logs name commands, hosts and paths: private, whatever the umask.
    handlers.after_open = [](spdlog::filename_t, std::FILE* file) {
      make_open_file_private(::fileno(file));
    };
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
          options.file, options.file_max_bytes, options.file_rotations, false, handlers));
    } catch (const spdlog::spdlog_ex& e) {
      return make_error("cannot open the log file '" + options.file + "': " + e.what() +
                        ". Pick a writable path with --log-file (AGENTTY_LOG_FILE).");
    }
  }
  auto logger = std::make_shared<spdlog::logger>("agentty", sinks.begin(), sinks.end());
  logger->set_level(spdlog::level::from_str(options.level));
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return {};
}

}  // namespace agentty
