#include "pty/ssh_connection.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fcntl.h>
#include <libssh/server.h>  // ssh_send_keepalive: usable by clients too
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/ascii_case.hpp"
#include "base/log.hpp"
#include "pty/ssh_channel.hpp"

namespace agentty::pty {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto kToken = asio::as_tuple(asio::use_awaitable);

// The line that records a host's key by hand; the file's directory may not
// exist yet (a fresh account has no ~/.ssh), and >> would then fail.
std::string keyscan_command(const std::string& host, unsigned port, const std::string& file) {
  std::string dir = std::filesystem::path(file).parent_path().string();
  std::string scan =
      "ssh-keyscan -p " + std::to_string(port) + " " + shell_word(host) + " >> " + shell_word(file);
  return dir.empty() ? scan : "mkdir -p -m 700 " + shell_word(dir) + " && " + scan;
}

std::string seconds_text(std::chrono::seconds s) {
  return std::to_string(s.count()) + " s";
}

// A connection or login that did not finish in time, with what to check.
SshError timed_out(std::chrono::seconds limit, std::string_view doing,
                   const std::string& description) {
  return SshError{SshErrorKind::connect_failed,
                  "timed out after " + seconds_text(limit) + " " + std::string(doing) + " " +
                      description +
                      " (check that the host is up and reachable from this machine and that an "
                      "SSH server answers on that port; a firewall that drops packets looks "
                      "like this)"};
}

// Owns the C strings and keys libssh hands out.
struct CharFree {
  void operator()(char* p) const { ssh_string_free_char(p); }
};
using LibsshString = std::unique_ptr<char, CharFree>;
struct KeyFree {
  void operator()(ssh_key k) const { ssh_key_free(k); }
};
using LibsshKey = std::unique_ptr<ssh_key_struct, KeyFree>;

// Whether an ssh config file sets BindAddress (libssh applies it, and gives
// no way to read it back, so the connect is left to libssh then).
bool config_binds_address(const std::string& path) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  return ascii_lowercase(text.str()).find("bindaddress") != std::string::npos;
}

}  // namespace

std::string libssh_option(ssh_session session, ssh_options_e option) {
  char* value = nullptr;
  if (ssh_options_get(session, option, &value) != SSH_OK || value == nullptr) return {};
  LibsshString owned(value);
  return owned.get();
}

SshConnection::SshConnection(asio::io_context& io, const SshOptions& options, ssh_session session,
                             std::string description)
    : io_(io),
      options_(options),
      session_(session),
      description_(std::move(description)),
      progress_(io, Clock::time_point::max()),
      kick_(io, Clock::time_point::max()),
      keepalive_(io),
      login_wakeup_(io, Clock::time_point::max()) {
  ssh_set_blocking(session_, 0);
  ssh_set_counters(session_, &counter_, nullptr);
}

SshConnection::~SshConnection() {
  for (auto& channel : channels_) free_channel(*channel);
  if (socket_) socket_->release();  // libssh owns the fd
  if (event_) {
    ssh_event_remove_session(event_, session_);
    ssh_event_free(event_);
  }
  if (session_) {
    ssh_disconnect(session_);
    ssh_free(session_);
  }
}

void SshConnection::start() {
  asio::co_spawn(io_, establish(), asio::detached);
}

asio::awaitable<SshExpected<bool>> SshConnection::wait_ready() {
  // awaiting_login counts as ready here: the pool hands out pending channels.
  while (state_ == State::connecting) co_await progress_.async_wait(kToken);
  if (state_ == State::failed) co_return *failure_;
  co_return true;
}

asio::awaitable<void> SshConnection::establish() {
  auto self = shared_from_this();
  const auto deadline = Clock::now() + options_.connect_timeout;
  auto step = co_await connect_socket(deadline);
  if (step) step = verify_host_key();
  if (step) step = co_await authenticate(deadline);
  if (!step && step.failure().kind == SshErrorKind::needs_human_auth && options_.human_login &&
      state_ != State::failed)
    step = co_await log_in_by_hand();
  if (state_ == State::failed) co_return;  // shut down meanwhile
  if (!step) {
    fail(step.failure().kind, step.error());
    co_return;
  }
  become_ready();
}

void SshConnection::become_ready() {
  event_ = ssh_event_new();
  if (event_ == nullptr || ssh_event_add_session(event_, session_) != SSH_OK) {
    fail(SshErrorKind::connect_failed, "ssh_event_add_session failed for " + description_);
    return;
  }
  state_ = State::ready;
  last_received_ = Clock::now();
  bytes_seen_ = counter_.in_bytes;
  asio::co_spawn(io_, pump_loop(), asio::detached);
  asio::co_spawn(io_, keepalive_loop(), asio::detached);
  progress_.cancel();
  open_pending_channels();
}

bool SshConnection::libssh_must_connect() const {
  if (!options_.config_file.empty()) return config_binds_address(options_.config_file);
  // The files libssh reads: ~ is the account's home, as libssh expands it.
  const std::string home = libssh_home();
  return (!home.empty() && config_binds_address(home + "/.ssh/config")) ||
         config_binds_address("/etc/ssh/ssh_config");
}

// Resolves and connects with Asio (ssh_connect would run getaddrinfo and
// block the loop), then hands libssh the connected socket.
asio::awaitable<SshExpected<bool>> SshConnection::connect_tcp(Clock::time_point deadline) {
  const std::string host = libssh_option(session_, SSH_OPTIONS_HOST);
  unsigned port = 22;
  ssh_options_get_port(session_, &port);
  // Shared with the timer's handler, which may run after this frame is gone.
  struct Attempt {
    explicit Attempt(asio::io_context& io) : resolver(io), socket(io) {}
    asio::ip::tcp::resolver resolver;
    asio::ip::tcp::socket socket;
    bool timed_out = false;
    bool done = false;
  };
  auto attempt = std::make_shared<Attempt>(io_);
  // Resolver operations do not support per-operation cancellation: cancel by hand.
  asio::steady_timer timer(io_, deadline);
  timer.async_wait([attempt](boost::system::error_code ec) {
    if (ec || attempt->done) return;
    attempt->timed_out = true;
    attempt->resolver.cancel();
    boost::system::error_code ignored;
    attempt->socket.close(ignored);
  });
  auto timeout_error = [&] {
    return timed_out(options_.connect_timeout, "connecting to", description_);
  };
  auto [resolve_error, endpoints] = co_await attempt->resolver.async_resolve(
      host, std::to_string(port), asio::ip::resolver_base::numeric_service, kToken);
  if (attempt->timed_out) co_return timeout_error();
  if (resolve_error)
    co_return SshError{SshErrorKind::connect_failed,
                       "cannot resolve " + host + ": " + resolve_error.message() +
                           " (check the host name, or name a Host alias of the ssh config "
                           "whose HostName resolves)"};
  auto [connect_error, endpoint] = co_await asio::async_connect(attempt->socket, endpoints, kToken);
  attempt->done = true;
  if (attempt->timed_out) co_return timeout_error();
  if (state_ == State::failed) co_return *failure_;
  if (connect_error) {
    const bool refused = connect_error == asio::error::connection_refused;
    co_return SshError{
        SshErrorKind::connect_failed,
        "cannot connect to " + description_ + ": " + connect_error.message() +
            (refused ? " (nothing listens on port " + std::to_string(port) +
                           " there: check the port, as user@host:port or Port in the ssh "
                           "config, and that the SSH server runs)"
                     : " (check that the host is up and reachable from this machine)")};
  }
  // Keystrokes and small requests must not wait for Nagle + delayed ACK (~40 ms).
  boost::system::error_code ignored;
  attempt->socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  socket_t fd = attempt->socket.release();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (ssh_options_set(session_, SSH_OPTIONS_FD, &fd) != SSH_OK) {
    ::close(fd);
    co_return SshError{SshErrorKind::connect_failed, "libssh refused the connected socket"};
  }
  co_return true;  // libssh owns the fd now and closes it
}

asio::awaitable<SshExpected<bool>> SshConnection::connect_socket(Clock::time_point deadline) {
  // When we made the TCP connection, a failure is the SSH handshake's.
  if (auto proxied = start_proxy(); !proxied) co_return proxied;
  const bool tcp_is_ours = !proxy_ && !libssh_must_connect();
  if (tcp_is_ours) {
    auto connected = co_await connect_tcp(deadline);
    if (!connected) co_return connected;
  }
  for (;;) {
    int rc = ssh_connect(session_);
    if (rc == SSH_OK) co_return true;
    if (rc == SSH_ERROR)
      co_return SshError{SshErrorKind::connect_failed,
                         "cannot connect to " + description_ + ": " + ssh_get_error(session_) +
                             (tcp_is_ours ? handshake_hint() : proxy_hint())};
    if (!socket_) {
      int fd = ssh_get_fd(session_);
      if (fd < 0) co_return SshError{SshErrorKind::connect_failed, "libssh gave no socket"};
      socket_.emplace(io_, fd);
    }
    if (Clock::now() >= deadline) {
      auto late = timed_out(options_.connect_timeout, "connecting to", description_);
      if (const auto hint = proxy_hint(); !hint.empty())
        late.message = "timed out after " + seconds_text(options_.connect_timeout) +
                       " connecting to " + description_ + hint;
      co_return late;
    }
    co_await wait_socket(deadline);
    if (state_ == State::failed) co_return *failure_;
  }
}

std::string SshConnection::handshake_hint() const {
  const char* banner = ssh_get_serverbanner(session_);
  // OpenSSH drops a connection before its banner while too many are not yet
  // logged in (MaxStartups, often beside a pending password login), or for a
  // while after failed logins from this address (PerSourcePenalties).
  if (banner == nullptr)
    return " (the TCP connection was made but the server closed it before the SSH handshake: "
           "an SSH server does so while too many connections are not yet logged in (OpenSSH's "
           "MaxStartups) or after failed logins from here (PerSourcePenalties, fail2ban): try "
           "again in a moment; or is that port an SSH server's?)";
  if (!std::string_view(banner).starts_with("SSH-"))
    return " (the TCP connection was made but the SSH handshake failed: is that port an SSH "
           "server's?)";
  return " (the server answered as SSH but the handshake failed: see the reason)";
}

SshExpected<bool> SshConnection::verify_host_key() {
  ssh_key raw_key = nullptr;
  if (ssh_get_server_publickey(session_, &raw_key) != SSH_OK)
    return SshError{SshErrorKind::connect_failed, "no host key from " + description_};
  LibsshKey key(raw_key);
  unsigned char* hash = nullptr;
  size_t hash_len = 0;
  std::string fingerprint = "?";
  if (ssh_get_publickey_hash(key.get(), SSH_PUBLICKEY_HASH_SHA256, &hash, &hash_len) == 0) {
    LibsshString text(ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hash_len));
    if (text) fingerprint = text.get();
    ssh_clean_pubkey_hash(&hash);
  }
  fingerprint = std::string(ssh_key_type_to_char(ssh_key_type(key.get()))) + " " + fingerprint;
  std::string file = libssh_option(session_, SSH_OPTIONS_KNOWNHOSTS);
  if (file.empty()) file = "~/.ssh/known_hosts";
  unsigned port = 22;
  ssh_options_get_port(session_, &port);
  const std::string host = libssh_option(session_, SSH_OPTIONS_HOST);

  switch (ssh_session_is_known_server(session_)) {
    case SSH_KNOWN_HOSTS_OK:
      return true;
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (options_.accept_new) {
        if (ssh_session_update_known_hosts(session_) != SSH_OK)
          return SshError{SshErrorKind::connect_failed, "cannot record the host key of " +
                                                            description_ + " in " + file + ": " +
                                                            ssh_get_error(session_)};
        spdlog::info("ssh: recorded new host key for {} ({}) in {}", description_, fingerprint,
                     file);
        return true;
      }
      return SshError{SshErrorKind::host_key_unknown,
                      "host key of " + description_ + " is not known: " + fingerprint +
                          ". If that fingerprint is right, trust it by setting "
                          "AGENTTY_SSH_ACCEPT_NEW=1 (records it in " +
                          file + " like OpenSSH's accept-new) or by running: " +
                          keyscan_command(host, port, file)};
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      return SshError{SshErrorKind::host_key_changed,
                      "HOST KEY CHANGED for " + description_ + ": it now presents " + fingerprint +
                          ", which does not match " + file +
                          ". This can be an attack; refused. If the host was really reinstalled, "
                          "remove the old key with: ssh-keygen -R '" +
                          known_hosts_name(host, port) + "' -f " + shell_word(file)};
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return SshError{SshErrorKind::connect_failed, "cannot check the host key of " + description_ +
                                                        " against " + file + ": " +
                                                        ssh_get_error(session_)};
  }
}

asio::awaitable<int> SshConnection::retry_auth(std::function<int()> call,
                                               Clock::time_point deadline) {
  co_return co_await retry_while_again(std::move(call), SSH_AUTH_AGAIN, deadline);
}

template <class Call>
asio::awaitable<int> SshConnection::retry_while_again(Call call, int again,
                                                      Clock::time_point deadline) {
  int rc = call();
  while (rc == again && state_ != State::failed && Clock::now() < deadline) {
    co_await wait_socket(deadline);
    if (state_ == State::failed) break;
    rc = call();
  }
  co_return rc;
}

asio::awaitable<SshExpected<bool>> SshConnection::authenticate(Clock::time_point deadline) {
  auto attempt = [&](auto call) { return retry_while_again(call, SSH_AUTH_AGAIN, deadline); };
  auto outcome = [&](int rc) -> std::optional<SshExpected<bool>> {
    if (state_ == State::failed) return *failure_;
    if (rc == SSH_AUTH_SUCCESS) return true;
    if (rc == SSH_AUTH_AGAIN)
      return timed_out(options_.connect_timeout, "logging in to", description_);
    if (rc == SSH_AUTH_ERROR)
      return SshError{SshErrorKind::connect_failed,
                      "login to " + description_ + " failed: " + ssh_get_error(session_)};
    return std::nullopt;  // denied or partial: try the next method
  };
  int rc = co_await attempt([this] { return ssh_userauth_none(session_, nullptr); });
  if (auto done = outcome(rc)) co_return *done;
  int& methods = auth_methods_;
  methods = ssh_userauth_list(session_, nullptr);
  if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
    // The agent first, then ~/.ssh/id_*, IdentityFile lines and explicit identities.
    rc = co_await attempt(
        [this] { return ssh_userauth_publickey_auto(session_, nullptr, nullptr); });
    if (auto done = outcome(rc)) co_return *done;
    methods = ssh_userauth_list(session_, nullptr);
  }
  // libssh skips a key file with a passphrase (nothing here can ask for it).
  constexpr const char* kPassphraseNote =
      " A key with a passphrase is used only through ssh-agent (ssh-add it, with SSH_AUTH_SOCK "
      "in agentty's environment).";
  if (methods & (SSH_AUTH_METHOD_PASSWORD | SSH_AUTH_METHOD_INTERACTIVE))
    co_return SshError{
        SshErrorKind::needs_human_auth,
        "no key was accepted by " + description_ +
            "; it offers password or keyboard-interactive login, which needs a person" +
            (options_.human_login
                 ? std::string(". Install a key instead (ssh-copy-id) or log in by hand.")
                 : std::string(" at the execution's terminal page, and agentty runs without its "
                               "web server (--no-web, AGENTTY_NO_WEB), so nobody could type it. "
                               "Install a key instead (ssh-copy-id), or run agentty with the web "
                               "server.")) +
            kPassphraseNote};
  std::string tried = "ssh-agent, ~/.ssh/id_* and IdentityFile keys";
  for (const auto& identity : options_.identity_files) tried += ", " + identity;
  co_return SshError{SshErrorKind::auth_failed,
                     "no key was accepted by " + description_ + " (tried " + tried +
                         "). Add the public key to the server's authorized_keys or name the "
                         "right key with IdentityFile." +
                         kPassphraseNote};
}

asio::awaitable<void> SshConnection::wait_socket(Clock::time_point deadline) {
  asio::steady_timer timer(io_, deadline);
  if (!socket_) co_return;
  if (ssh_get_poll_flags(session_) & SSH_WRITE_PENDING)
    co_await (socket_->async_wait(asio::posix::descriptor_base::wait_read, kToken) ||
              socket_->async_wait(asio::posix::descriptor_base::wait_write, kToken) ||
              kick_.async_wait(kToken) || timer.async_wait(kToken));
  else
    co_await (socket_->async_wait(asio::posix::descriptor_base::wait_read, kToken) ||
              kick_.async_wait(kToken) || timer.async_wait(kToken));
}

asio::awaitable<void> SshConnection::wait_progress(Clock::time_point deadline) {
  asio::steady_timer timer(io_, deadline);
  co_await (progress_.async_wait(kToken) || timer.async_wait(kToken));
}

asio::awaitable<void> SshConnection::pump_loop() {
  auto self = shared_from_this();
  while (state_ == State::ready) {
    co_await wait_socket(Clock::time_point::max());
    if (state_ != State::ready) break;
    pump();
  }
}

void SshConnection::pump() {
  // Bounded, so one busy connection yields to the rest of the loop.
  for (int round = 0; round < 64 && state_ == State::ready; ++round) {
    int rc = ssh_event_dopoll(event_, 0);
    after_call();
    if (rc != SSH_OK) break;  // SSH_AGAIN: nothing ready; errors are seen by after_call
  }
}

bool SshConnection::fail_if_silent(Clock::duration limit) {
  const auto silence = Clock::now() - last_received_;
  if (state_ != State::ready || silence < limit) return false;
  fail(SshErrorKind::connection_lost,
       "connection to " + description_ + " lost: nothing received for " +
           seconds_text(std::chrono::duration_cast<std::chrono::seconds>(silence)) +
           " despite keepalives (the host or the network stopped answering)");
  return true;
}

asio::awaitable<void> SshConnection::keepalive_loop() {
  auto self = shared_from_this();
  const auto silence_limit = options_.keepalive * std::max(1, options_.keepalive_max_missed);
  while (state_ == State::ready) {
    keepalive_.expires_after(options_.keepalive);
    co_await keepalive_.async_wait(kToken);
    if (state_ != State::ready || fail_if_silent(silence_limit)) break;
    send_keepalive();
    after_call();
  }
}

void SshConnection::send_keepalive() {
  // The first call collects the previous answer, the second sends anew
  // (libssh keeps one global request in flight).
  ssh_send_keepalive(session_);
  ssh_send_keepalive(session_);
}

bool SshConnection::session_dead() const {
  return ssh_is_connected(session_) == 0 ||
         (ssh_get_status(session_) & (SSH_CLOSED | SSH_CLOSED_ERROR)) != 0;
}

void SshConnection::after_call(bool deliver_now) {
  if (state_ == State::failed) return;
  if (state_ == State::ready && session_dead()) {
    fail(SshErrorKind::connection_lost,
         "connection to " + description_ + " lost: " + ssh_get_error(session_) + proxy_hint());
    return;
  }
  flush_outboxes();
  if (deliver_now)
    deliver();
  else
    schedule_deliver();
  if (state_ == State::failed) return;
  // Last: the calls above may have read packets too (replies someone awaits).
  if (counter_.in_bytes != bytes_seen_) {
    bytes_seen_ = counter_.in_bytes;
    last_received_ = Clock::now();
    progress_.cancel();  // openers waiting for a reply look again
  }
  if (state_ == State::ready && (ssh_get_poll_flags(session_) & SSH_WRITE_PENDING)) kick_.cancel();
}

void SshConnection::fail(SshErrorKind kind, const std::string& reason) {
  if (state_ == State::failed) return;
  auto self = shared_from_this();
  const bool was_ready = state_ == State::ready;
  state_ = State::failed;
  failure_ = SshError{kind, reason};
  if (was_ready && kind != SshErrorKind::shut_down) spdlog::warn("ssh: {}", reason);
  // What a program's execution says: it ran, so what next matters.
  const std::string channel_reason =
      kind == SshErrorKind::connection_lost
          ? reason +
                ". Its output until then is kept; the next execute or open on this host "
                "connects again"
          : reason;
  for (auto& channel : channels_) {
    if (!channel->remote_closed) channel->failure_reason = channel_reason;
    channel->remote_closed = true;
    free_channel(*channel);
  }
  if (socket_) {
    socket_->release();  // cancels the waits; libssh owns the fd
    socket_.reset();
  }
  if (event_) {
    ssh_event_remove_session(event_, session_);
    ssh_event_free(event_);
    event_ = nullptr;
  }
  ssh_disconnect(session_);
  ssh_free(session_);
  session_ = nullptr;
  proxy_.reset();  // its socket is closed: end and reap it now
  keepalive_.cancel();
  kick_.cancel();
  progress_.cancel();
  login_wakeup_.cancel();
  if (auto notify = std::exchange(on_failed, nullptr)) notify();
  schedule_deliver();  // on_exit never runs inside the caller's own call
}

}  // namespace agentty::pty
