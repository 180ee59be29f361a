// Connection: anything the server accepted and must be able to close on
// stop() (an HTTP session, a terminal viewer, a dashboard viewer).
#pragma once

#include <chrono>
#include <memory>
#include <optional>

namespace agentty::web {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  virtual ~Connection() = default;
  // Closes the socket now; pending operations complete with an error.
  virtual void shutdown() = 0;
  // Since when it has been waiting for a request (an HTTP connection before
  // its first request or between two): such a connection may be closed to
  // make room for a new one. nullopt: it is answering, or it is a viewer.
  virtual std::optional<std::chrono::steady_clock::time_point> waiting_since() const {
    return std::nullopt;
  }
};

}  // namespace agentty::web
