#include "web/attach_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <optional>

#include "web/wire_protocol.hpp"

namespace agentty::web {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;

namespace {

constexpr const char* kHelp =
    "Ctrl-] t: take over/release, Ctrl-] d: detach, Ctrl-] Ctrl-]: send Ctrl-]";

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};

struct ParsedUrl {
  std::string host;
  std::uint16_t port = 0;
  std::string path;
  std::string token;
};

Expected<ParsedUrl> parse_url(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.compare(0, kScheme.size(), kScheme) != 0) {
    return make_error("\"" + url + "\" is not an http:// URL of an agentty server");
  }
  std::string rest = url.substr(kScheme.size());
  ParsedUrl parsed;
  if (auto hash = rest.find('#'); hash != std::string::npos) {
    std::string fragment = rest.substr(hash + 1);
    rest.resize(hash);
    std::string key = std::string(wire::kTokenFragmentKey) + "=";
    for (std::size_t start = 0; start < fragment.size();) {
      auto end = fragment.find('&', start);
      auto item = fragment.substr(start, end - start);
      if (item.compare(0, key.size(), key) == 0) parsed.token = item.substr(key.size());
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  parsed.path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::size_t colon;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) return make_error("bad host in \"" + url + "\"");
    parsed.host = authority.substr(1, close - 1);
    colon = authority.find(':', close);
  } else {
    colon = authority.rfind(':');
    parsed.host = authority.substr(0, colon);
  }
  if (colon == std::string::npos || parsed.host.empty()) {
    return make_error("\"" + url + "\" has no HOST:PORT");
  }
  char* end = nullptr;
  long port = std::strtol(authority.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port <= 0 || port > 65535) return make_error("bad port in \"" + url + "\"");
  parsed.port = static_cast<std::uint16_t>(port);
  return parsed;
}

}  // namespace

Expected<AttachTarget> resolve_attach_target(const AttachOptions& options) {
  bool target_is_url = options.target.compare(0, 7, "http://") == 0;
  const std::string& url = target_is_url ? options.target : options.url;
  if (url.empty()) {
    return make_error("agentty attach " + options.target +
                      ": which server? Pass its terminal_url, or --url (or AGENTTY_WEB_URL) "
                      "with the dashboard URL agentty printed");
  }
  auto parsed = parse_url(url);
  if (!parsed) return Error{parsed.error()};
  AttachTarget target{parsed->host, parsed->port, options.target, parsed->token};
  if (target_is_url) {
    auto prefix = std::string(wire::kTerminalPagePrefix);
    if (parsed->path.compare(0, prefix.size(), prefix) != 0 ||
        parsed->path.size() == prefix.size()) {
      return make_error("\"" + url + "\" is not a terminal URL (http://HOST:PORT/t/ID#token=...)");
    }
    target.execution_id = parsed->path.substr(prefix.size());
  }
  if (target.token.empty()) target.token = options.token;
  if (target.token.empty()) {
    return make_error(
        "the URL carries no #token=...; use the full URL agentty printed, or set "
        "AGENTTY_WEB_TOKEN");
  }
  return target;
}

namespace {

// Raw mode for the controlling terminal; restores termios and the file status
// flags (Asio makes stdin non-blocking, which a shared tty passes on to the shell).
class TerminalMode {
 public:
  TerminalMode() {
    flags_ = ::fcntl(STDIN_FILENO, F_GETFL);
    if (::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    ::cfmakeraw(&raw);
    raw_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~TerminalMode() {
    if (raw_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    if (flags_ >= 0) ::fcntl(STDIN_FILENO, F_SETFL, flags_);
  }
  TerminalMode(const TerminalMode&) = delete;
  TerminalMode& operator=(const TerminalMode&) = delete;

 private:
  termios saved_{};
  int flags_ = -1;
  bool raw_ = false;
};

std::optional<pty::TerminalSize> local_size() {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0 || ws.ws_row == 0) {
    return std::nullopt;
  }
  return pty::TerminalSize{ws.ws_col, ws.ws_row};
}

// stdout may share a non-blocking open file with stdin: wait instead of failing.
void write_stdout(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd fd{STDOUT_FILENO, POLLOUT, 0};
      ::poll(&fd, 1, 1000);
    } else {
      return;
    }
  }
}

class AttachSession {
 public:
  explicit AttachSession(AttachTarget target)
      : target_(std::move(target)),
        ws_(io_),
        stdin_(io_, ::dup(STDIN_FILENO)),
        winch_(io_, SIGWINCH),
        quit_signals_(io_, SIGTERM, SIGHUP) {}

  Expected<void> connect() {
    websocket::response_type response;
    try {
      tcp::resolver resolver(io_);
      auto endpoints = resolver.resolve(target_.host, std::to_string(target_.port));
      beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(15));
      beast::get_lowest_layer(ws_).connect(endpoints);
      beast::get_lowest_layer(ws_).expires_never();
      std::string protocols = std::string(wire::kSubprotocol) + ", " +
                              std::string(wire::kTokenProtocolPrefix) + target_.token;
      ws_.set_option(websocket::stream_base::decorator([protocols](websocket::request_type& req) {
        req.set(beast::http::field::sec_websocket_protocol, protocols);
        req.set(beast::http::field::user_agent, "agentty-attach");
      }));
      std::string host =
          target_.host.find(':') != std::string::npos ? "[" + target_.host + "]" : target_.host;
      ws_.handshake(response, host + ":" + std::to_string(target_.port),
                    std::string(wire::kTerminalSocketPrefix) + target_.execution_id);
      ws_.read_message_max(8 * 1024 * 1024);
    } catch (const boost::system::system_error& e) {
      if (e.code() == websocket::error::upgrade_declined &&
          response.result() == beast::http::status::service_unavailable) {
        // At its connection limit: the server's answer says what to do.
        auto said = response.body();
        while (!said.empty() && said.back() == '\n') said.pop_back();
        return make_error("the server refused: " + said);
      }
      if (e.code() == websocket::error::upgrade_declined) {
        return make_error("the server refused: no execution " + target_.execution_id +
                          " there, or a wrong or outdated secret (agentty makes a new one each "
                          "start)");
      }
      return make_error("cannot connect to " + target_.host + ":" + std::to_string(target_.port) +
                        ": " + e.code().message());
    }
    return {};
  }

  int run() {
    std::fprintf(stderr, "agentty attach: watching %s (read-only). %s\r\n",
                 target_.execution_id.c_str(), kHelp);
    TerminalMode mode;
    do_read_socket();
    do_read_stdin();
    do_wait_winch();
    quit_signals_.async_wait([this](boost::system::error_code ec, int) {
      if (!ec) quit("terminated");
    });
    io_.run();
    write_stdout("\x1b[0m\x1b[?25h\r\n");
    std::fprintf(stderr, "agentty attach: %s\r\n", farewell_.c_str());
    return exit_code_;
  }

 private:
  void do_read_socket() {
    ws_.async_read(buffer_, [this](beast::error_code ec, std::size_t) {
      if (ec == websocket::error::closed) {
        // The server says why when it ends the connection itself.
        const auto& said = ws_.reason().reason;
        auto reason = std::string(said.data(), said.size());
        return quit("the server closed the connection" + (reason.empty() ? "" : ": " + reason), 0);
      }
      if (ec) return quit("connection lost: " + ec.message(), 1);
      std::string message = beast::buffers_to_string(buffer_.data());
      buffer_.consume(buffer_.size());
      if (ws_.got_text()) {
        on_control(message);
      } else {
        on_output(message);
      }
      if (!done_) do_read_socket();
    });
  }

  void on_output(std::string_view bytes) {
    if (!snapshot_next_) return write_stdout(bytes);
    // This terminal keeps its own history: the snapshot's copy would repeat
    // it on every resync.
    write_stdout(wire::without_scrollback(bytes, snapshot_scrollback_bytes_));
    snapshot_next_ = false;
    // A snapshot starts with a reset, which wiped our help and status.
    notice(held_by_you_ ? "you hold it: your keys go to the program. Ctrl-] t: release, "
                          "Ctrl-] d: detach"
                        : kHelp);
  }

  void on_control(std::string_view text) {
    auto message = wire::decode_server_message(text);
    if (!message) return;
    std::visit(Overloaded{
                   [&](const wire::ViewerState& state) { on_state(state); },
                   [&](const wire::Snapshot& snapshot) {
                     snapshot_next_ = true;
                     snapshot_scrollback_bytes_ = snapshot.scrollback_bytes;
                   },
                   [&](const wire::Refused& refused) { notice(refused.message); },
               },
               *message);
  }

  void on_state(const wire::ViewerState& state) {
    if (state.held_by_you != held_by_you_) {
      notice(state.held_by_you ? "you hold it now: your keys go to the program. Ctrl-] t: release"
                               : "released: read-only. Ctrl-] t: take over, Ctrl-] d: detach");
    } else if (!state.held_by_you && state.held_by && state.held_by != last_holder_) {
      notice("held by " + *state.held_by);
    }
    held_by_you_ = state.held_by_you;
    last_holder_ = state.held_by;
    if (state.status != "running") {
      quit("execution " + state.execution_id + " " + state.status +
           (state.exit_description.empty() ? "" : ": " + state.exit_description));
    }
  }

  // A transient status line on the terminal's bottom row (reverse video),
  // leaving the cursor where the program put it; the program's next drawing
  // of that row replaces it.
  void notice(const std::string& text) {
    auto size = local_size();
    if (!size) return write_stdout("\r\n[agentty] " + text + "\r\n");
    std::string line = "[agentty] " + text;
    if (line.size() > size->cols) line.resize(size->cols);
    write_stdout(
        "\x1b"
        "7\x1b[" +
        std::to_string(size->rows) + ";1H\x1b[0;7m" + line +
        "\x1b[0m\x1b[K\x1b"
        "8");
  }

  void do_read_stdin() {
    stdin_.async_read_some(asio::buffer(input_),
                           [this](boost::system::error_code ec, std::size_t n) {
                             if (ec) return quit("end of input");
                             on_keys(std::string_view(input_.data(), n));
                             if (!done_) do_read_stdin();
                           });
  }

  void on_keys(std::string_view keys) {
    std::string forward;
    for (char c : keys) {
      auto byte = static_cast<unsigned char>(c);
      if (prefix_pending_) {
        prefix_pending_ = false;
        if (byte == kAttachPrefixKey) {
          forward.push_back(c);
        } else if (c == 't' || c == 'T') {
          toggle_hold();
        } else if (c == 'd' || c == 'D' || c == 'q') {
          return quit("detached");
        }
        continue;
      }
      if (byte == kAttachPrefixKey) {
        prefix_pending_ = true;
        continue;
      }
      forward.push_back(c);
    }
    if (forward.empty()) return;
    if (held_by_you_) {
      queue(std::move(forward), true);
    } else {
      write_stdout("\a");  // read-only: a bell instead of silently eating keys
    }
  }

  void toggle_hold() {
    if (held_by_you_) return queue(wire::encode(wire::ClientMessage{wire::Release{}}), false);
    wire::TakeOver take{local_size(), std::string(wire::kClientAttach)};
    queue(wire::encode(wire::ClientMessage{take}), false);
  }

  void do_wait_winch() {
    winch_.async_wait([this](boost::system::error_code ec, int) {
      if (ec) return;
      if (held_by_you_) {
        if (auto size = local_size())
          queue(wire::encode(wire::ClientMessage{wire::Resize{*size}}), false);
      }
      do_wait_winch();
    });
  }

  void queue(std::string bytes, bool binary) {
    if (done_) return;
    outbox_.emplace_back(std::move(bytes), binary);
    if (!writing_) do_write();
  }

  void do_write() {
    writing_ = true;
    ws_.binary(outbox_.front().second);
    ws_.async_write(asio::buffer(outbox_.front().first), [this](beast::error_code ec, std::size_t) {
      writing_ = false;
      outbox_.pop_front();
      if (ec) return quit("connection lost: " + ec.message(), 1);
      if (!outbox_.empty() && !done_) do_write();
    });
  }

  void quit(std::string farewell, int code = 0) {
    if (done_) return;
    done_ = true;
    farewell_ = std::move(farewell);
    exit_code_ = code;
    // Closing the socket ends our hold on the server; no need to wait for a close handshake.
    boost::system::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    stdin_.close(ignored);
    winch_.cancel(ignored);
    quit_signals_.cancel(ignored);
  }

  AttachTarget target_;
  asio::io_context io_;
  websocket::stream<beast::tcp_stream> ws_;
  asio::posix::stream_descriptor stdin_;
  asio::signal_set winch_;
  asio::signal_set quit_signals_;
  beast::flat_buffer buffer_;
  std::array<char, 4096> input_{};
  std::deque<std::pair<std::string, bool>> outbox_;
  bool writing_ = false;
  bool held_by_you_ = false;
  std::optional<std::string> last_holder_;
  bool prefix_pending_ = false;
  bool snapshot_next_ = false;
  std::uint64_t snapshot_scrollback_bytes_ = 0;
  bool done_ = false;
  int exit_code_ = 0;
  std::string farewell_;
};

}  // namespace

int run_attach(const AttachOptions& options) {
  auto target = resolve_attach_target(options);
  if (!target) {
    std::fprintf(stderr, "agentty attach: %s\n", target.error().c_str());
    return 2;
  }
  AttachSession session(*target);
  if (auto connected = session.connect(); !connected) {
    std::fprintf(stderr, "agentty attach: %s\n", connected.error().c_str());
    return 1;
  }
  return session.run();
}

}  // namespace agentty::web
