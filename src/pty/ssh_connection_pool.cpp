// SshConnectionPool, and resolve_ssh_target: from what a person typed to a
// shared SshConnection.
#include <pwd.h>
#include <unistd.h>

#include "pty/ssh_channel.hpp"
#include "pty/ssh_connection.hpp"

namespace agentty::pty {

namespace asio = boost::asio;

std::string ResolvedTarget::describe() const {
  std::string text = user + "@";
  text += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return text + ":" + std::to_string(port);
}

SshExpected<ResolvedTarget> resolve_ssh_target(const SshTarget& target, const SshOptions& options) {
  ssh_session session = ssh_new();
  if (session == nullptr) return SshError{SshErrorKind::connect_failed, "ssh_new failed"};
  auto refuse = [&](const std::string& what) {
    std::string message = what + ": " + ssh_get_error(session);
    ssh_free(session);
    return SshError{SshErrorKind::bad_target, message};
  };
  if (ssh_options_set(session, SSH_OPTIONS_HOST, target.host.c_str()) != SSH_OK)
    return refuse("bad SSH host '" + target.host + "'");
  const char* config = options.config_file.empty() ? nullptr : options.config_file.c_str();
  if (ssh_options_parse_config(session, config) != SSH_OK)
    return refuse("cannot read ssh config " + options.config_file);
  // Explicit inputs win over the config, so they go on last.
  if (!target.user.empty() && ssh_options_set(session, SSH_OPTIONS_USER, target.user.c_str()) != 0)
    return refuse("bad SSH user '" + target.user + "'");
  if (target.port != 0 && ssh_options_set(session, SSH_OPTIONS_PORT, &target.port) != SSH_OK)
    return refuse("bad SSH port");
  int no_delay = 1;  // when libssh connects itself (ProxyCommand, BindAddress)
  ssh_options_set(session, SSH_OPTIONS_NODELAY, &no_delay);
  if (!options.known_hosts.empty() &&
      ssh_options_set(session, SSH_OPTIONS_KNOWNHOSTS, options.known_hosts.c_str()) != SSH_OK)
    return refuse("bad known_hosts path");
  for (const auto& identity : options.identity_files)
    if (ssh_options_set(session, SSH_OPTIONS_ADD_IDENTITY, identity.c_str()) != SSH_OK)
      return refuse("bad identity file " + identity);
  ResolvedTarget resolved;
  resolved.session = session;
  resolved.host = libssh_option(session, SSH_OPTIONS_HOST);
  resolved.user = libssh_option(session, SSH_OPTIONS_USER);
  resolved.proxy_command = libssh_option(session, SSH_OPTIONS_PROXYCOMMAND);
  unsigned port = 22;
  if (ssh_options_get_port(session, &port) == SSH_OK) resolved.port = static_cast<int>(port);
  if (resolved.user.empty()) {
    // libssh fills in the local user at connect time; the key needs it now.
    if (const passwd* entry = ::getpwuid(::getuid())) resolved.user = entry->pw_name;
  }
  return resolved;
}

SshConnectionPool::SshConnectionPool(asio::io_context& io, SshOptions options)
    : io_(io), options_(std::move(options)) {}

SshConnectionPool::~SshConnectionPool() {
  shutdown();
}

asio::awaitable<SshExpected<std::unique_ptr<SshChannel>>> SshConnectionPool::open_channel(
    SshTarget target, SshLaunch launch) {
  co_return co_await open_channel_on_connection(std::move(target), std::move(launch), true);
}

asio::awaitable<SshExpected<std::unique_ptr<SshChannel>>>
SshConnectionPool::open_channel_on_connection(SshTarget target, SshLaunch launch,
                                              bool retry_if_dead) {
  if (shut_down_) co_return SshError{SshErrorKind::shut_down, "the SSH pool is shut down"};
  auto resolved = resolve_ssh_target(target, options_);
  if (!resolved) co_return resolved.failure();
  Key key{resolved->user, resolved->host, resolved->port, resolved->proxy_command};
  std::shared_ptr<SshConnection> connection;
  const bool reused = connections_.contains(key);
  if (auto it = connections_.find(key); it != connections_.end()) {
    connection = it->second;
    ssh_free(resolved->session);
  } else {
    connection =
        std::make_shared<SshConnection>(io_, options_, resolved->session, resolved->describe());
    connections_.emplace(key, connection);
    connection->on_failed = [this, key, raw = connection.get()] {
      if (auto it = connections_.find(key); it != connections_.end() && it->second.get() == raw)
        connections_.erase(it);
    };
    connection->start();
  }
  auto ready = co_await connection->wait_ready();
  if (!ready) co_return ready.failure();
  if (connection->state() == SshConnection::State::awaiting_login)
    co_return connection->open_pending_channel(std::move(launch));
  SshLaunch again = launch;
  auto opened = co_await connection->open_channel(std::move(launch));
  // A shared connection can die silently (the network went away), found out
  // by its keepalives only while this open waited: nothing ran, so the open
  // is made again on a fresh connection, as a new `ssh` would.
  if (!opened && reused && retry_if_dead && opened.failure().nothing_started &&
      opened.failure().kind == SshErrorKind::connection_lost)
    co_return co_await open_channel_on_connection(std::move(target), std::move(again), false);
  co_return opened;
}

void SshConnectionPool::shutdown() {
  shut_down_ = true;
  auto connections = std::move(connections_);
  connections_.clear();
  for (auto& [key, connection] : connections) {
    connection->on_failed = nullptr;
    connection->fail(SshErrorKind::shut_down, "the SSH pool was shut down");
  }
}

}  // namespace agentty::pty
