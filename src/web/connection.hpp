// Connection: anything the server accepted and must be able to close on
// stop() (an HTTP session, a terminal viewer, a dashboard viewer).
#pragma once

#include <memory>

namespace agentty::web {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  virtual ~Connection() = default;
  // Closes the socket now; pending operations complete with an error.
  virtual void shutdown() = 0;
};

}  // namespace agentty::web
