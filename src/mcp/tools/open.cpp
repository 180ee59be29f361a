// open: start an interactive shell (bash, zsh, sh) under a PTY with
// agentty's prompt hook, and return once its first prompt is drawn. Over
// SSH the hook is typed into the login shell; when a person must log in
// first, open returns at once (held) and the hook follows the login.
#include "base/path_search.hpp"
#include "base/random_id.hpp"
#include "mcp/tools/common.hpp"
#include "mcp/tools/login_hook.hpp"
#include "mcp/tools/session_execute.hpp"
#include "session/policy.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

constexpr milliseconds kFirstPrompt{10000};

std::string find_in_path(const std::string& name) {
  return find_executable_in_path(name).value_or("");
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) out += (out.empty() ? "" : " ") + arg;
  return out;
}

// open(host) when no key logged in: the session is held until a person
// types the password on the web page. Answered at once, so the agent can
// tell someone and wait(until="released").
ToolResult held_for_login(ToolContext& ctx, session::Execution& execution) {
  json result = merged(execution_result(execution, ctx, read_request(ctx, json::object())),
                       session_fields(execution));
  result["shell"] = "bash";
  result["prompt_ready"] = false;
  if (execution.handoff_reason()) result["handoff_reason"] = *execution.handoff_reason();
  std::string id = execution.id();
  result["message"] =
      "held: the SSH login needs a person (handoff_reason). They open terminal_url, take over "
      "and type the password there; you never see it, and writes to the session are refused "
      "until then. Tell them, then call wait(execution_id=\"" +
      id +
      "\", until=\"released\") (again while it answers deadline_reached). Once released, "
      "agentty installs its prompt hook by itself: execute(session=\"" +
      id +
      "\", ...) then waits for the first prompt and answers with exact exit codes. If the "
      "login fails the session ends (status failed, failure_reason says why).";
  if (result.contains("handoff_in_client")) append_message(result, kAskedInClientNote);
  return ToolResult{std::move(result)};
}

// A local shell: the program, and the startup files that install the hook.
Expected<void> set_local_shell(ToolContext& ctx, session::ShellKind kind, const std::string& nonce,
                               session::ExecutionSpec& spec) {
  std::string name = session::to_string(kind);
  std::string program = find_in_path(kind == session::ShellKind::sh ? "dash" : name);
  if (program.empty() && kind == session::ShellKind::sh) program = find_in_path("sh");
  if (program.empty())
    return make_error("shell: " + name + " is not installed here; use shell=\"bash\".");
  auto dir = (ctx.config.state_dir.empty() ? std::filesystem::temp_directory_path()
                                           : ctx.config.state_dir) /
             "sessions" / ctx.registry.state_file_name(nonce);
  auto launch = session::write_shell_startup(kind, program, nonce, dir, spec.env);
  if (!launch) {
    return make_error(launch.error() +
                      ". The session's startup files live in the state directory: free space "
                      "there or make it writable, or restart agentty with another --state-dir "
                      "(execute with command or argv needs no file there).");
  }
  spec.argv = launch.value().argv;
  for (const auto& [key, value] : launch.value().env) spec.env[key] = value;
  spec.startup_files = launch.value().files;
  spec.command_text = program;
  return ctx.policy->check_command(join(spec.argv));
}

// A session on a host is its account's login shell; the hook is typed into it.
Expected<void> set_login_shell(ToolContext& ctx, session::ShellKind& kind,
                               session::ExecutionSpec& spec) {
  if (kind != session::ShellKind::bash)
    return make_error(
        "shell: with host the session is the account's login shell on that host (agentty's "
        "prompt hook is typed for bash); remove shell (or pass \"bash\").");
  kind = session::ShellKind::bash;  // the hook is typed into the login shell; rearm knows bash
  spec.command_text = "(login shell on " + spec.host + ")";
  return ctx.policy->check_command(spec.command_text);
}

// The shell open answers with: the one asked for, or on a host the
// account's login shell as far as agentty can tell (sh's marks, else the
// terminal's foreground program now or when the hook was typed (the host's
// answer is per quiet period), else the account's $SHELL; bash when the host
// does not say).
boost::asio::awaitable<std::string> shell_name(session::Execution& execution,
                                               session::ShellKind kind,
                                               std::optional<std::string> at_login) {
  if (execution.spec().host.empty()) co_return session::to_string(kind);
  if (execution.shell()->sh_marks()) co_return "sh";
  auto program = execution.foreground_program();
  if (!program) program = std::move(at_login);
  if (!program) program = co_await execution.login_shell();  // asked once per connection
  co_return program && program->ends_with("zsh") ? "zsh" : "bash";
}

// open's answer once the first prompt came, the shell ended, or the wait
// for the prompt ran out.
ToolResult first_prompt_answer(ToolContext& ctx, session::Execution& execution,
                               const std::string& shell_name, milliseconds waited) {
  auto* shell = execution.shell();
  json result = merged(execution_result(execution, ctx, read_request(ctx, json::object())),
                       session_fields(execution));
  result["shell"] = shell_name;
  result["prompt_ready"] = shell->prompt_ready();
  if (execution.finished()) {
    result["message"] =
        "The shell ended right away; output shows why. Fix the cause (rc file, cwd) and open "
        "again.";
    return ToolResult{std::move(result), true};
  }
  if (!shell->prompt_ready()) {
    result["message"] =
        "No prompt within " + whole_seconds(waited) +
        ": the shell is still starting (a slow rc file) or its rc file "
        "left no marked prompt. The session is open: execute(session=) waits for the first "
        "prompt, read shows what the shell printed, and at a bash prompt without marks "
        "write(action=\"rearm\") installs the hook.";
    if (!execution.spec().host.empty()) append_message(result, kHookNeedsBash);
  }
  return ToolResult{std::move(result)};
}

boost::asio::awaitable<ToolResult> open(ToolContext& ctx, const json& args) {
  auto kind =
      session::parse_shell_kind(args.value("shell", "bash")).value_or(session::ShellKind::bash);
  if (auto problem = ssh_options_problem(args)) co_return failed_to_start(*problem);
  auto& policy = *ctx.policy;

  session::ExecutionSpec spec;
  spec.kind = session::ExecutionKind::session;
  if (auto ok = fill_start_spec(ctx, args, spec); !ok) co_return failed_to_start(ok.error());
  // Each wait for the shell is kFirstPrompt, and the call as a whole no longer
  // than --max-yield-ms: a client's request timeout may be below their sum.
  const auto called_at = steady_clock::now();
  const auto wait_end = [&] {
    return std::min(steady_clock::now() + kFirstPrompt,
                    called_at + milliseconds(ctx.config.max_yield_ms));
  };

  std::string nonce = random_hex(8);
  auto shell_set = spec.host.empty() ? set_local_shell(ctx, kind, nonce, spec)
                                     : set_login_shell(ctx, kind, spec);
  if (!shell_set) co_return failed_to_start(shell_set.error());
  // Limits last, as in the policy's order (cwd, command rules, limits).
  if (auto ok = policy.check_session_limit(ctx.registry.live_session_count()); !ok)
    co_return failed_to_start(ok.error());
  if (auto ok = check_start_limits(ctx); !ok) co_return failed_to_start(ok.error());

  std::shared_ptr<session::Execution> execution;
  std::optional<std::string> at_login;  // the program at the terminal when the hook was typed
  if (spec.host.empty()) {
    // start_local attaches the channel but no output is read before this
    // coroutine next yields, so the integration sees the very first byte.
    auto started = co_await ctx.registry.start_local(std::move(spec));
    if (!started) co_return failed_to_start(started.error());
    execution = started.value();
    execution->set_shell_integration(std::make_unique<session::ShellIntegration>(kind, nonce));
  } else {
    auto started = co_await ctx.registry.start(std::move(spec));
    if (!started) co_return failed_to_start(started.error());
    execution = started.value();
    execution->set_shell_integration(std::make_unique<session::ShellIntegration>(kind, nonce));
    if (execution->login_held()) {
      // A person logs in; the hook follows the login, whenever it ends.
      type_hook_after_login(ctx.registry.io(), execution);
      co_return held_for_login(ctx, *execution);
    }
    co_await wait_until(
        ctx, *execution, wait_end(),
        [&] { return execution->finished() || can_type_hook(*execution); }, milliseconds(50));
    // Slow to go quiet: typed ahead all the same, unless it would answer a prompt.
    at_login = execution->foreground_program();
    if (!execution->finished() && !execution->held() && !shows_secret_prompt(*execution))
      co_await type_hook(*execution);
  }
  auto* shell = execution->shell();
  auto end = co_await wait_until(ctx, *execution, wait_end(),
                                 [&] { return execution->finished() || shell->prompt_ready(); });
  if (end == WaitEnd::cancelled) co_return ToolResult{};

  const auto waited = duration_cast<milliseconds>(steady_clock::now() - called_at);
  co_return first_prompt_answer(ctx, *execution,
                                co_await shell_name(*execution, kind, std::move(at_login)), waited);
}

}  // namespace

ToolDefinition make_open_tool(const ToolConfig& config) {
  (void)config;
  json properties = {
      {"shell",
       {{"type", "string"},
        {"enum", {"bash", "zsh", "sh"}},
        {"description",
         "Which shell (default bash). Your rc files load as usual; agentty adds its prompt hook "
         "after them. sh (dash) has no hooks: its boundaries are heuristic."}}},
  };
  json where = start_inputs({
      .purpose = "Why you open it, in a few words (shown to the human watching).",
      .cwd = "Starting directory (must exist; inside AGENTTY_ALLOWED_CWDS when set). With "
             "host: entered on the host (the login shell's home when omitted).",
      .env = "Variables added to the shell's environment (with host: exported in the login "
             "shell).",
      .host =
          "Open the shell on this SSH host (an ~/.ssh/config alias or user@host:port): the "
          "account's login shell (bash, zsh or sh: `shell` in the answer), with the hook typed in "
          "after login (`shell` must be omitted or bash). A host that wants a password is held for "
          "a person to log in "
          "(see held; refused when agentty runs with --no-web).",
      .user = "SSH user (with host).",
      .port = "SSH port (with host).",
  });
  json output = merged(status_output_properties(), read_output_properties());
  output["prompt_ready"] = {{"type", "boolean"},
                            {"description", "The shell drew its first prompt and takes commands."}};
  output["shell"] = {{"type", "string"}, {"enum", {"bash", "zsh", "sh"}}};
  output["handoff_reason"] = {
      {"type", "string"},
      {"description", "With held: why a person must act first (an SSH login needs a password)."}};
  output["boundaries"] = {{"type", "string"}, {"enum", {"exact", "heuristic"}}};
  output["command_running"] = {{"type", "boolean"}};
  output["command_exit_code"] = {{"type", "integer"}};
  output["yield_ms"] = {{"type", "integer"}};
  return ToolDefinition{
      "open",
      "Open a shell session",
      "Start an interactive shell (bash by default; zsh, sh) under a real terminal, locally or "
      "over SSH, and return "
      "once its first prompt is drawn (prompt_ready=true). Use a session when state must persist "
      "between commands "
      "(cd, export, activated virtualenvs) or a human should share the terminal: run commands in "
      "it with "
      "execute(session=execution_id, command=..., side_effects=...), each answered with exactly "
      "its own output and "
      "exit code; read/wait/write/screen work on it like on any execution; end it with close. Your "
      "rc files load "
      "normally and agentty adds an invisible prompt hook after them. Errors: "
      "status=failed_to_start means nothing "
      "started (the message names the argument or the policy limit and the fix: close an unused "
      "session, pick an "
      "installed shell, fix cwd); prompt_ready=false means the shell is open but no prompt came "
      "within 10 s (or --max-yield-ms): read "
      "it to see why. held=true with handoff_reason (SSH host without a usable key): open "
      "returned at once and a person must log in on terminal_url; wait(until=\"released\"), then "
      "execute(session=) (the hook is installed after the login by itself).",
      object_schema(merged(properties, where)),
      {{"type", "object"}, {"properties", output}},
      annotations(false, false, false, true),
      open,
  };
}

}  // namespace agentty::mcp::tools
