#include "server_app.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "agentty_version.hpp"
#include "base/private_dir.hpp"
#include "mcp/mcp_server.hpp"
#include "mcp/message_salvage.hpp"
#include "mcp/stdio_transport.hpp"
#include "pty/ssh_target.hpp"
#include "session/audit_log.hpp"
#include "session/policy.hpp"
#include "session/redactor.hpp"
#include "session/side_effects.hpp"
#include "web/server_directory.hpp"
#include "web/web_server.hpp"

#include <fcntl.h>
#include <unistd.h>

extern char** environ;

namespace agentty {

namespace {

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

// STATE_DIR/web-url names the last server started, while it lives: removed
// when that server stops, unless a later one has written its own since, so
// it never names a server that is gone (a dead secret and port).
struct WebUrlFile {
  WebUrlFile(std::filesystem::path path, std::string url)
      : path(std::move(path)), url(std::move(url)) {}
  WebUrlFile(const WebUrlFile&) = delete;  // one owner removes it
  WebUrlFile& operator=(const WebUrlFile&) = delete;
  ~WebUrlFile() {
    std::ifstream in(path);
    std::string line;
    if (std::getline(in, line) && line == url) ::unlink(path.c_str());
  }

  const std::filesystem::path path;
  const std::string url;
};

// Everything one server process owns, in construction order.
struct Server {
  boost::asio::io_context io{1};
  std::unique_ptr<session::Policy> policy;
  std::unique_ptr<session::AuditLog> audit;
  std::unique_ptr<session::Registry> registry;
  std::unique_ptr<web::WebServer> web;
  std::unique_ptr<web::ServerRegistration> directory_entry;  // STATE_DIR/servers/<pid>.json
  std::unique_ptr<WebUrlFile> url_file;
  bool stopping = false;

  std::string terminal_url(const std::string& id) const {
    return web ? web->terminal_url(id) : std::string();
  }

  // Ends every live execution, then stops the loop once they are gone (bounded).
  void shutdown(std::chrono::milliseconds grace) {
    if (stopping) return;
    stopping = true;
    directory_entry.reset();
    url_file.reset();
    if (web) web->stop();
    registry->shutdown(grace);
    boost::asio::co_spawn(
        io,
        [this, grace]() -> boost::asio::awaitable<void> {
          auto deadline =
              std::chrono::steady_clock::now() + grace + std::chrono::milliseconds(1500);
          for (auto& execution : registry->list()) {
            while (!execution->finished() && std::chrono::steady_clock::now() < deadline) {
              co_await execution->changed().wait_until(deadline);
            }
          }
          io.stop();
        },
        boost::asio::detached);
  }
};

Expected<web::WebOptions> parse_web_listen(const std::string& listen) {
  web::WebOptions options;
  auto colon = listen.rfind(':');
  if (colon == std::string::npos)
    return make_error("--web-listen: expected HOST:PORT (got '" + listen + "')");
  options.host = listen.substr(0, colon);
  if (options.host.size() > 2 && options.host.front() == '[')
    options.host = options.host.substr(1, options.host.size() - 2);
  try {
    int port = std::stoi(listen.substr(colon + 1));
    if (port < 0 || port > 65535) throw std::out_of_range("port");
    options.port = static_cast<std::uint16_t>(port);
  } catch (const std::exception&) {
    return make_error("--web-listen: the port must be a number from 0 to 65535 (got '" + listen +
                      "')");
  }
  options.port_fallback = options.port != 0;
  return options;
}

// The dashboard URL carries the secret: it goes to a new 0600 file, never to a
// log. Rewriting the old file in place kept its mode (0644 made by hand or an
// older agentty) and followed a symlink planted there.
std::unique_ptr<WebUrlFile> write_url_file(const std::filesystem::path& path,
                                           const std::string& url) {
  if (auto written = write_private_file(path, url + "\n"); !written) {
    spdlog::warn("web-url: {}", written.error());
    return nullptr;
  }
  return std::make_unique<WebUrlFile>(path, url);
}

// STATE_DIR holds what a session's shell sources and the scripts agentty runs:
// made 0700 whatever the umask. One the operator chose is left as it is, with
// a warning if others may write into it or it is another user's.
void prepare_state_dir(const std::filesystem::path& dir) {
  auto made = make_private_dir_if_missing(dir);
  if (!made) {
    spdlog::warn("state dir: {}", made.error());
  } else if (!made->empty()) {
    spdlog::warn(
        "state dir {}, who could replace what agentty keeps there (the scripts and shell rc "
        "files it runs); make it yours with mode 700 or choose another --state-dir",
        *made);
  }
}

// Publishes this server in STATE_DIR/servers so every dashboard lists it.
void publish_in_directory(Server& server, const std::filesystem::path& dir, const char* kind) {
  auto entry = web::ServerRegistration::publish(
      web::ServerDirectory(dir),
      web::ServerInfo::self(kind, server.web->dashboard_url(), server.web->port()));
  if (!entry) {
    spdlog::warn("server directory {}: {}; other dashboards will not list this server",
                 dir.string(), entry.error());
    return;
  }
  server.directory_entry = std::move(entry).value();
}

Expected<std::unique_ptr<Server>> make_server(AppOptions& options, const char* kind) {
  auto server = std::make_unique<Server>();
  if (!options.registry.state_dir.empty()) prepare_state_dir(options.registry.state_dir);
  auto env = environment();
  auto policy_config = session::PolicyConfig::from_environment(env);
  if (!policy_config) return make_error(policy_config.error());
  options.registry.execution.log.spool_cap_bytes = policy_config->max_spool_bytes;
  options.registry.max_total_spool_bytes = policy_config->max_total_spool_bytes;
  options.registry.max_live = policy_config->max_live_executions;
  options.max_request_bytes = policy_config->max_request_bytes;
  if (!policy_config->redact_env_regex.empty()) {
    auto secrets = session::SecretSet::create(policy_config->redact_env_regex);
    if (!secrets) return make_error(secrets.error());
    (*secrets)->add_from_environment();
    options.registry.secrets = std::move(secrets).value();
  }
  options.registry.recordings = {policy_config->max_recording_bytes, policy_config->max_recordings};
  options.tools.blocked_side_effects.clear();
  for (const auto& info : session::side_effect_table()) {
    if (policy_config->blocked_side_effects.contains(info.effect))
      options.tools.blocked_side_effects.emplace_back(info.name);
  }
  server->policy = std::make_unique<session::Policy>(policy_config.value());
  if (auto it = env.find("AGENTTY_SSH_KNOWN_HOSTS"); it != env.end())
    options.registry.ssh.known_hosts = it->second;
  if (auto it = env.find("AGENTTY_SSH_CONFIG"); it != env.end()) {
    // libssh reads a missing file as an empty one: every alias would then
    // fail as "cannot resolve" with nothing pointing at the typo. Paths
    // libssh expands itself (~, %d) are left to it.
    const std::string& path = it->second;
    if (!path.empty() && path.find_first_of("~%") == std::string::npos &&
        ::access(path.c_str(), R_OK) != 0)
      return make_error("AGENTTY_SSH_CONFIG='" + path + "': " + std::strerror(errno) +
                        ". Name an existing ssh config file, or unset it to read ~/.ssh/config "
                        "and /etc/ssh/ssh_config.");
    options.registry.ssh.config_file = path;
  }
  // A password login is typed by a person at the execution's terminal page:
  // with no web server nobody can, and the execution would sit held until
  // the host's LoginGraceTime ran out. Refuse such a host at once instead.
  options.registry.ssh.human_login = options.web_enabled;
  if (auto it = env.find("AGENTTY_SSH_ACCEPT_NEW"); it != env.end()) {
    // "true" read as no would leave every new host refused with no hint why.
    const std::string& value = it->second;
    if (value == "1" || value == "yes" || value == "true" || value == "on") {
      options.registry.ssh.accept_new = true;
    } else if (!value.empty() && value != "0" && value != "no" && value != "false" &&
               value != "off") {
      return make_error("AGENTTY_SSH_ACCEPT_NEW='" + value +
                        "': use 1 (or yes, true, on) to accept and record the keys of hosts not "
                        "yet known, or 0 (or no, false, off, or unset it) to refuse them.");
    }
  }
  std::string audit_path = options.audit_log.empty()
                               ? (options.registry.state_dir / "audit.jsonl").string()
                               : options.audit_log;
  session::AuditLogOptions audit_options;
  audit_options.path = audit_path;
  audit_options.follow_links = !options.audit_log.empty();
  if (!options.web_token.empty()) audit_options.secrets.push_back(options.web_token);
  if (auto secrets = options.registry.secrets)
    audit_options.redact = [secrets](std::string_view text) { return secrets->redact(text); };
  auto audit = session::AuditLog::open(audit_options);
  if (!audit) return make_error("audit log: " + audit.error());
  server->audit = std::move(audit).value();
  server->registry = std::make_unique<session::Registry>(server->io, options.registry);
  if (options.web_enabled) {
    auto web_options = parse_web_listen(options.web_listen);
    if (!web_options) return make_error(web_options.error());
    web_options->token = options.web_token;
    web_options->stream_rate_bytes = options.web_stream_rate;
    web_options->servers_dir = options.registry.state_dir / "servers";
    auto* audit_log = server->audit.get();
    web_options->audit = [audit_log](const nlohmann::json& record) { audit_log->record(record); };
    server->web =
        std::make_unique<web::WebServer>(server->io, *server->registry, web_options.value());
    if (auto started = server->web->start(); !started)
      return make_error("web terminal: " + started.error() + " (use --web-listen or --no-web)");
    server->url_file =
        write_url_file(options.registry.state_dir / "web-url", server->web->dashboard_url());
    publish_in_directory(*server, web_options->servers_dir, kind);
  }
  return server;
}

std::string self_path() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("agentty") : path.string();
}

// The MCP client config serve prints: JSON that parses whatever the paths hold.
std::string client_config(const std::string& program, const std::vector<std::string>& args) {
  std::string list;
  for (const auto& arg : args) list += (list.empty() ? "" : ", ") + nlohmann::json(arg).dump();
  return "{\"mcpServers\": {\"agentty\": {\"command\": " + nlohmann::json(program).dump() +
         ", \"args\": [" + list + "]}}}";
}

}  // namespace

int run_mcp_server(AppOptions options) {
  auto made = make_server(options, "mcp");
  if (!made) {
    std::cerr << "agentty: " << made.error() << "\n";
    return 2;
  }
  auto& server = *made.value();
  mcp::StdioTransport* transport_ptr = nullptr;
  mcp::McpServer::Hooks hooks;
  hooks.send = [&](std::string line) { transport_ptr->send(std::move(line)); };
  hooks.audit = [&](const mcp::json& record) { server.audit->record(record); };
  hooks.terminal_url = [&](const std::string& id) { return server.terminal_url(id); };
  mcp::McpServer mcp_server(server.io, *server.registry, options.tools, server.policy.get(), hooks);
  auto grace = std::chrono::milliseconds(options.shutdown_grace_ms);
  mcp::StdioTransport transport(
      server.io, options.max_request_bytes,
      {
          [&](std::string line) { mcp_server.handle_line(line); },
          [&](std::size_t size, std::string head, std::string tail) {
            mcp_server.reject(mcp::find_request_id(head, tail), mcp::rpc_error::invalid_request,
                              "Invalid Request: message of " + std::to_string(size) +
                                  " bytes exceeds the limit of " +
                                  std::to_string(options.max_request_bytes) +
                                  " bytes (AGENTTY_MAX_REQUEST_BYTES)");
          },
          [&] { server.shutdown(grace); },
      });
  transport_ptr = &transport;
  // SIGHUP too (a closed terminal, `kill -HUP`): its default action ended
  // agentty at once, leaving every program it ran as an orphan.
  boost::asio::signal_set signals(server.io, SIGINT, SIGTERM, SIGHUP);
  signals.async_wait([&](boost::system::error_code ec, int) {
    if (!ec) server.shutdown(grace);
  });
  std::signal(SIGPIPE, SIG_IGN);
  transport.start();
  spdlog::info("agentty {} MCP server on stdio; state in {}", AGENTTY_VERSION,
               options.registry.state_dir.string());
  if (server.web) {
    spdlog::info("web terminal on port {}; its URL (with the secret) is in {}", server.web->port(),
                 (options.registry.state_dir / "web-url").string());
  }
  server.io.run();
  return 0;
}

int run_web_only(AppOptions options) {
  if (!options.web_enabled) {
    std::cerr << "agentty: serve runs the web dashboard, so --no-web (or AGENTTY_NO_WEB) leaves "
                 "it nothing to do. Drop --no-web, or run `agentty mcp` (what an MCP client "
                 "starts) to serve MCP without the web terminal.\n";
    return 2;
  }
  auto made = make_server(options, "serve");
  if (!made) {
    std::cerr << "agentty: " << made.error() << "\n";
    return 2;
  }
  auto& server = *made.value();
  boost::asio::signal_set signals(server.io, SIGINT, SIGTERM, SIGHUP);
  signals.async_wait([&](boost::system::error_code ec, int) {
    if (!ec) server.shutdown(std::chrono::milliseconds(options.shutdown_grace_ms));
  });
  std::signal(SIGPIPE, SIG_IGN);
  if (server.web) {
    std::string claude_command;
    for (const auto& arg : options.mcp_args) claude_command += " " + pty::shell_word(arg);
    std::cout
        << "agentty " << AGENTTY_VERSION << " is running.\n\n"
        << "  Dashboard (watch and take over executions):\n    " << server.web->dashboard_url()
        << "\n\n"
        << "  Connect an MCP client (it starts its own agentty over stdio), e.g. in its config:\n"
        << "    " << client_config(self_path(), options.mcp_args) << "\n"
        << "    or: claude mcp add agentty -- " << pty::shell_word(self_path()) << claude_command
        << "\n\n"
        << "  Each MCP client starts its own agentty server, with its own dashboard. Your\n"
        << "  agents' servers appear on this dashboard under \"Agentty servers on this\n"
        << "  machine\", each with a link to its dashboard (same user and state directory:\n"
        << "    " << options.registry.state_dir.string() << ")\n"
        << "  The agent also gets each execution's page as terminal_url. Stop with Ctrl-C.\n"
        << std::flush;
  }
  server.io.run();
  return 0;
}

}  // namespace agentty
