// WebServer: the web terminal. One port (127.0.0.1:7681 by default, the next
// free one if taken) serving HTTP and WebSocket with Boost.Beast: a dashboard
// of executions, a terminal page per execution (xterm.js, embedded in the
// binary), and the same WebSocket protocol for `agentty attach`.
//
// Security model: a secret (the configured token, or 256 random bits per
// start) travels in the URL fragment (#token=...), which browsers never send
// to a server or put in a Referer; the page hands it back in
// Sec-WebSocket-Protocol or a header. Every data request and WebSocket needs
// it; Host and Origin must name this server (see RequestGuard). The secret is
// never logged.
//
// Threading: runs on the caller's io_context, which must have one thread (the
// session layer's rule). start()/stop() on that loop.
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "base/expected.hpp"
#include "session/registry.hpp"
#include "web/web_options.hpp"

namespace agentty::web {

class WebContext;
class Listener;

class WebServer {
 public:
  WebServer(boost::asio::io_context& io, session::Registry& registry, WebOptions options);
  ~WebServer();  // stop()
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Binds and starts accepting. An error says which address and why.
  Expected<void> start();
  // Stops accepting, closes every connection (holders are released).
  void stop();
  bool running() const { return context_ != nullptr; }

  // URLs carry the secret in the fragment; hand them only to the user/agent.
  std::string dashboard_url() const;
  std::string terminal_url(const std::string& execution_id) const;
  std::uint16_t port() const;
  const std::string& token() const { return secret_; }

 private:
  boost::asio::io_context& io_;
  session::Registry& registry_;
  WebOptions options_;
  std::string secret_;
  std::shared_ptr<WebContext> context_;
  std::shared_ptr<Listener> listener_;
};

}  // namespace agentty::web
