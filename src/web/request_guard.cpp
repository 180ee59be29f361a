#include "web/request_guard.hpp"

#include <algorithm>

#include "base/ascii_case.hpp"
#include "base/random_id.hpp"
#include "web/wire_protocol.hpp"

namespace agentty::web {
namespace http = boost::beast::http;

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Calls `visit` on each comma-separated, trimmed element of a header value.
template <class Visit>
void for_each_element(std::string_view header, Visit visit) {
  while (!header.empty()) {
    auto comma = header.find(',');
    auto element = trim(header.substr(0, comma));
    if (!element.empty() && visit(element)) return;
    if (comma == std::string_view::npos) return;
    header.remove_prefix(comma + 1);
  }
}

bool is_wildcard_or_loopback(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "127.0.0.1" ||
         host == "::1" || host == "localhost";
}

std::string host_with_port(std::string_view host, std::uint16_t port) {
  std::string name(host);
  if (name.find(':') != std::string::npos && name.front() != '[') name = "[" + name + "]";
  return name + ":" + std::to_string(port);
}

}  // namespace

RequestGuard::RequestGuard(std::string secret, std::uint16_t port, std::string listen_host,
                           SecretCompare compare)
    : secret_(std::move(secret)),
      port_(port),
      listen_host_(ascii_lowercase(listen_host)),
      compare_(compare ? std::move(compare) : SecretCompare(&secure_equals)) {}

bool RequestGuard::host_allowed(std::string_view host) const {
  auto name = ascii_lowercase(trim(host));
  for (std::string_view loopback : {"127.0.0.1", "localhost", "::1"}) {
    if (name == host_with_port(loopback, port_)) return true;
  }
  return !is_wildcard_or_loopback(listen_host_) && name == host_with_port(listen_host_, port_);
}

bool RequestGuard::origin_allowed(std::string_view origin, std::string_view host) const {
  return ascii_lowercase(trim(origin)) == "http://" + ascii_lowercase(trim(host));
}

std::optional<GuardRefusal> RequestGuard::check_site(const HttpRequest& request) const {
  // One of each, as RFC 9112 requires: with two, the guard checked the first
  // while whatever sits in front of the server (a proxy) may use the other.
  if (request.count(http::field::host) > 1 || request.count(http::field::origin) > 1) {
    return GuardRefusal{http::status::bad_request, "Host", "more than one Host or Origin header"};
  }
  auto host = request[http::field::host];
  if (!host_allowed(host)) {
    return GuardRefusal{http::status::forbidden, "Host",
                        "Host \"" + std::string(host.substr(0, 100)) + "\" is not this server"};
  }
  auto origin = request.find(http::field::origin);
  if (origin != request.end() && !origin_allowed(origin->value(), host)) {
    return GuardRefusal{http::status::forbidden, "Origin",
                        "Origin \"" + std::string(origin->value().substr(0, 100)) +
                            "\" is not this server's origin"};
  }
  return std::nullopt;
}

std::optional<std::string> RequestGuard::offered_secret(const HttpRequest& request) const {
  if (auto it = request.find(http::field::sec_websocket_protocol); it != request.end()) {
    if (auto secret = secret_from_subprotocols(it->value())) return secret;
  }
  if (auto it = request.find(wire::kTokenHeader); it != request.end()) {
    return std::string(trim(it->value()));
  }
  if (auto it = request.find(http::field::authorization); it != request.end()) {
    auto value = trim(it->value());
    constexpr std::string_view kBearer = "Bearer ";
    if (value.size() > kBearer.size() &&
        ascii_lowercase(value.substr(0, kBearer.size())) == "bearer ") {
      return std::string(trim(value.substr(kBearer.size())));
    }
  }
  return std::nullopt;
}

std::optional<GuardRefusal> RequestGuard::check_secret(const HttpRequest& request) const {
  auto offered = offered_secret(request);
  if (!offered) return GuardRefusal{http::status::not_found, "secret", "no secret offered"};
  if (!compare_(*offered, secret_)) {
    return GuardRefusal{http::status::not_found, "secret", "wrong secret offered"};
  }
  return std::nullopt;
}

std::optional<std::string> secret_from_subprotocols(std::string_view header) {
  std::optional<std::string> found;
  for_each_element(header, [&](std::string_view element) {
    if (element.substr(0, wire::kTokenProtocolPrefix.size()) != wire::kTokenProtocolPrefix) {
      return false;
    }
    found = std::string(element.substr(wire::kTokenProtocolPrefix.size()));
    return true;
  });
  return found;
}

bool subprotocol_offered(std::string_view header, std::string_view protocol) {
  bool offered = false;
  for_each_element(header, [&](std::string_view element) { return offered = element == protocol; });
  return offered;
}

void add_security_headers(http::fields& fields, std::string_view host) {
  fields.set("Content-Security-Policy",
             "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
             "img-src 'self' data:; font-src 'self'; connect-src 'self' ws://" +
                 std::string(host) +
                 "; object-src 'none'; base-uri 'none'; form-action 'none'; "
                 "frame-ancestors 'none'");
  fields.set("X-Content-Type-Options", "nosniff");
  fields.set("Referrer-Policy", "no-referrer");
  fields.set("X-Frame-Options", "DENY");
  fields.set("Cross-Origin-Resource-Policy", "same-origin");
}

}  // namespace agentty::web
