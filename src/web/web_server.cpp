#include "web/web_server.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/random_id.hpp"
#include "web/http_session.hpp"
#include "web/web_context.hpp"
#include "web/wire_protocol.hpp"

namespace agentty::web {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {
constexpr int kPortAttempts = 32;
// Out of file descriptors: the pending connection stays in the backlog and
// the acceptor stays readable, so accepting again at once failed again at
// once: a busy loop that logged ~4 MB a second. Retry after a pause instead.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr auto kRefusalLogInterval = std::chrono::seconds(10);

bool out_of_resources(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
         ec == asio::error::no_memory || ec.value() == ENFILE;
}

// The host part of URLs we hand out: a loopback name unless the server listens
// on one specific other address.
std::string url_host_for(const asio::ip::address& address) {
  if (address.is_unspecified()) return address.is_v6() ? "[::1]" : "127.0.0.1";
  if (address.is_v6()) return "[" + address.to_string() + "]";
  return address.to_string();
}
}  // namespace

// Accepts connections and hands each to an HttpSession. Shared so a pending
// accept can complete after the server object is gone.
class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(tcp::acceptor acceptor, std::shared_ptr<WebContext> context)
      : acceptor_(std::move(acceptor)),
        pause_(acceptor_.get_executor()),
        context_(std::move(context)) {}

  void start() { do_accept(); }
  void stop() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    pause_.cancel();
  }

 private:
  void do_accept() {
    acceptor_.async_accept(
        [self = shared_from_this()](boost::system::error_code ec, tcp::socket socket) {
          self->on_accept(ec, std::move(socket));
        });
  }

  void on_accept(boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open() || context_->stopped()) return;
    if (out_of_resources(ec)) return pause_accepting(ec);
    if (failed_accepts_ > 0) {
      spdlog::warn("web: accepting connections again after {} failed attempts", failed_accepts_);
      failed_accepts_ = 0;
    }
    if (ec) {
      spdlog::warn("web: accept: {}", ec.message());
    } else if (!context_->make_room()) {
      refuse(std::move(socket));
    } else {
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<HttpSession>(std::move(socket), context_)->start();
    }
    do_accept();
  }

  // No room: answered 503 (what the limit is, what to do) while few are;
  // logged once per kRefusalLogInterval, with how many, as any local user
  // can connect in a loop.
  void refuse(tcp::socket socket) {
    ++refused_;
    auto now = std::chrono::steady_clock::now();
    if (now - refusal_logged_at_ >= kRefusalLogInterval) {
      spdlog::warn("web: refused {} connection(s): max_connections ({}) reached", refused_,
                   context_->options().max_connections);
      refused_ = 0;
      refusal_logged_at_ = now;
    }
    if (context_->begin_refusing()) {
      std::make_shared<HttpSession>(std::move(socket), context_, /*at_capacity=*/true)->start();
    }
  }

  void pause_accepting(const boost::system::error_code& ec) {
    if (failed_accepts_++ == 0) {
      spdlog::warn(
          "web: accept: {}; retrying every {} ms meanwhile (raise `ulimit -n`, or end "
          "executions)",
          ec.message(), kAcceptPause.count());
    }
    pause_.expires_after(kAcceptPause);
    pause_.async_wait([self = shared_from_this()](boost::system::error_code wait_ec) {
      if (!wait_ec && self->acceptor_.is_open()) self->do_accept();
    });
  }

  tcp::acceptor acceptor_;
  asio::steady_timer pause_;
  std::shared_ptr<WebContext> context_;
  std::uint64_t failed_accepts_ = 0;  // in a row, out of resources
  std::uint64_t refused_ = 0;         // at max_connections, since the last log line
  std::chrono::steady_clock::time_point refusal_logged_at_{};
};

WebServer::WebServer(asio::io_context& io, session::Registry& registry, WebOptions options)
    : io_(io), registry_(registry), options_(std::move(options)) {}

WebServer::~WebServer() {
  stop();
}

namespace {
Expected<tcp::acceptor> bind_acceptor(asio::io_context& io, const asio::ip::address& address,
                                      std::uint16_t first_port, bool fallback) {
  int attempts = fallback && first_port != 0 ? kPortAttempts : 1;
  boost::system::error_code ec;
  for (int i = 0; i < attempts; ++i) {
    auto port = static_cast<std::uint16_t>(first_port + i);
    tcp::acceptor acceptor(io);
    tcp::endpoint endpoint(address, port);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) return acceptor;
    if (ec != asio::error::address_in_use) break;
  }
  return make_error("web server: cannot listen on " + address.to_string() + ":" +
                    std::to_string(first_port) + (attempts > 1 ? " (or the next ports)" : "") +
                    ": " + ec.message() +
                    "; choose another with --web-listen HOST:PORT or AGENTTY_WEB_LISTEN");
}
}  // namespace

Expected<void> WebServer::start() {
  if (context_) return {};
  boost::system::error_code ec;
  auto host = options_.host == "localhost" ? std::string("127.0.0.1") : options_.host;
  auto address = asio::ip::make_address(host, ec);
  if (ec) {
    return make_error("web server: \"" + options_.host +
                      "\" is not an IP address; use e.g. 127.0.0.1 or ::1");
  }
  auto acceptor = bind_acceptor(io_, address, options_.port, options_.port_fallback);
  if (!acceptor) return Error{acceptor.error()};
  auto port = acceptor->local_endpoint().port();
  secret_ = options_.token.empty() ? random_hex(32) : options_.token;
  context_ =
      std::make_shared<WebContext>(io_, registry_, options_, secret_, port, url_host_for(address));
  context_->start();
  listener_ = std::make_shared<Listener>(std::move(acceptor).value(), context_);
  listener_->start();
  spdlog::info("web: dashboard at {} (the #token fragment is the secret)", context_->base_url());
  return {};
}

void WebServer::stop() {
  if (!context_) return;
  listener_->stop();
  context_->stop();
  listener_.reset();
  context_.reset();
}

std::uint16_t WebServer::port() const {
  return context_ ? context_->port() : 0;
}

std::string WebServer::dashboard_url() const {
  if (!context_) return {};
  return context_->base_url() + "/#" + std::string(wire::kTokenFragmentKey) + "=" + secret_;
}

std::string WebServer::terminal_url(const std::string& execution_id) const {
  if (!context_) return {};
  return context_->base_url() + std::string(wire::kTerminalPagePrefix) + execution_id + "#" +
         std::string(wire::kTokenFragmentKey) + "=" + secret_;
}

}  // namespace agentty::web
