// WebOptions: how the web terminal server listens and what it allows. Filled
// by main from flags and the environment (AGENTTY_WEB_LISTEN, AGENTTY_WEB_TOKEN,
// AGENTTY_NO_WEB); the server itself reads no environment.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace agentty::web {

struct WebOptions {
  std::string host = "127.0.0.1";            // listen address; loopback unless you mean it
  std::uint16_t port = 7681;                 // 0: any free port
  bool port_fallback = true;                 // port taken: try the next ones (up to 32)
  std::string token;                         // empty: a random 256-bit secret per start
  std::size_t viewer_queue_bytes = 1 << 20;  // per viewer; past it the viewer is resynced
  std::size_t max_connections = 64;          // HTTP + WebSocket, all kinds together
  // Bulk output: an execution printing faster than `stream_rate_bytes` per
  // second beyond a burst of `stream_burst_bytes` is "flooding"; its viewers
  // then get a fresh screen every `flood_snapshot_interval` instead of every
  // byte (no person reads 50 MB/s, and 20 viewers must not slow the PTY).
  std::size_t stream_rate_bytes = 4 << 20;
  std::size_t stream_burst_bytes = 1 << 20;
  std::chrono::milliseconds flood_snapshot_interval{100};
  // Takeover, release and refused-takeover records; `who` is the viewer's
  // client kind and address. Never called with the secret.
  std::function<void(const nlohmann::json&)> audit;
  // STATE_DIR/servers (see ServerDirectory), listed by /api/servers; empty:
  // the list is empty.
  std::filesystem::path servers_dir;
};

}  // namespace agentty::web
