// WebOptions: how the web terminal server listens and what it allows. Filled
// by main from flags and the environment (AGENTTY_WEB_LISTEN, AGENTTY_WEB_TOKEN,
// AGENTTY_NO_WEB); the server itself reads no environment.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
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
  // Takeover, release and refused-takeover records; `who` is the viewer's
  // client kind and address. Never called with the secret.
  std::function<void(const nlohmann::json&)> audit;
};

}  // namespace agentty::web
