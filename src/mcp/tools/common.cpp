#include "mcp/tools/common.hpp"

#include <algorithm>
#include <csignal>

#include "mcp/tools/labels.hpp"
#include "pty/exit_status.hpp"
#include "pty/ssh_target.hpp"
#include "session/policy.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

using namespace std::chrono;

namespace {

// Not "ctrl-z" alone: a SIGSTOP sent from outside (kill -STOP) looks the same.
constexpr const char* kSuspendedMessage =
    "The program is stopped (ctrl-z, or a stop signal such as SIGSTOP) and no shell above it "
    "will continue it: write(action=\"resume\") continues it, stop ends it.";

}  // namespace

std::string whole_seconds(std::chrono::milliseconds duration) {
  return std::to_string((duration.count() + 500) / 1000) + " s";
}

json merged(json a, const json& b) {
  for (const auto& [key, value] : b.items()) a[key] = value;
  return a;
}

namespace {

// "12 s ago", "5 min ago", "3 h ago".
std::string seconds_ago(std::chrono::system_clock::time_point when) {
  using namespace std::chrono;
  const auto age = duration_cast<seconds>(system_clock::now() - when).count();
  if (age < 120) return std::to_string(std::max<long long>(age, 0)) + " s ago";
  if (age < 7200) return std::to_string(age / 60) + " min ago";
  return std::to_string(age / 3600) + " h ago";
}

boost::asio::awaitable<ToolResult> with_execution(ToolContext& ctx, const json& args,
                                                  ExecutionHandler handler) {
  std::string id = args.value("execution_id", "");
  auto execution = ctx.registry.find(id);
  if (!execution) {
    // An agent that kept the process_id instead is told which handle to use.
    for (const auto& known : ctx.registry.list()) {
      if (!known->process_id() || std::to_string(*known->process_id()) != id) continue;
      co_return tool_error("execution_id: '" + id + "' is the process_id of execution " +
                               known->id() + ", not its handle; pass execution_id=\"" +
                               known->id() + "\".",
                           {{"execution_id", id}});
    }
    if (auto removed = ctx.registry.removed(id)) {
      co_return tool_error("execution_id: '" + id + "' was removed " +
                               seconds_ago(removed->removed_at) + " " +
                               session::describe(removed->cause) +
                               "; its record and output are gone. Run the command again, or pass "
                               "a current execution_id (ps lists them).",
                           {{"execution_id", id}});
    }
    co_return tool_error("execution_id: unknown execution_id '" + id +
                             "'. Use the execution_id from execute/open (not the process_id); ps "
                             "lists the known ones. Records are pruned after their retention time.",
                         {{"execution_id", id}});
  }
  co_return co_await handler(ctx, args, std::move(execution));
}

}  // namespace

ToolHandler for_execution(ExecutionHandler handler) {
  // Not a coroutine itself: a lambda coroutine's captures would not outlive a
  // copy of this handler.
  return
      [handler](ToolContext& ctx, const json& args) { return with_execution(ctx, args, handler); };
}

ToolResult refusal(session::Execution& execution, const ToolContext& ctx, std::string message,
                   const json& extra) {
  return tool_error(std::move(message), merged(status_fields(execution, ctx), extra));
}

std::optional<ToolResult> held_refusal(session::Execution& execution, const ToolContext& ctx,
                                       const std::string& undone, const json& extra) {
  if (!execution.held()) return std::nullopt;
  std::string what = execution.kind() == session::ExecutionKind::session ? "session" : "execution";
  return refusal(execution, ctx,
                 "held: a human has taken over this " + what + "; " + undone +
                     ". Wait with wait(until=\"released\") and try again.",
                 extra);
}

ToolResult failed_to_start(std::string message) {
  return tool_error(std::move(message), {{"status", "failed_to_start"}});
}

std::optional<std::string> ssh_options_problem(const json& args) {
  if (args.contains("host")) {
    // An ssh option is not a host; libssh's refusal of it has no reason.
    const auto& host = args["host"].get_ref<const std::string&>();
    if (host.starts_with('-'))
      return "host: '" + host +
             "' is not a host (it starts with '-', like an ssh option); accepted forms: host, "
             "user@host, host:port, user@host:port, [IPv6 address]:port, or an ~/.ssh/config "
             "alias";
    // Checked before anything starts, with the part that is wrong named.
    auto target = pty::SshTarget::parse(host);
    if (!target) return "host: " + target.error();
    // One would silently win over the other.
    if (args.contains("port") && target->port != 0 && target->port != args["port"].get<int>())
      return "port: " + std::to_string(args["port"].get<int>()) +
             " contradicts the port in host '" + host +
             "'; give the port once (in host or as port).";
    if (args.contains("user")) {
      // libssh would pass it on as it is; the server's refusal names nothing.
      const auto& user = args["user"].get_ref<const std::string&>();
      bool control = std::any_of(user.begin(), user.end(),
                                 [](unsigned char c) { return c <= ' ' || c == 0x7f; });
      if (control || user.starts_with('-') || user.find_first_of("@:") != std::string::npos)
        return "user: '" + user +
               "' is not a login name (white space, a control character, '@' or ':', or a "
               "leading '-'); give the account name alone, e.g. user=\"deploy\".";
    }
    if (args.contains("user") && !target->user.empty() &&
        target->user != args["user"].get<std::string>())
      return "user: '" + args["user"].get<std::string>() + "' contradicts the user in host '" +
             host + "'; give the user once (in host or as user).";
    return std::nullopt;
  }
  if (!args.contains("user") && !args.contains("port")) return std::nullopt;
  return "user/port: only apply with host; add host or remove them.";
}

Expected<void> fill_start_spec(const ToolContext& ctx, const json& args,
                               session::ExecutionSpec& spec) {
  auto purpose = label_argument(args, "purpose", LabelLines::many);
  if (!purpose) return make_error(purpose.error());
  auto name = label_argument(args, "name", LabelLines::one);
  if (!name) return make_error(name.error());
  spec.purpose = std::move(purpose.value());
  spec.name = std::move(name.value());
  spec.host = args.value("host", "");
  spec.ssh_user = args.value("user", "");
  spec.ssh_port = args.value("port", 0);
  spec.size = {static_cast<std::uint16_t>(args.value("cols", 120)),
               static_cast<std::uint16_t>(args.value("rows", 40))};
  if (args.contains("env")) spec.env = args["env"].get<std::map<std::string, std::string>>();
  for (const auto& [name, value] : spec.env) {
    // The environment block cannot carry these: the variable would silently be missing.
    if (name.empty() || name.find_first_of(std::string("=\0", 2)) != std::string::npos)
      return make_error("env: '" + name +
                        "' is not a variable name (empty, or contains '=' or NUL); use names "
                        "like MY_VAR.");
    if (value.find('\0') != std::string::npos)
      return make_error("env: the value of " + name +
                        " contains a NUL byte, which an environment cannot hold.");
  }
  // Secret before anything else can show it (a refusal, its audit record).
  ctx.registry.add_secrets(spec.env);
  if (!spec.host.empty()) {
    // Entered on the host (it cannot be checked here); none given: the
    // account's home, not this server's directory.
    spec.cwd = args.value("cwd", "");
    return {};
  }
  std::string cwd = args.value("cwd", ctx.config.default_cwd);
  auto resolved =
      ctx.policy->check_cwd(cwd);  // an omitted cwd (empty) is the server's, checked too
  if (!resolved) {
    // The policy's message already starts with "cwd '...'".
    const auto& why = resolved.error();
    return make_error(why.starts_with("cwd") ? why : "cwd: " + why);
  }
  spec.cwd = resolved.value();
  return {};
}

Expected<void> check_start_limits(ToolContext& ctx) {
  auto& policy = *ctx.policy;
  if (auto ok = policy.check_live_limit(ctx.registry.live_count()); !ok) return ok;
  const auto spool_budget = policy.config().max_total_spool_bytes;
  return policy.check_total_spool(ctx.registry.reclaim_spool(spool_budget));
}

json status_fields(session::Execution& execution, const ToolContext& ctx) {
  json out = {
      {"execution_id", execution.id()},
      {"status", session::to_string(execution.status())},
      {"kind", session::to_string(execution.kind())},
      {"held", execution.held()},
      {"duration_ms", execution.duration().count()},
  };
  const auto state = execution.input_state();
  out["waiting_for_input"] = execution.waiting_for_input(state);
  auto pid = execution.process_id();
  out["process_id"] = pid ? json(*pid) : json(nullptr);
  out["exit_code"] = nullptr;
  out["signal"] = nullptr;
  if (auto exit = execution.exit_status()) {
    out["exit_code"] = exit->shell_code();
    if (exit->signal) out["signal"] = pty::signal_name(*exit->signal);
  }
  if (state == pty::InputState::suspended) {
    out["suspended"] = true;
    out["message"] = kSuspendedMessage;
  }
  if (execution.held_by()) out["held_by"] = *execution.held_by();
  if (!execution.failure_reason().empty()) out["failure_reason"] = execution.failure_reason();
  if (ctx.terminal_url) {
    std::string url = ctx.terminal_url(execution.id());
    if (!url.empty()) out["terminal_url"] = url;
  }
  if (ctx.client_handoff) {
    auto asked = ctx.client_handoff(execution.id());
    if (!asked.state.empty()) out["handoff_in_client"] = asked.state;
  }
  return out;
}

json execution_result(session::Execution& execution, const ToolContext& ctx,
                      const ReadRequest& request) {
  return merged(status_fields(execution, ctx), read_fields(execution, request));
}

boost::asio::awaitable<WaitEnd> wait_until(ToolContext& ctx, session::Execution& execution,
                                           steady_clock::time_point deadline,
                                           const std::function<bool()>& done,
                                           milliseconds recheck) {
  auto start = steady_clock::now();
  auto next_progress = start + seconds(1);
  double progress = 0;
  while (!done()) {
    auto now = steady_clock::now();
    if (now >= deadline) co_return WaitEnd::deadline;
    auto wake = std::min(deadline, next_progress);
    if (recheck.count() > 0) wake = std::min(wake, now + recheck);
    auto woke = co_await execution.changed().wait_until(wake);
    if (woke == ChangeSignal::Wake::cancelled) co_return WaitEnd::cancelled;
    if (steady_clock::now() >= next_progress) {
      next_progress += seconds(1);
      if (ctx.progress) {
        auto waited = duration_cast<milliseconds>(steady_clock::now() - start).count();
        ctx.progress(++progress, "waiting (" + std::to_string(waited / 1000) + " s); " +
                                     session::to_string(execution.status()) + ", " +
                                     std::to_string(execution.log().total_bytes()) +
                                     " bytes of output");
      }
    }
  }
  co_return WaitEnd::condition;
}

bool awaits_answer(session::Execution& execution) {
  return execution.quiet() >= kAnswerQuiet && execution.waiting_for_input();
}

bool stays_stopped(session::Execution& execution) {
  return execution.quiet() >= kAnswerQuiet && execution.suspended();
}

std::string stopped_message(const session::Execution& execution) {
  return std::string(kSuspendedMessage) +
         " A stopped program does not go on by itself, so this answered at once instead of "
         "waiting out its time, and wait answers the same (wait_result=suspended) while it "
         "stays stopped; its timeout_ms, unless 0, still ends it. execution_id=\"" +
         execution.id() + "\".";
}

boost::asio::awaitable<void> await_input_answer(ToolContext& ctx, session::Execution& execution) {
  const auto* shell = execution.shell();
  if (!shell || !shell->command_running() || !execution.input_state_pending()) co_return;
  co_await wait_until(ctx, execution, steady_clock::now() + kInputAnswerWait,
                      [&] { return execution.finished() || !execution.input_state_pending(); });
}

std::string input_guess_cause(const session::Execution& execution) {
  if (!execution.spec().host.empty() && execution.input_state_withheld()) {
    return "the host does not show the login user whether it reads its terminal (it runs as "
           "another user there, as su, sudo and passwd do at a password prompt)";
  }
  if (!execution.spec().host.empty()) {
    return "this host cannot show whether it reads its terminal (not Linux, no /proc or awk, or "
           "the probe failed)";
  }
  return "agentty cannot see whether it reads its terminal (it runs as another user, as su, "
         "sudo and passwd do at a password prompt, and agentty is not root; or there is no "
         "/proc)";
}

std::string awaits_answer_reason(const session::Execution& execution) {
  // The kernel answered the probe (here or on the host): it was seen reading.
  if (execution.input_state() != pty::InputState::unknown) {
    auto program = execution.foreground_program();
    // The leader is often not the reader: `git commit` waits while the
    // editor it started reads, and "git reads the terminal" left the agent
    // to guess that it was typing into vim, not answering git.
    auto reader = execution.reading_program();
    // A pipeline's group may have lost its leader (`git log | less` once
    // git is done): the reader is then the one to name.
    if (!program) program = reader;
    std::string who = program ? "the foreground program, " + *program + "," : "it";
    if (reader && *reader != *program)
      who = *reader + " (in the foreground process group of " + *program + ")";
    return who + " reads the terminal and has printed nothing for " +
           std::to_string(kAnswerQuiet.count()) + " ms";
  }
  return input_guess_rule(execution) + "; " + input_guess_cause(execution) +
         ", so this is a guess: check output or screen for its prompt before you write";
}

std::string input_guess_rule(const session::Execution& execution) {
  const auto quiet = execution.guessed_input_quiet();
  const std::string quiet_text = quiet.count() % 1000 == 0
                                     ? std::to_string(quiet.count() / 1000) + " s"
                                     : std::to_string(quiet.count()) + " ms";
  if (quiet == session::Execution::kHiddenLineQuiet) {
    return "it stopped mid-line with the terminal set to read a line without echoing it, as at "
           "a password prompt, and has printed nothing for " +
           quiet_text;
  }
  return "it stopped mid-line (the cursor after text, as at a prompt) and has printed nothing "
         "for " +
         quiet_text;
}

void note_timed_out(json& result, session::Execution& execution) {
  if (execution.status() != session::ExecutionStatus::timed_out) return;
  // A host that refuses signals (a root login on OpenSSH) was hung up instead:
  // the message names what was done, as the status's signal (SIGHUP) does.
  // What ended it, as stop says it: a program that ignored SIGTERM (or was
  // still cleaning up) was killed after the grace, one that took it was not.
  const bool hung_up = execution.signal_note(SIGTERM).has_value();
  const char* how =
      hung_up ? "its terminal hung up: this host refuses signals on a root login, so SIGTERM "
                "could not be sent"
      : execution.force_killed()
          ? "SIGTERM to its process group, and as SIGTERM did not end it within the grace, "
            "SIGKILL did: it ignores or blocks SIGTERM, or a clean-up it started was cut short"
          : "SIGTERM to its process group ended it";
  result["message"] =
      "timeout_ms (" + std::to_string(execution.spec().timeout.count()) +
      " ms, the run time limit) ran out, so it was ended (" + how +
      "). To give it longer, run it again with a larger timeout_ms, or timeout_ms=0 for no "
      "limit; yield_ms is only how long execute waits before it answers.";
}

std::string left_running_names(session::Execution& execution) {
  std::string names;
  for (const auto& each : execution.left_running()) names += (names.empty() ? "" : ", ") + each;
  return names;
}

std::string left_running_note(session::Execution& execution) {
  const auto names = left_running_names(execution);
  if (names.empty()) return "";
  return "Its command has ended, but what it left running in the background keeps this "
         "execution running: " +
         names + ". It ends when they do; stop (execution_id=\"" + execution.id() +
         "\") ends them. A server meant to keep running is better started as its own execute "
         "(no &), which backgrounds after yield_ms, and stopped when done.";
}

boost::asio::awaitable<std::optional<ToolResult>> signal_and_wait(ToolContext& ctx,
                                                                  session::Execution& execution,
                                                                  int signo, milliseconds grace,
                                                                  const json& refused) {
  if (auto ok = execution.stop(signo, grace, session::InputSource::agent); !ok)
    co_return refusal(execution, ctx, ok.error(), refused);
  // SIGKILL lands within the grace; allow a little more for the group to
  // drain, and for a remote host to answer the hang-up (an SSH channel whose
  // link went silent ends 4 s after it: SshConnection::kHangupAnswerWindow).
  // Never past --max-yield-ms: the SIGKILL comes on its own (Execution::stop).
  auto deadline = steady_clock::now() +
                  std::min(grace + milliseconds(5000), milliseconds(ctx.config.max_yield_ms));
  auto end = co_await wait_until(ctx, execution, deadline, [&] { return execution.finished(); });
  if (end == WaitEnd::cancelled) co_return ToolResult{};
  co_return std::nullopt;
}

std::uint32_t effective_timer(const ToolContext& ctx, const json& args, const std::string& name,
                              std::uint32_t fallback) {
  std::uint32_t value = args.value(name, fallback);
  return std::min(value, ctx.config.max_yield_ms);
}

std::uint32_t effective_yield(const ToolContext& ctx, const json& args, std::uint32_t fallback) {
  return effective_timer(ctx, args, "yield_ms", fallback);
}

void append_message(json& result, std::string_view sentence) {
  std::string message = result.value("message", "");
  if (!message.empty()) message += ' ';
  result["message"] = message.append(sentence);
}

void note_full_screen(json& result, session::Execution& execution) {
  if (execution.finished()) return;
  bool alt_screen = execution.screen_modes().alt_screen;
  result["alt_screen"] = alt_screen;
  if (!alt_screen) return;
  append_message(result,
                 "It draws a full screen (alt_screen): output is that drawing flattened to text; "
                 "call screen (execution_id=\"" +
                     execution.id() + "\") to see what a person sees.");
}

void add_hint(json& result, const std::string& text) {
  std::string hint = result.value("hint", "");
  if (!hint.empty() && hint.back() != ' ') hint += ' ';
  result["hint"] = hint + text;
}

void note_capped_timer(json& result, const ToolContext& ctx, const json& args,
                       const std::string& name, const std::string& reported_in) {
  auto cap = ctx.config.max_yield_ms;
  if (!args.contains(name) || args[name].get<std::uint64_t>() <= cap) return;
  std::string text = name + " " + std::to_string(args[name].get<std::uint64_t>()) +
                     " is above the cap of " + std::to_string(cap) + " ms, so " +
                     std::to_string(cap) + " ms applied (" + reported_in + " reports it)";
  // The follow-up is wait whatever was called: execute or write again would
  // run the command or type the input a second time. Nothing to wait for once it ended.
  const std::string status = result.value("status", "");
  if ((status == "running" || status == "backgrounded") && result.contains("execution_id")) {
    text += "; to wait longer, call wait with execution_id=\"" +
            result["execution_id"].get<std::string>() + "\"";
  }
  add_hint(result, text + ".");
}

}  // namespace agentty::mcp::tools
