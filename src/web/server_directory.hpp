// ServerDirectory: how the agentty servers of one user find each other. Every
// MCP client starts its own `agentty mcp` with its own web server, port and
// secret, so a person looking at one dashboard (say `agentty serve`'s) would
// not see the others. Each server with a web server publishes one file,
// STATE_DIR/servers/<pid>.json, and any dashboard lists them all.
//
// Invariants: the directory is 0700 and each file 0600 (the dashboard URL
// carries its server's secret); a file is written to a temp name and renamed,
// so a reader sees a whole file or none. An entry counts only while its pid
// is alive, started at the recorded time (/proc/PID/stat starttime, which
// tells a reused pid apart) and runs an agentty binary; whoever lists removes
// the files that fail this (servers killed without a clean shutdown).
//
// Threading: none of its own; each call is blocking file I/O on a small
// directory (a few files, read in well under a millisecond).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/expected.hpp"

namespace agentty::web {

struct ServerInfo {
  int pid = 0;
  std::string kind;                // "mcp" or "serve"
  std::int64_t started_at_ms = 0;  // wall clock, ms since the epoch
  std::string dashboard_url;       // with the secret in the fragment: never log it
  std::uint16_t port = 0;
  std::uint64_t process_start = 0;  // /proc/PID/stat field 22 (clock ticks since boot)

  // This process, started now.
  static ServerInfo self(std::string kind, std::string dashboard_url, std::uint16_t port);
  nlohmann::json to_json() const;
  static Expected<ServerInfo> from_json(const nlohmann::json& j);
};

class ServerDirectory {
 public:
  explicit ServerDirectory(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& dir() const { return dir_; }

  // Writes dir/<pid>.json (0600) atomically; makes the directory (0700).
  Expected<void> publish(const ServerInfo& info) const;
  // Removes dir/<pid>.json if it is there.
  void remove(int pid) const;
  // Every live server, oldest first; stale and foreign files are removed.
  std::vector<ServerInfo> list() const;
  // The /api/servers answer: {"servers": [... each with "self": bool]}.
  nlohmann::json list_json() const;

  // Whether `pid` is a live agentty process that started at `process_start`.
  static bool live_agentty(int pid, std::uint64_t process_start);
  // Field 22 of /proc/PID/stat; 0 when the process is gone.
  static std::uint64_t process_start_of(int pid);

 private:
  std::filesystem::path dir_;
};

// This server's entry for as long as the object lives (removed on
// destruction or withdraw(), i.e. on clean shutdown).
class ServerRegistration {
 public:
  static Expected<std::unique_ptr<ServerRegistration>> publish(ServerDirectory directory,
                                                               ServerInfo info);
  ~ServerRegistration() { withdraw(); }
  ServerRegistration(const ServerRegistration&) = delete;
  ServerRegistration& operator=(const ServerRegistration&) = delete;
  void withdraw();

 private:
  ServerRegistration(ServerDirectory directory, int pid)
      : directory_(std::move(directory)), pid_(pid) {}
  ServerDirectory directory_;
  int pid_;
  bool withdrawn_ = false;
};

}  // namespace agentty::web
