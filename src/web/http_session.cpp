#include "web/http_session.hpp"

#include <spdlog/spdlog.h>
#include <boost/beast/websocket.hpp>

#include "web/dashboard_viewer.hpp"
#include "web/embedded_assets.hpp"
#include "web/execution_feed.hpp"
#include "web/execution_summary.hpp"
#include "web/recordings_api.hpp"
#include "web/server_directory.hpp"
#include "web/terminal_viewer.hpp"
#include "web/web_context.hpp"
#include "web/wire_protocol.hpp"

namespace agentty::web {
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;

namespace {
constexpr auto kRequestTimeout = std::chrono::seconds(30);
constexpr auto kAtCapacityTimeout = std::chrono::seconds(5);
constexpr std::size_t kMaxHeaderBytes = 8 * 1024;
constexpr std::size_t kMaxBodyBytes = 8 * 1024;
constexpr std::string_view kAssetsPrefix = "/assets/";
constexpr std::string_view kCastType = "application/x-asciicast";
// The dashboard lists this many recordings, newest first.
constexpr std::size_t kMaxListedRecordings = 200;

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Execution ids and asset names are plain tokens; anything else is not ours.
bool plain_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// A peer's text as a log line shows it: at most 100 characters, anything but
// printable ASCII as %XX. A request target may be 8 KiB of any bytes but
// control characters; one refusal once logged all of it.
std::string shown(std::string_view text) {
  constexpr std::size_t kMaxShown = 100;
  std::string out;
  for (unsigned char c : text.substr(0, kMaxShown)) {
    if (c > 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      constexpr std::string_view kHex = "0123456789ABCDEF";
      out += {'%', kHex[c >> 4], kHex[c & 0xf]};
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out;
}

std::string path_of(std::string_view target) {
  return std::string(target.substr(0, target.find_first_of("?#")));
}

std::string peer_of(const boost::asio::ip::tcp::socket& socket) {
  boost::system::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  auto address = endpoint.address().to_string();
  if (endpoint.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(endpoint.port());
}

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Refusals are logged at most kRefusalsLoggedPerSecond a second, then counted:
// any local user can send refused requests as fast as it can connect, and
// each was a warning line in the log (and in the MCP client's stderr capture).
constexpr int kRefusalsLoggedPerSecond = 10;

// How many refusals went unlogged before this one, or nullopt: do not log it.
// The one I/O loop only.
std::optional<std::uint64_t> may_log_refusal() {
  static auto window_start = std::chrono::steady_clock::time_point{};
  static int logged = 0;
  static std::uint64_t unlogged = 0;
  auto now = std::chrono::steady_clock::now();
  if (now - window_start >= std::chrono::seconds(1)) {
    window_start = now;
    logged = 0;
  }
  if (logged >= kRefusalsLoggedPerSecond) {
    ++unlogged;
    return std::nullopt;
  }
  ++logged;
  return std::exchange(unlogged, 0);
}
}  // namespace

HttpSession::HttpSession(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<WebContext> context,
                         bool at_capacity)
    : stream_(std::move(socket)), context_(std::move(context)), at_capacity_(at_capacity) {
  peer_ = peer_of(stream_.socket());
}

HttpSession::~HttpSession() {
  finish();
}

void HttpSession::start() {
  // One answered at capacity is not counted (it is what did not fit); the
  // listener bounds how many there are (WebContext::begin_refusing).
  if (!at_capacity_) context_->add_connection(shared_from_this());
  do_read();
}

void HttpSession::shutdown() {
  beast::error_code ignored;
  stream_.socket().close(ignored);
  finish();
}

void HttpSession::do_read() {
  parser_.emplace();
  parser_->header_limit(kMaxHeaderBytes);
  parser_->body_limit(kMaxBodyBytes);
  stream_.expires_after(at_capacity_ ? kAtCapacityTimeout : kRequestTimeout);
  waiting_since_ = std::chrono::steady_clock::now();
  http::async_read(
      stream_, buffer_, *parser_,
      [self = self()](beast::error_code ec, std::size_t bytes) { self->on_read(ec, bytes); });
}

void HttpSession::on_read(beast::error_code ec, std::size_t) {
  waiting_since_.reset();
  if (ec) {
    if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
        ec != boost::asio::error::operation_aborted) {
      spdlog::debug("web: {}: bad request: {}", peer_, ec.message());
    }
    return finish();
  }
  handle(parser_->release());
}

void HttpSession::handle(HttpRequest request) {
  if (at_capacity_) return send(at_capacity(request));
  if (auto refused = context_->guard().check_site(request)) {
    return send(refusal(request, *refused));
  }
  auto path = path_of(request.target());
  if (websocket::is_upgrade(request)) return upgrade(std::move(request), path);
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    auto response = respond(request, http::status::method_not_allowed, "GET only\n",
                            "text/plain; charset=utf-8", false);
    response.set(http::field::allow, "GET, HEAD");
    return send(std::move(response));
  }
  if (path == wire::kServersApiPath) {
    if (auto refused = context_->guard().check_secret(request)) {
      return send(refusal(request, *refused));
    }
    return send(serve_servers(request));
  }
  if (starts_with(path, wire::kExecutionsApiPath)) {
    if (auto refused = context_->guard().check_secret(request)) {
      return send(refusal(request, *refused));
    }
    return send(serve_api(request, path));
  }
  if (starts_with(path, wire::kRecordingsApiPath)) {
    if (auto refused = context_->guard().check_secret(request)) {
      return send(refusal(request, *refused));
    }
    return serve_recordings(request, path);
  }
  send(serve_page(request, path));
}

void HttpSession::upgrade(HttpRequest request, const std::string& path) {
  const auto& guard = context_->guard();
  if (auto refused = guard.check_secret(request)) return send(refusal(request, *refused));
  if (!subprotocol_offered(request[http::field::sec_websocket_protocol], wire::kSubprotocol)) {
    return send(refusal(request, {http::status::bad_request, "subprotocol",
                                  "the client did not offer " + std::string(wire::kSubprotocol)}));
  }
  stream_.expires_never();
  if (path == wire::kDashboardSocketPath) {
    finished_ = true;
    context_->remove_connection(this);
    auto viewer = std::make_shared<DashboardViewer>(stream_.release_socket(), context_, peer_);
    return viewer->start(std::move(request));
  }
  if (starts_with(path, wire::kTerminalSocketPrefix)) {
    auto id = path.substr(wire::kTerminalSocketPrefix.size());
    auto execution = plain_name(id) ? context_->registry().find(id) : nullptr;
    if (!execution) {
      return send(refusal(request, {http::status::not_found, "path", "no execution " + shown(id)}));
    }
    finished_ = true;
    context_->remove_connection(this);
    auto viewer = std::make_shared<TerminalViewer>(stream_.release_socket(), context_,
                                                   context_->feed_for(execution), peer_);
    return viewer->start(std::move(request));
  }
  send(refusal(request, {http::status::not_found, "path", "no WebSocket at " + shown(path)}));
}

HttpSession::Response HttpSession::serve_page(const HttpRequest& request, const std::string& path) {
  std::string name;
  if (path == "/" || path == "/index.html") {
    name = "index.html";
  } else if (starts_with(path, wire::kTerminalPagePrefix) &&
             plain_name(path.substr(wire::kTerminalPagePrefix.size()))) {
    name = "terminal.html";
  } else if (starts_with(path, wire::kReplayPagePrefix) &&
             plain_name(path.substr(wire::kReplayPagePrefix.size()))) {
    name = "replay.html";
  } else if (starts_with(path, kAssetsPrefix) && plain_name(path.substr(kAssetsPrefix.size()))) {
    name = path.substr(kAssetsPrefix.size());
  }
  const auto* asset = name.empty() ? nullptr : find_embedded_asset(name);
  if (!asset) {
    return respond(request, http::status::not_found, "not found\n", "text/plain; charset=utf-8",
                   false);
  }
  return respond(request, http::status::ok, std::string(asset->body), asset->content_type, false);
}

HttpSession::Response HttpSession::serve_api(const HttpRequest& request, const std::string& path) {
  auto rest = std::string_view(path).substr(wire::kExecutionsApiPath.size());
  if (rest.empty() || rest == "/") {
    return respond(request, http::status::ok,
                   dump(nlohmann::json{{"executions", context_->execution_list()}}) + "\n",
                   "application/json", true);
  }
  auto id = std::string(rest.substr(1));
  auto execution = plain_name(id) && rest.front() == '/' ? context_->registry().find(id) : nullptr;
  if (!execution) {
    return respond(request, http::status::not_found, "not found\n", "text/plain; charset=utf-8",
                   true);
  }
  return respond(request, http::status::ok, dump(execution_summary(*execution)) + "\n",
                 "application/json", true);
}

// The recordings of this state directory (also of executions whose record is
// gone: they are what a person reviews afterwards), or one recording's file,
// streamed from disk (one may be as large as AGENTTY_MAX_RECORDING_BYTES).
void HttpSession::serve_recordings(const HttpRequest& request, const std::string& path) {
  const auto& registry = context_->registry();
  const auto dir = registry.recordings_dir();
  auto rest = std::string_view(path).substr(wire::kRecordingsApiPath.size());
  if (rest.empty() || rest == "/") {
    auto list = dir.empty() ? nlohmann::json::array() : list_recordings(dir, kMaxListedRecordings);
    for (auto& entry : list) {
      const auto id = entry["id"].get<std::string>();
      if (auto execution = registry.find(id)) {
        entry["terminal_path"] = std::string(wire::kTerminalPagePrefix) + id;
        entry["running"] = !execution->finished();
      }
    }
    return send(respond(request, http::status::ok,
                        dump(nlohmann::json{{"recordings", std::move(list)}}) + "\n",
                        "application/json", true));
  }
  auto file =
      rest.front() == '/' && !dir.empty() ? recording_file(dir, rest.substr(1)) : std::nullopt;
  beast::error_code ec;
  http::file_body::value_type body;
  if (file) body.open(file->c_str(), beast::file_mode::scan, ec);
  if (!file || ec) {
    return send(respond(request, http::status::not_found, "no such recording\n",
                        "text/plain; charset=utf-8", true));
  }
  if (request.method() == http::verb::head) {
    auto response = respond(request, http::status::ok, "", kCastType, true);
    response.content_length(body.size());
    return send(std::move(response));
  }
  http::response<http::file_body> response{http::status::ok, request.version()};
  decorate(response, request, kCastType, true);
  response.body() = std::move(body);
  response.prepare_payload();
  send(std::move(response));
}

// The other servers' dashboard URLs carry their secrets: only for a holder of
// this server's secret (who is already this user's agent), never logged.
HttpSession::Response HttpSession::serve_servers(const HttpRequest& request) {
  const auto& dir = context_->options().servers_dir;
  auto list = dir.empty() ? nlohmann::json{{"servers", nlohmann::json::array()}}
                          : ServerDirectory(dir).list_json();
  return respond(request, http::status::ok, dump(list) + "\n", "application/json", true);
}

HttpSession::Response HttpSession::refusal(const HttpRequest& request,
                                           const GuardRefusal& refused) {
  if (auto unlogged = may_log_refusal()) {
    spdlog::warn("web: refused {} {} from {}: {} check ({}){}", shown(request.method_string()),
                 shown(path_of(request.target())), peer_, refused.check, refused.detail,
                 *unlogged ? " (" + std::to_string(*unlogged) + " earlier refusals not logged)"
                           : std::string());
  }
  // A missing or wrong secret looks exactly like a missing page.
  std::string body = refused.status == http::status::not_found
                         ? "not found\n"
                         : "refused by the " + refused.check + " check\n";
  auto response =
      respond(request, refused.status, std::move(body), "text/plain; charset=utf-8", true);
  response.keep_alive(false);
  return response;
}

// Names the limit and what frees a place: closing a connection there was no
// room for made the browser say the server was down, and the terminal page
// say "agentty is not running".
HttpSession::Response HttpSession::at_capacity(const HttpRequest& request) {
  auto response = respond(request, http::status::service_unavailable,
                          "agentty's web server is at its limit of " +
                              std::to_string(context_->options().max_connections) +
                              " connections (terminal pages, dashboards, agentty attach); close "
                              "some of them, then reload this page.\n",
                          "text/plain; charset=utf-8", true);
  response.set(http::field::retry_after, "5");
  response.keep_alive(false);
  return response;
}

HttpSession::Response HttpSession::respond(const HttpRequest& request, http::status status,
                                           std::string body, std::string_view content_type,
                                           bool data) {
  Response response{status, request.version()};
  decorate(response, request, content_type, data);
  auto size = body.size();
  if (request.method() != http::verb::head) response.body() = std::move(body);
  response.prepare_payload();
  if (request.method() == http::verb::head) response.content_length(size);
  return response;
}

template <class Body>
void HttpSession::decorate(http::response<Body>& response, const HttpRequest& request,
                           std::string_view content_type, bool data) {
  response.set(http::field::server, "agentty");
  response.set(http::field::content_type, content_type);
  // The Host is only echoed into the CSP once the guard accepted it.
  auto host = request[http::field::host];
  std::string csp_host = context_->guard().host_allowed(host)
                             ? std::string(host)
                             : "127.0.0.1:" + std::to_string(context_->port());
  add_security_headers(response, csp_host);
  response.set(http::field::cache_control, data ? "no-store" : "no-cache");
  response.keep_alive(request.keep_alive());
}

// An answer being written, with the serializer that writes it in parts.
template <class Body>
struct HttpSession::Outgoing {
  explicit Outgoing(http::response<Body> answer) : response(std::move(answer)) {}
  http::response<Body> response;
  http::response_serializer<Body> serializer{response};
};

template <class Body>
void HttpSession::send(http::response<Body> response) {
  write_part(std::make_shared<Outgoing<Body>>(std::move(response)));
}

// The timeout is per part, not for the whole answer: a recording of hundreds
// of MB takes a reader longer than kRequestTimeout (it was cut off there),
// and a reader that stops reading is still dropped one timeout later.
template <class Body>
void HttpSession::write_part(std::shared_ptr<Outgoing<Body>> outgoing) {
  stream_.expires_after(at_capacity_ ? kAtCapacityTimeout : kRequestTimeout);
  http::async_write_some(stream_, outgoing->serializer,
                         [self = self(), outgoing](beast::error_code ec, std::size_t bytes) {
                           if (!ec && !outgoing->serializer.is_done())
                             return self->write_part(outgoing);
                           self->on_write(outgoing->response.keep_alive(), ec, bytes);
                         });
}

void HttpSession::on_write(bool keep_alive, beast::error_code ec, std::size_t) {
  if (ec || !keep_alive || finished_) {
    beast::error_code ignored;
    stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
    return finish();
  }
  do_read();
}

void HttpSession::finish() {
  if (finished_) return;
  finished_ = true;
  if (at_capacity_) return context_->end_refusing();
  context_->remove_connection(this);
}

}  // namespace agentty::web
