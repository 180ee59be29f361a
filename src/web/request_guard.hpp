// RequestGuard: decides whether an HTTP request or WebSocket upgrade may be
// answered, before anything else looks at it.
//
// Checks, in order:
//  1. Host must name this server by a loopback name (127.0.0.1:PORT,
//     localhost:PORT, [::1]:PORT) or the configured listen address: a page on
//     another site that rebinds its DNS name to 127.0.0.1 sends its own name
//     and is refused (DNS rebinding).
//  2. Origin, when present, must be this server's own origin (http://HOST
//     with the Host just accepted): blocks cross-site WebSockets and fetches.
//  3. For data (API requests and every WebSocket): the secret, from
//     Sec-WebSocket-Protocol (kTokenProtocolPrefix + secret), X-Agentty-Token
//     or Authorization: Bearer, compared in constant time. A missing or wrong
//     secret gets 404, so nothing tells a prober that data exists.
// A refusal names the check that refused ("Host", "Origin", "secret") so the
// server can log it; the secret itself never appears in a refusal.
//
// Pure (no I/O, no state besides its configuration): safe anywhere.
#pragma once

#include <boost/beast/http.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace agentty::web {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;

struct GuardRefusal {
  boost::beast::http::status status;
  std::string check;   // "Host", "Origin", "secret"
  std::string detail;  // for the log; never contains the secret
};

class RequestGuard {
 public:
  // Compares two secrets; must not leak where they differ through timing.
  using SecretCompare = std::function<bool(const std::string&, const std::string&)>;

  // `listen_host` is the address the server listens on; a wildcard
  // (0.0.0.0, ::) or loopback address adds no extra allowed Host.
  RequestGuard(std::string secret, std::uint16_t port, std::string listen_host,
               SecretCompare compare = {});

  // Host and Origin: every request, pages included.
  std::optional<GuardRefusal> check_site(const HttpRequest& request) const;
  // The secret: data requests and WebSocket upgrades.
  std::optional<GuardRefusal> check_secret(const HttpRequest& request) const;

  bool host_allowed(std::string_view host) const;
  bool origin_allowed(std::string_view origin, std::string_view host) const;
  std::uint16_t port() const { return port_; }

 private:
  std::optional<std::string> offered_secret(const HttpRequest& request) const;

  std::string secret_;
  std::uint16_t port_;
  std::string listen_host_;
  SecretCompare compare_;
};

// The secret offered in a Sec-WebSocket-Protocol list, if any.
std::optional<std::string> secret_from_subprotocols(std::string_view header);
// Whether `protocol` is one of the comma-separated values of `header`.
bool subprotocol_offered(std::string_view header, std::string_view protocol);

// Headers every response carries: CSP with no external source (connections
// only to this server's own ws://HOST), nosniff, no referrer, no framing.
void add_security_headers(boost::beast::http::fields& fields, std::string_view host);

}  // namespace agentty::web
