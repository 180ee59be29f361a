// agentty: terminal sessions for AI agents and the humans who supervise them.
// Parses the command line (CLI11; every option also reads an AGENTTY_*
// variable) and hands over to server_app.
#include <pwd.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "agentty_version.hpp"
#include "base/log.hpp"
#include "base/path_search.hpp"
#include "server_app.hpp"
#include "session/policy.hpp"
#include "web/attach_client.hpp"

namespace {

// Without HOME (a service manager, cron, `env -i`) the home comes from the
// password database, as bash and ssh find it: the fallback to a shared
// /tmp/agentty let every user's server use a directory whoever made it first
// owned. Only a user with no home at all gets a directory in /tmp, named by
// uid.
std::filesystem::path default_state_dir() {
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "agentty";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".local/state/agentty";
  if (const passwd* entry = ::getpwuid(::getuid()); entry && entry->pw_dir && *entry->pw_dir)
    return std::filesystem::path(entry->pw_dir) / ".local/state/agentty";
  return std::filesystem::temp_directory_path() / ("agentty-" + std::to_string(::getuid()));
}

// --shell must name a program that can run: found in PATH like execvp does,
// or a path to an executable file. Empty when it can.
std::string program_problem(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (agentty::is_executable_file(program)) return {};
    return "'" + program +
           "' is not an executable file; give the path of a shell such as /bin/bash";
  }
  if (agentty::find_executable_in_path(program)) return {};
  return "'" + program + "' is not found in PATH; give the path of a shell such as /bin/bash";
}

// CLI11's NonNegativeNumber names a 300-digit maximum; and an unsigned
// option would take "-1" as its largest value.
std::string negative_problem(const std::string& value) {
  return value.starts_with('-') ? "must be 0 or more (got " + value + ")" : std::string();
}

// An empty --state-dir ended agentty in an uncaught filesystem_error (std::
// filesystem::absolute("")); the default is had by leaving the option out.
std::string empty_state_dir_problem(const std::string& value) {
  return value.empty() ? "must name a directory (made if missing); leave the option out for the "
                         "default"
                       : std::string();
}

std::string policy_variables_help() {
  std::string text = "\nOperator policy (environment only):\n";
  for (const auto& variable : agentty::session::policy_config_variables()) {
    text += "  " + std::string(variable.name) +
            "  (default: " + std::string(variable.default_value) + ")\n      " +
            std::string(variable.description) + "\n";
  }
  return text;
}

void add_server_options(CLI::App& command, agentty::AppOptions& options, agentty::LogOptions& log,
                        std::string& state_dir) {
  auto& tools = options.tools;
  command.add_option("--state-dir", state_dir, "Spool files, audit log and scripts live here")
      ->envname("AGENTTY_STATE_DIR")
      ->check(CLI::Validator(empty_state_dir_problem, ""))
      ->capture_default_str();
  command
      .add_option("--log-level", log.level,
                  "trace, debug, info, warn, error, off (logs go to stderr)")
      ->envname("AGENTTY_LOG_LEVEL")
      // spdlog reads a name it does not know as "off": a typo would silence every log.
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  command
      .add_option("--log-file", log.file,
                  "Also write logs to this file (mode 0600; at --log-file-max-bytes it is "
                  "rotated: agentty.log to agentty.1.log, keeping 3)")
      ->envname("AGENTTY_LOG_FILE");
  command
      .add_option("--log-file-max-bytes", log.file_max_bytes,
                  "Size at which the log file is rotated")
      ->envname("AGENTTY_LOG_FILE_MAX_BYTES")
      ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 40))
      ->capture_default_str();
  command
      .add_option("--audit-log", options.audit_log,
                  "JSON-lines audit log (default: STATE_DIR/audit.jsonl)")
      ->envname("AGENTTY_AUDIT_LOG");
  command
      .add_option("--default-yield-ms", tools.default_yield_ms,
                  "execute waits this long inline before backgrounding")
      ->envname("AGENTTY_DEFAULT_YIELD_MS")
      ->check(CLI::Range(0, 55000))
      ->capture_default_str();
  command
      .add_option("--max-yield-ms", tools.max_yield_ms,
                  "Longest any call blocks: yield_ms and wait's timeout_ms above it are clamped "
                  "(the answer says so). Lower it for an MCP client whose requests time out "
                  "sooner than 55 s")
      ->envname("AGENTTY_MAX_YIELD_MS")
      ->check(CLI::Range(1000, 55000))
      ->capture_default_str();
  command
      .add_option("--default-timeout-ms", tools.default_timeout_ms,
                  "execute's run time limit when none is given (0 = none)")
      ->envname("AGENTTY_DEFAULT_TIMEOUT_MS")
      // execute's timeout_ms maximum (7 days); a negative value wrapped around.
      ->check(CLI::Range(0, 604800000))
      ->capture_default_str();
  command
      .add_option("--default-output-bytes", tools.default_max_output_bytes,
                  "Output bytes per response when the call sets none")
      ->envname("AGENTTY_DEFAULT_OUTPUT_BYTES")
      ->check(CLI::Range(1, 16 << 20))
      ->capture_default_str();
  command
      .add_option("--max-output-bytes", tools.max_output_bytes,
                  "Server cap on output bytes in one response")
      ->envname("AGENTTY_MAX_OUTPUT_BYTES")
      ->check(CLI::Range(1024, 16 << 20))
      ->capture_default_str();
  command
      .add_option("--ram-bytes", options.registry.execution.log.ram_bytes,
                  "RAM ring per execution (older output is read from the spool)")
      ->envname("AGENTTY_RAM_BYTES")
      ->check(CLI::Range(4096, 1 << 30))
      ->capture_default_str();
  command
      .add_option("--retention-ms", options.registry.retention,
                  "Ended executions are pruned after this long")
      ->envname("AGENTTY_RETENTION_MS")
      ->check(CLI::Validator(negative_problem, "NONNEGATIVE"))
      ->capture_default_str();
  command
      .add_option("--max-retained", options.registry.max_retained, "Ended executions kept at most")
      ->envname("AGENTTY_MAX_RETAINED")
      ->check(CLI::Validator(negative_problem, "NONNEGATIVE"))
      ->capture_default_str();
  command
      .add_option("--default-cwd", tools.default_cwd,
                  "Working directory when a call gives none (default: the server's)")
      ->envname("AGENTTY_DEFAULT_CWD")
      // Else every execute without cwd fails, blaming a cwd the agent never gave.
      ->check(CLI::ExistingDirectory);
  command.add_option("--shell", tools.default_shell, "Shell that runs `command` strings")
      ->envname("AGENTTY_SHELL")
      ->check(CLI::Validator(program_problem, "PROGRAM"))
      ->capture_default_str();
  command
      .add_option(
          "--web-listen", options.web_listen,
          "Web terminal address, loopback by default. Another address makes the pages reachable "
          "from other machines (the secret is still required; with 0.0.0.0, only loopback Host "
          "names are accepted). The next free port is used if taken")
      ->envname("AGENTTY_WEB_LISTEN")
      ->capture_default_str();
  command
      .add_option("--web-stream-rate", options.web_stream_rate,
                  "Bytes per second (after a 1 MiB burst) above which web viewers get 10 screens "
                  "a second instead of every byte; lower it for viewers on a slow link")
      ->envname("AGENTTY_WEB_STREAM_RATE")
      ->check(CLI::Range(std::size_t{65536}, std::size_t{1} << 30))
      ->capture_default_str();
  // Flag callbacks, not "!" negations: CLI11's help shows those as "--no-web{false}".
  command
      .add_flag_callback(
          "--no-web", [&options] { options.web_enabled = false; }, "Do not start the web terminal")
      ->envname("AGENTTY_NO_WEB");
  command
      .add_flag_callback(
          "--no-spare-terminal", [&options] { options.registry.spare_terminal = false; },
          "Do not keep a PTY and its supervisor started ahead of the next local program "
          "(saves a process and a PTY; each execute then starts ~2 ms slower)")
      ->envname("AGENTTY_NO_SPARE_TERMINAL");
  command.footer(
      policy_variables_help() +
      "\nAlso read: AGENTTY_WEB_TOKEN (fixed web secret instead of a random one),\n"
      "AGENTTY_SSH_KNOWN_HOSTS, AGENTTY_SSH_CONFIG, AGENTTY_SSH_ACCEPT_NEW=1 (remote hosts).\n");
}

// `agentty attach URL#token=SECRET` has the secret in argv, which every user
// of the machine can read (ps, /proc/PID/cmdline) for as long as attach runs:
// overwritten in place once parsed (/proc shows the changed memory).
void hide_secrets_in_arguments(int argc, char** argv) {
  constexpr std::string_view kKey = "token=";
  for (int i = 1; i < argc; ++i) {
    for (char* at = std::strstr(argv[i], kKey.data()); at; at = std::strstr(at, kKey.data())) {
      at += kKey.size();
      for (; *at && *at != '&'; ++at) *at = '*';
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "agentty " AGENTTY_VERSION
      ": terminal sessions for AI agents and the humans who supervise them.\n"
      "Runs commands under real PTYs for an MCP client, and shows every one live in the browser,\n"
      "where a person can watch and take over."};
  app.set_version_flag("--version", "agentty " AGENTTY_VERSION);
  app.require_subcommand(1);

  // Each subcommand fills its own copy: CLI11 reads the AGENTTY_* variables
  // of every subcommand, also one not given, and runs their callbacks, so
  // with one shared copy serve's options, set from the environment, wrote
  // over what `agentty mcp --log-level debug` said on its command line.
  struct ServerSettings {
    agentty::AppOptions options;
    agentty::LogOptions log;
    std::string state_dir;
  };
  const std::string default_dir = default_state_dir().string();
  ServerSettings mcp_settings, serve_settings;
  mcp_settings.state_dir = serve_settings.state_dir = default_dir;

  auto* mcp = app.add_subcommand("mcp", "Serve MCP over stdio (what an MCP client launches)");
  add_server_options(*mcp, mcp_settings.options, mcp_settings.log, mcp_settings.state_dir);
  auto* serve =
      app.add_subcommand("serve", "Run the web dashboard and print how to connect an MCP client");
  add_server_options(*serve, serve_settings.options, serve_settings.log, serve_settings.state_dir);

  agentty::web::AttachOptions attach_options;
  auto* attach = app.add_subcommand("attach",
                                    "Watch or take over an execution from this terminal (Ctrl-] t: "
                                    "take over/release, Ctrl-] d: detach)");
  attach
      ->add_option("target", attach_options.target,
                   "An execution's terminal_url, or its execution_id with --url")
      ->required();
  attach
      ->add_option("--url", attach_options.url,
                   "The server's dashboard URL (when target is an execution_id)")
      ->envname("AGENTTY_WEB_URL");

  CLI11_PARSE(app, argc, argv);
  if (attach->parsed()) {
    hide_secrets_in_arguments(argc, argv);
    if (const char* token = std::getenv("AGENTTY_WEB_TOKEN")) attach_options.token = token;
    return agentty::web::run_attach(attach_options);
  }
  auto& [options, log, state_dir] = mcp->parsed() ? mcp_settings : serve_settings;
  if (options.tools.default_yield_ms > options.tools.max_yield_ms) {
    // A default left as it is follows a lower cap; one given above it is a mistake.
    if ((mcp->parsed() ? mcp : serve)->count("--default-yield-ms") == 0) {
      options.tools.default_yield_ms = options.tools.max_yield_ms;
    } else {
      std::cerr << "--default-yield-ms " << options.tools.default_yield_ms
                << " is above --max-yield-ms " << options.tools.max_yield_ms
                << ": lower the default or raise the maximum.\n";
      return 2;
    }
  }
  if (options.tools.default_max_output_bytes > options.tools.max_output_bytes) {
    // Else the tools would promise a default their own maximum refuses.
    std::cerr << "--default-output-bytes " << options.tools.default_max_output_bytes
              << " is above --max-output-bytes " << options.tools.max_output_bytes
              << ": lower the default or raise the maximum.\n";
    return 2;
  }
  options.web_token = std::getenv("AGENTTY_WEB_TOKEN") ? std::getenv("AGENTTY_WEB_TOKEN") : "";
  // Every program agentty runs inherits its environment: `env` there printed
  // the secret into the output, the recording and the agent's context.
  ::unsetenv("AGENTTY_WEB_TOKEN");
  options.registry.state_dir = state_dir;
  // What serve tells a client to run: an `agentty mcp` that shares its state
  // directory (absolute: the client starts it elsewhere), so the dashboard lists it.
  if (state_dir != default_dir) {
    options.mcp_args.insert(options.mcp_args.end(),
                            {"--state-dir", std::filesystem::absolute(state_dir).string()});
  }
  options.tools.state_dir = state_dir;
  if (auto logging = agentty::init_logging(log); !logging) {
    std::cerr << logging.error() << "\n";
    return 2;
  }
  if (mcp->parsed()) return agentty::run_mcp_server(options);
  return agentty::run_web_only(options);
}
