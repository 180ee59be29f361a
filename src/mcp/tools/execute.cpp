// execute: run a command under a PTY; inline if it ends within yield_ms,
// otherwise "backgrounded" with an execution_id to read/wait/stop.
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>

#include "base/random_id.hpp"
#include "mcp/tools/argument_length.hpp"
#include "mcp/tools/common.hpp"
#include "mcp/tools/foreground_program.hpp"
#include "mcp/tools/script_check.hpp"
#include "mcp/tools/session_execute.hpp"
#include "pty/ssh_target.hpp"
#include "session/direct_command.hpp"
#include "session/policy.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

std::string side_effects_description(const ToolConfig& config) {
  std::string blocked;
  for (const auto& name : config.blocked_side_effects)
    blocked += (blocked.empty() ? "" : ", ") + name;
  return "Every side-effect category this command may plausibly have; [\"NONE\"] for read-only "
         "commands (NONE is exclusive). Declare them honestly: the categories this server's "
         "operator blocked are refused before anything starts" +
         (blocked.empty() ? std::string(" (none are blocked here).") : ": here " + blocked + ".");
}

json input_schema(const ToolConfig& config) {
  json properties = {
      {"command",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", 1 << 20},
        {"description",
         "A shell command line (one string), run as `" + config.default_shell +
             " -c COMMAND` under a PTY (with host: by the account's login shell, as `ssh host "
             "COMMAND` runs it); a list of program and arguments goes in argv instead."}}},
      {"argv",
       {{"type", "array"},
        {"minItems", 1},
        {"maxItems", 4096},
        {"items", {{"type", "string"}, {"maxLength", 1 << 20}}},
        {"description",
         "Program and arguments, run directly with no shell (argv[0] is looked up in PATH)."}}},
      {"script",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", 1 << 20},
        {"description",
         "A multi-line bash script. Checked with `bash -n` first: a syntax error is refused before "
         "anything runs."}}},
      {"side_effects",
       {{"type", "array"},
        {"minItems", 1},
        {"maxItems", 21},
        {"uniqueItems", true},
        {"items", {{"type", "string"}, {"enum", session::side_effect_names()}}},
        {"description", side_effects_description(config)}}},
      {"stdin",
       {{"type", "string"},
        {"maxLength", 1 << 20},
        {"contentMediaType", "application/octet-stream"},
        {"description",
         "Data for the program's standard input (with close_stdin, the default): locally a file, "
         "as `prog < file` would; on a host a pipe (at most ~120 KiB there). Read exactly, then "
         "end of file; not echoed, no line length limit, control characters are data; stdout "
         "and stderr stay on the terminal. With close_stdin=false it is typed into the terminal "
         "instead (echoed, lines over 4095 bytes cut, \\x03 interrupts) and the terminal stays "
         "open for write. A password prompt reads the terminal, not stdin: answer it with write "
         "after wait(until=\"input\"), or use handoff."}}},
      {"close_stdin",
       {{"type", "boolean"},
        {"description",
         "End the program's input after stdin. Default: true when stdin is given, else false "
         "(the terminal stays open for write). Without stdin, true sends end-of-file (ctrl-d) "
         "to the terminal."}}},
      {"yield_ms", capped_timer_input(config,
                                      "How long to wait inline before returning "
                                      "status=backgrounded (default " +
                                          std::to_string(config.default_yield_ms) +
                                          "). Never ends the process.")},
      {"timeout_ms",
       {{"type", "integer"},
        {"minimum", 0},
        {"maximum", 604800000},
        {"description", "Total run time limit; 0 = none (default " +
                            std::to_string(config.default_timeout_ms) +
                            "). On expiry: SIGTERM to the process group, SIGKILL after a grace, "
                            "status timed_out."}}},
      {"max_output_bytes", max_output_bytes_input(config, "; the rest stays readable with read.")},
      {"format", format_input("text (default) or raw bytes.")},
      {"session",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", 128},
        {"description",
         "Run the command in this open shell session (an execution_id from open) instead of a new "
         "process."}}},
  };
  json where = start_inputs({
      .purpose =
          "Why you run this, in a few words (shown to the human watching and in the audit log).",
      .cwd = "Working directory (must exist; must be inside AGENTTY_ALLOWED_CWDS when set).",
      .env = "Variables added to the server's environment for this command.",
      .host = "Run on this SSH host (an ~/.ssh/config alias or user@host:port) instead of locally.",
      .user = "SSH user (overrides the host's).",
      .port = "SSH port (overrides the host's).",
  });
  return object_schema(merged(std::move(properties), where), {"side_effects"});
}

json output_schema() {
  json properties = merged(status_output_properties(), read_output_properties());
  properties["yield_ms"] = {
      {"type", "integer"},
      {"description", "The effective yield_ms after capping (hint says when it was capped)."}};
  properties["stdin_error"] = {{"type", "string"}};
  properties["alt_screen"] = alt_screen_output_property();
  properties["handoff_reason"] = {
      {"type", "string"},
      {"description", "With held: why a person must act first (an SSH login needs a password)."}};
  return {{"type", "object"}, {"properties", properties}};
}

// Exactly one of command / argv / script.
std::optional<std::string> check_command_choice(const json& args) {
  int given = args.contains("command") + args.contains("argv") + args.contains("script");
  // In a session a blank line is a line like any other (it completes at once).
  if (given == 1 && args.contains("command") && args["command"].is_string() &&
      !args.contains("session")) {
    const auto& command = args["command"].get_ref<const std::string&>();
    if (!command.empty() && command.find_first_not_of(" \t\r\n\v\f") == std::string::npos)
      return "command: holds only white space, which runs nothing; give the shell line to run";
  }
  if (given == 1) return std::nullopt;
  if (given == 0)
    return "command: give one of command (a shell line), argv (no shell) or script (multi-line "
           "bash)";
  return "command: give only one of command, argv and script";
}

// The fast path copies bash's reading of a line, so only when bash runs it.
bool is_bash(const std::string& shell) {
  return shell == "bash" || shell.ends_with("/bash");
}

std::string eof_for(const std::string& typed) {
  // EOF is only seen at the start of a line: a partial line needs a second ^D.
  return typed.empty() || typed.back() == '\n' ? "\x04" : "\x04\x04";
}

// What runs: the program and the text the policy checks, from command
// (bash -c, or the program itself for a line of plain words), argv (no
// shell) or script (syntax-checked, then run by bash).
boost::asio::awaitable<Expected<void>> set_program(ToolContext& ctx, const json& args,
                                                   session::ExecutionSpec& spec) {
  if (args.contains("command")) {
    spec.command_text = args["command"].get<std::string>();
    spec.argv = {ctx.config.default_shell, "-c", spec.command_text};
    if (spec.host.empty() && is_bash(ctx.config.default_shell)) {
      // bash would only find the program and exec it: skip starting bash.
      if (auto direct = session::direct_command(spec.command_text, spec.env, spec.cwd)) {
        spec.argv = std::move(direct->argv);
        spec.env = std::move(direct->env);
      }
    }
    spec.remote_command = spec.command_text;
  } else if (args.contains("argv")) {
    spec.argv = args["argv"].get<std::vector<std::string>>();
    if (spec.argv[0].empty())
      co_return make_error(
          "argv[0]: is empty; it must name the program to run (looked up in PATH), e.g. "
          "[\"ls\", \"-l\"].");
    spec.command_text = session::join_argv_for_policy(spec.argv);
    spec.remote_command = shell_quote_argv(spec.argv);
  } else {
    spec.command_text = args["script"].get<std::string>();
    // Checked and run by one bash: --shell (which may be sh) is for command.
    const std::string bash = is_bash(ctx.config.default_shell) ? ctx.config.default_shell : "bash";
    auto checked = co_await check_bash_syntax(spec.command_text, ctx.config.state_dir, bash,
                                              ctx.registry.state_file_name(""));
    if (!checked) co_return make_error("script: " + checked.error());
    spec.script_file = std::move(checked.value());
    spec.argv = {bash, spec.script_file->path().string()};
    // Checked as bash, so run by bash: a host's login shell may be sh.
    spec.remote_command = "exec bash -c " + pty::shell_quote(spec.command_text);
  }
  co_return Expected<void>{};
}

// On a host, a command's background jobs outlive its shell as locally
// (pty::waiting_for_background_jobs). Before set_standard_input, which puts
// the command in a pipeline's subshell: the jobs are that subshell's.
void keep_remote_background_jobs(const json& args, session::ExecutionSpec& spec) {
  if (spec.host.empty() || !args.contains("command") ||
      !pty::has_background_job(spec.remote_command))
    return;
  spec.remote_command = pty::waiting_for_background_jobs(spec.remote_command);
  spec.remote_marks_command_end = true;
}

// stdin that ends (close_stdin, the default) is the program's standard
// input: locally a file on fd 0, on a host a pipe the remote shell fills.
// Whether it went there; with close_stdin=false it is typed instead.
Expected<bool> set_standard_input(const json& args, session::ExecutionSpec& spec) {
  if (!args.contains("stdin") || !args.value("close_stdin", true)) return false;
  const auto& data = args["stdin"].get_ref<const std::string&>();
  if (spec.host.empty()) {
    spec.stdin_file = data;
    return true;
  }
  auto piped = pty::with_standard_input(spec.remote_command, data);
  if (!piped) {
    return make_error(
        "stdin: " + std::to_string(data.size()) +
        " bytes do not fit in the command line an SSH server runs (at most " +
        std::to_string(pty::kMaxRemoteCommandBytes / 1024) +
        " KiB with the command); nothing ran. Copy the data to the host first (for example "
        "in parts with execute(host=..., command=\"cat >> FILE\", stdin=PART)) and read it "
        "from the file.");
  }
  spec.remote_command = std::move(*piped);
  return true;
}

// Types stdin given with close_stdin=false (and the end-of-file close_stdin
// asks for) into the started program; a failure is reported, not fatal.
json type_input(const json& args, bool stdin_as_file, session::Execution& execution) {
  json extra = json::object();
  if (args.contains("stdin") && !stdin_as_file) {
    std::string typed = args["stdin"].get<std::string>();
    if (args.value("close_stdin", true)) typed += eof_for(typed);
    if (auto ok = execution.write(typed, session::InputSource::agent); !ok)
      extra["stdin_error"] = ok.error();
  } else if (args.value("close_stdin", false)) {
    (void)execution.write("\x04", session::InputSource::agent);
  }
  return extra;
}

// sudo asks on the cursor's line: "[sudo] password for USER: " (its prefix
// is kept in every translation). Under `bash -c` the foreground program is
// bash, so its name alone does not tell.
bool sudo_asks(session::Execution& execution) {
  if (execution.foreground_program() == std::optional<std::string>("sudo")) return true;
  const auto snapshot = execution.screen().snapshot();
  const auto row = snapshot.cursor.row;
  return row >= 0 && row < static_cast<int>(snapshot.lines.size()) &&
         snapshot.lines[static_cast<std::size_t>(row)].starts_with("[sudo] ");
}

// What a person learns at a password prompt by trying, said to the agent at
// once: sudo's cached password belongs to the terminal it was typed in, and
// data given as stdin is not what a password prompt reads.
std::string password_prompt_notes(session::Execution& execution, bool stdin_as_file) {
  std::string notes;
  if (sudo_asks(execution)) {
    notes +=
        " sudo remembers a password for the terminal it was typed in (its default "
        "timestamp_type=tty), and each execute has a terminal of its own, so the next execute "
        "asks again: run commands that need sudo in one session (open" +
        std::string(execution.spec().host.empty() ? "" : " with the same host") +
        ", then execute(session=)) to type it once.";
  }
  if (stdin_as_file && execution.hides_typed_line() == std::optional<bool>(true)) {
    notes +=
        " The stdin you gave went to its standard input, but a password prompt (sudo, su, "
        "ssh) reads the terminal: answer it with write, or have the program read stdin "
        "(sudo -S).";
  }
  return notes;
}

// The command has ended and only what it left in the background runs on
// (`server &`, `nohup job &`): execute answers then, as a shell gives its
// prompt back, instead of after yield_ms. It lets the job's first lines (a
// server's "listening on") arrive first: it answers once output has been
// quiet for kQuiet since the command's end was seen, or kSettle after it if
// the job keeps printing. Looked for at most every kLookEvery (a /proc read while the
// command runs, a scan of /proc once it has ended), and not before then: a
// short command ends before the first look.
class LeftBehindWatch {
 public:
  explicit LeftBehindWatch(session::Execution& execution) : execution_(execution) {}

  bool settled() {
    const auto now = steady_clock::now();
    if (!ended_at_) {
      if (now < next_look_) return false;
      next_look_ = now + kLookEvery;
      // Killed by timeout_ms: what is left ends by the grace's SIGKILL, and
      // the answer is timed_out, not "its command has ended".
      if (execution_.finished() || execution_.ending() || execution_.left_running().empty())
        return false;
      ended_at_ = now;
    }
    const auto since_end = now - *ended_at_;
    return (since_end >= kQuiet && execution_.quiet() >= kQuiet) || since_end >= kSettle;
  }

 private:
  static constexpr milliseconds kLookEvery = kAnswerRecheck;
  static constexpr milliseconds kQuiet{300};
  static constexpr milliseconds kSettle{2000};
  session::Execution& execution_;
  steady_clock::time_point next_look_ = steady_clock::now() + kLookEvery;
  std::optional<steady_clock::time_point> ended_at_;
};

// Why execute answered while LeftBehindWatch's jobs run on, and what next.
std::string left_behind_message(session::Execution& execution) {
  const auto& id = execution.id();
  return "Its command has ended; what it left running in the background keeps this execution "
         "running: " +
         left_running_names(execution) +
         ". So this answered without waiting for yield_ms, as a shell gives its prompt back. "
         "Follow what they print with read or wait(execution_id=\"" +
         id + "\"); the execution ends when they do, and stop(execution_id=\"" + id +
         "\") ends them.";
}

// A program still running when execute answers: why it answered, and what next.
// Not inlined: in the coroutine's body its string temporaries trip GCC 12's
// false -Wmismatched-new-delete on the coroutine's frame.
[[gnu::noinline]] void describe_running(json& result, session::Execution& execution, WaitEnd end,
                                        std::uint32_t yield, bool stdin_as_file) {
  if (execution.finished()) return;
  result["status"] = "backgrounded";
  if (execution.login_held()) {
    if (execution.handoff_reason()) result["handoff_reason"] = *execution.handoff_reason();
    result["message"] =
        "held: the SSH login needs a person (handoff_reason), so this returned at once; nothing "
        "runs until they log in. They open terminal_url, take over and type the password there; "
        "you never see it, and writes are refused until then. Tell them, then call "
        "wait(execution_id=\"" +
        execution.id() +
        "\", until=\"released\") (again while it answers deadline_reached), or until=\"exit\" "
        "for the command's end. If the login fails it ends (status failed, failure_reason says "
        "why).";
    // Not append_message: inlined here it trips GCC 12's false
    // -Wmismatched-new-delete on this coroutine's frame.
    if (result.contains("handoff_in_client"))
      result["message"] = result["message"].get<std::string>() + " " + kAskedInClientNote;
  } else if (end == WaitEnd::condition && execution.suspended()) {
    // Before: it waited out yield_ms, then said "it continues in the
    // background", which a stopped program does not.
    result["message"] = stopped_message(execution);
  } else if (end == WaitEnd::condition && !execution.left_running().empty()) {
    result["message"] = left_behind_message(execution);
  } else if (end == WaitEnd::condition) {
    result["message"] =
        "It waits for input (" + awaits_answer_reason(execution) +
        "), so this returned before yield_ms; it keeps running. Answer with write "
        "(execution_id=\"" +
        execution.id() +
        "\"; keys for ctrl-c, arrows...), or wait/read to follow it, stop to end it. For a "
        "password, handoff to a person." +
        password_prompt_notes(execution, stdin_as_file);
    if (const std::string keys = key_reader_note(execution); !keys.empty()) {
      result["message"] = result["message"].get<std::string>() + " " + keys;
    } else if (const std::string row = cursor_row_note(execution); !row.empty()) {
      result["message"] = result["message"].get<std::string>() + " " + row;
    }
  } else {
    result["message"] =
        "Still running after " + std::to_string(yield) +
        " ms; it continues in the background. Use read or wait with execution_id=\"" +
        execution.id() + "\" to follow it, write to answer prompts, stop to end it.";
    if (auto left = left_running_note(execution); !left.empty()) append_message(result, left);
  }
}

}  // namespace

boost::asio::awaitable<ToolResult> execute(ToolContext& ctx, const json& args) {
  if (auto problem = check_command_choice(args)) co_return failed_to_start(*problem);
  if (args.contains("session")) co_return co_await execute_in_session(ctx, args);
  if (auto problem = ssh_options_problem(args)) co_return failed_to_start(*problem);
  auto& policy = *ctx.policy;
  auto side_effects = args["side_effects"].get<std::vector<std::string>>();
  if (auto ok = policy.check_side_effects(side_effects); !ok) co_return failed_to_start(ok.error());

  session::ExecutionSpec spec;
  spec.side_effects = side_effects;
  spec.timeout = milliseconds(args.value("timeout_ms", ctx.config.default_timeout_ms));
  if (auto ok = fill_start_spec(ctx, args, spec); !ok) co_return failed_to_start(ok.error());
  if (auto ok = co_await set_program(ctx, args, spec); !ok) co_return failed_to_start(ok.error());
  if (auto ok = policy.check_command(spec.command_text); !ok) co_return failed_to_start(ok.error());
  if (auto problem = argument_length_problem(args, spec)) co_return failed_to_start(*problem);
  if (auto ok = check_start_limits(ctx); !ok) co_return failed_to_start(ok.error());
  keep_remote_background_jobs(args, spec);
  auto stdin_as_file = set_standard_input(args, spec);
  if (!stdin_as_file) co_return failed_to_start(stdin_as_file.error());

  bool direct = args.contains("argv");
  auto started = co_await ctx.registry.start(std::move(spec));
  if (!started) {
    if (direct && started.error().starts_with("cannot run")) {
      co_return failed_to_start("argv[0]: " + started.error() +
                                ". Check the program's name or give its full path; for shell "
                                "builtins, aliases, pipes or globs use command instead of argv.");
    }
    co_return failed_to_start(started.error());
  }
  auto execution = started.value();
  json extra = type_input(args, *stdin_as_file, *execution);

  auto yield = effective_yield(ctx, args, ctx.config.default_yield_ms);
  auto deadline = steady_clock::now() + milliseconds(yield);
  // A login handed to a person answers at once: the agent must tell someone.
  auto end = co_await wait_until(
      ctx, *execution, deadline,
      [&, left_behind = LeftBehindWatch(*execution)]() mutable {
        return execution->finished() || execution->login_held() || awaits_answer(*execution) ||
               stays_stopped(*execution) || left_behind.settled();
      },
      kAnswerRecheck);
  if (end == WaitEnd::cancelled) co_return ToolResult{};

  auto request = read_request(ctx, args);
  request.tail_preview = true;
  json result = merged(execution_result(*execution, ctx, request), extra);
  result["yield_ms"] = yield;
  note_capped_timer(result, ctx, args, "yield_ms", "yield_ms");
  describe_running(result, *execution, end, yield, *stdin_as_file);
  note_timed_out(result, *execution);
  note_full_screen(result, *execution);
  co_return ToolResult{std::move(result)};
}

namespace {
// "30 s", or "2500 ms" when not whole seconds: --default-yield-ms sets it.
std::string duration_text(std::uint32_t ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}
}  // namespace

ToolDefinition make_execute_tool(const ToolConfig& config) {
  return ToolDefinition{
      "execute",
      "Run a command",
      "Run a command under a real terminal (PTY) and return its output. Give exactly one of "
      "`command` (shell line), `argv` (no shell) or `script` (multi-line bash, syntax-checked "
      "first), and "
      "`side_effects` (required). If it ends within `yield_ms` (default " +
          duration_text(config.default_yield_ms) +
          ") you get "
          "status=completed with "
          "`exit_code` and `output`; otherwise status=backgrounded with an `execution_id`: follow "
          "it "
          "with `read`/`wait`, "
          "answer prompts with `write`, end it with `stop`. The output is the terminal's text "
          "(colours "
          "removed, progress "
          "bars collapsed); a capped response says capped=true and the `hint` names the call that "
          "continues it (an ended command's capped answer also has its last lines in "
          "`output_tail`). "
          "`waiting_for_input`=true means the program is waiting for you to type: a program that "
          "waits for input (a prompt, a REPL) returns status=backgrounded with it at once instead "
          "of "
          "after yield_ms (on a Linux host read from its /proc as locally; where that cannot tell, "
          "a host that is not Linux or here a program of another user such as su when agentty "
          "is not root, a guess: it stopped mid-line and was quiet for 2 s, 0.5 s at a password "
          "prompt); answer "
          "with `write`. Errors: "
          "status=failed_to_start means "
          "nothing ran (the message names the argument or the policy rule and the fix); timed_out "
          "means timeout_ms "
          "ended it. Programs behave as on a person's terminal (colours, prompts, pagers are set "
          "to "
          "cat). The execution runs until its whole process group has ended: a job left in the "
          "background (`server &`, nohup) keeps it running, so execute answers "
          "status=backgrounded once the command itself has ended and the job's first output has "
          "settled, not after yield_ms; `stop` ends the job. Use open for state that must persist "
          "(cd, export) between commands. "
          "On a `host` with no usable key it answers at once with held=true and handoff_reason: "
          "a person logs in on terminal_url; then wait(until=\"released\") (without the web "
          "server, --no-web, it is refused: nobody could log in).",
      input_schema(config),
      output_schema(),
      annotations(false, true, false, true),
      execute,
  };
}

}  // namespace agentty::mcp::tools
