#include "base/log.hpp"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace agentty {
namespace {

// Logs name commands, hosts and paths: private to the user, whatever the
// umask. Only our own regular files: a device (/dev/stderr) or another
// user's file would change for everyone.
void make_private(spdlog::filename_t, std::FILE* file) {
  struct stat info {};
  int fd = ::fileno(file);
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == ::geteuid() &&
      (info.st_mode & 0777) != 0600)
    ::fchmod(fd, 0600);
}

}  // namespace

Expected<void> init_logging(const LogOptions& options) {
  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (!options.file.empty()) {
    spdlog::file_event_handlers handlers;
    handlers.after_open = make_private;
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
