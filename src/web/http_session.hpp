// HttpSession: one accepted TCP connection speaking HTTP/1.1 until it asks
// for a WebSocket, which is then handed (socket and request) to a
// TerminalViewer or DashboardViewer.
//
// Every request passes the RequestGuard first (Host, Origin); data requests
// and every upgrade also need the secret, all BEFORE any upgrade happens. A
// refusal is logged with the check that refused it, never with the secret.
// Routes:
//   GET /                      dashboard page        (static, no secret)
//   GET /t/<id>                terminal page         (static, no secret)
//   GET /assets/<file>         JS and CSS            (static, no secret)
//   GET /r/<id>                replay page           (static, no secret)
//   GET /api/executions[/<id>] JSON                  (secret)
//   GET /api/recordings        JSON, newest first    (secret)
//   GET /api/recordings/<id>   the asciicast file    (secret)
//   WS  /ws/dashboard          executions, live      (secret)
//   WS  /ws/terminal/<id>      one terminal, live    (secret)
//
// Beast-style do_x/on_x callbacks; the one I/O event loop.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <memory>
#include <optional>
#include <string>

#include "web/connection.hpp"
#include "web/request_guard.hpp"

namespace agentty::web {

class WebContext;

class HttpSession : public Connection {
 public:
  // `at_capacity`: the server has no room for it (max_connections): every
  // request it sends is answered 503 with what to do, and it is closed.
  HttpSession(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<WebContext> context,
              bool at_capacity = false);
  ~HttpSession() override;

  void start();
  void shutdown() override;
  std::optional<std::chrono::steady_clock::time_point> waiting_since() const override {
    return waiting_since_;
  }

 private:
  using Response = boost::beast::http::response<boost::beast::http::string_body>;
  std::shared_ptr<HttpSession> self() {
    return std::static_pointer_cast<HttpSession>(shared_from_this());
  }
  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  void handle(HttpRequest request);
  void upgrade(HttpRequest request, const std::string& path);
  Response serve_page(const HttpRequest& request, const std::string& path);
  Response serve_api(const HttpRequest& request, const std::string& path);
  Response serve_servers(const HttpRequest& request);
  void serve_recordings(const HttpRequest& request, const std::string& path);
  Response refusal(const HttpRequest& request, const GuardRefusal& refusal);
  Response at_capacity(const HttpRequest& request);
  Response respond(const HttpRequest& request, boost::beast::http::status status, std::string body,
                   std::string_view content_type, bool data);
  // Server, type, security and cache headers, as every answer has them.
  template <class Body>
  void decorate(boost::beast::http::response<Body>& response, const HttpRequest& request,
                std::string_view content_type, bool data);
  template <class Body>
  struct Outgoing;
  template <class Body>
  void send(boost::beast::http::response<Body> response);
  template <class Body>
  void write_part(std::shared_ptr<Outgoing<Body>> outgoing);
  void on_write(bool keep_alive, boost::beast::error_code ec, std::size_t bytes);
  void finish();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<WebContext> context_;
  std::string peer_;
  bool at_capacity_;
  bool finished_ = false;
  std::optional<std::chrono::steady_clock::time_point> waiting_since_;  // reading a request
};

}  // namespace agentty::web
