// write: resize the terminal and/or type into the PTY (text, keys, EOF,
// session actions), then return what the program printed back.
#include <fstream>
#include <iterator>
#include <set>

#include "base/proc_stat.hpp"
#include "mcp/tools/common.hpp"
#include "mcp/tools/foreground_program.hpp"
#include "mcp/tools/session_execute.hpp"
#include "mcp/tools/unsubmitted_input.hpp"
#include "mcp/tools/write_notes.hpp"
#include "mcp/tools/write_reply.hpp"
#include "session/key_encoder.hpp"
#include "session/policy.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

constexpr std::uint32_t kDefaultYield = 2000;
// A password is checked before the program answers (su waits 3 s after a
// wrong one).
constexpr std::uint32_t kHiddenLineYield = 5000;

// --- Command rules for typed lines -------------------------------------------
// In a session, a line the agent submits is a command when a shell reads it
// as one: the session's shell is not running a command (it is at its prompt
// or about to draw it), or the terminal's foreground process is an
// interactive shell started inside the session (`bash`, `su`, ... not yet
// rearmed; on a host, a program named like a shell). Anything else reads the line as an answer
// (python, `read`, a password prompt, ssh to another host) and is not checked.

// The argv of a process, empty if it cannot be read.
std::vector<std::string> process_argv(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  for (std::size_t at = 0; at < raw.size();) {
    auto end = raw.find('\0', at);
    if (end == std::string::npos) end = raw.size();
    argv.push_back(raw.substr(at, end - at));
    at = end + 1;
  }
  return argv;
}

// The terminal's foreground process group (field 8 of /proc/PID/stat).
std::optional<int> foreground_group(int pid) {
  auto stat = read_proc_stat(pid);
  if (!stat || stat->tpgid <= 0) return std::nullopt;
  return stat->tpgid;
}

bool shell_name(const std::string& name) {
  static const std::set<std::string> shells = {"bash", "sh",   "dash", "zsh", "ksh", "mksh",
                                               "ash",  "fish", "tcsh", "csh", "yash"};
  return shells.count(name) > 0;
}

// A shell reading commands from the terminal: no -c, no script operand.
bool interactive_shell(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string name = argv[0].substr(argv[0].rfind('/') + 1);
  if (name.starts_with('-')) name.erase(0, 1);  // a login shell
  if (!shell_name(name)) return false;
  static const std::set<std::string> with_value = {"--rcfile", "--init-file", "-o",
                                                   "+o",       "-O",          "+O"};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const auto& arg = argv[i];
    if (arg == "-c" || arg == "--command") return false;
    if (arg == "--") return i + 1 == argv.size();
    if (with_value.count(arg)) {
      ++i;
      continue;
    }
    if (arg.starts_with('-') || arg.starts_with('+')) {
      if (arg.size() > 1 && arg[0] == '-' && arg[1] != '-' && arg.find('c') != std::string::npos)
        return false;  // -ic, -lc
      continue;
    }
    return false;  // a script operand
  }
  return true;
}

// On a host the probe (awaited by the caller) names the foreground program,
// not its argv: a shell there is taken to read commands (a `bash script`
// asking with `read` gets its answers checked, the safe side). Unchecked, a
// nested bash on a host ran what a local one refused.
bool remote_reads_commands(session::Execution& execution, const session::ShellIntegration& shell) {
  if (!shell.command_running()) return true;
  if (shell_at_unmarked_prompt(execution)) return true;
  if (execution.program_in_foreground() != false) return false;  // its `read`, or no answer
  auto program = execution.foreground_program();
  return program && shell_name(*program) && shell.shell_depth() <= 1;
}

bool reads_commands(session::Execution& execution) {
  auto* shell = execution.shell();
  auto pid = execution.process_id();
  auto foreground = pid ? foreground_group(*pid) : std::nullopt;
  if (!shell) return foreground && interactive_shell(process_argv(*foreground));  // execute("bash")
  if (!pid) return remote_reads_commands(execution, *shell);
  if (!foreground) return !shell->command_running();  // /proc unreadable
  // The shell itself: its builtin `read` asks (an answer), or a prompt the hook lost.
  if (*foreground == *pid) return !shell->command_running() || shell_at_unmarked_prompt(execution);
  if (!interactive_shell(process_argv(*foreground))) return false;
  // A nested shell: a rearmed one has marks (and may be running `read`).
  return !(shell->shell_depth() > 1 && shell->command_running());
}

// nullopt: the input may be written (then `pending` is the line left open).
std::optional<ToolResult> check_typed(ToolContext& ctx, session::Execution& execution,
                                      const std::string& bytes, std::string& pending) {
  auto split = session::TypedLines::split(execution.agent_typed_line(), bytes);
  pending = std::move(split.pending);
  if (!ctx.policy || split.lines.empty() || !reads_commands(execution)) return std::nullopt;
  for (const auto& line : split.lines) {
    if (auto ok = ctx.policy->check_typed_line(line); !ok) {
      return refusal(execution, ctx, ok.error(),
                     merged({{"ok", false}, {"refused_line", line}}, session_fields(execution)));
    }
  }
  return std::nullopt;
}

constexpr std::string_view kPasteStart = "\x1b[200~";
constexpr std::string_view kPasteEnd = "\x1b[201~";

// `text` as a terminal pastes it: line endings become CR (what Enter sends),
// and when the program asked for bracketed paste (DECSET 2004) the text goes
// between its markers, so a shell or an editor takes it as one block: nothing
// runs mid-paste, and auto-indent does not indent the pasted indentation again.
Expected<std::string> pasted(const std::string& text, bool bracketed) {
  if (text.find(kPasteEnd) != std::string::npos) {
    return make_error(
        "input: holds ESC[201~, the end-of-paste marker, which would end the paste early and "
        "type the rest as keys; send this text without paste: true.");
  }
  std::string out;
  out.reserve(text.size() + kPasteStart.size() + kPasteEnd.size());
  if (bracketed) out += kPasteStart;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;  // CRLF: one CR
    out += text[i] == '\n' ? '\r' : text[i];
  }
  if (bracketed) out += kPasteEnd;
  return out;
}

// `modes`: the terminal's modes as the program set them (bracketed paste,
// application cursor keys), read once before typing.
Expected<std::string> compose_input(session::Execution& execution, const json& args,
                                    const session::ScreenModes& modes) {
  std::string bytes = args.value("input", "");
  if (args.value("paste", false)) {
    auto as_pasted = pasted(bytes, modes.bracketed_paste);
    if (!as_pasted) return as_pasted;
    bytes = std::move(*as_pasted);
  }
  if (args.value("newline", false)) bytes += "\r";
  if (args.contains("keys")) {
    for (const auto& key : args["keys"]) {
      auto encoded = session::encode_key(key.get<std::string>(), modes);
      if (!encoded) return make_error("keys: unknown key '" + key.get<std::string>() + "'");
      bytes += *encoded;
    }
  }
  if (args.value("eof", false)) {
    // The terminal ends input only at the start of a line: on a line with
    // text the first ctrl-d just hands the text over (as execute's close_stdin).
    auto pending = session::TypedLines::split(execution.agent_typed_line(), bytes).pending;
    bool open_line = !session::TypedLines::current_line(pending).empty();
    bytes += open_line ? "\x04\x04" : "\x04";
  }
  return bytes;
}

// The size cols/rows ask for (a missing one stays as it is); nullopt without either.
std::optional<pty::TerminalSize> requested_size(session::Execution& execution, const json& args) {
  if (!args.contains("cols") && !args.contains("rows")) return std::nullopt;
  auto size = execution.size();
  size.cols = args.value("cols", size.cols);
  size.rows = args.value("rows", size.rows);
  return size;
}

// Refused like a write (held, ended), so a refused call changes nothing.
std::optional<ToolResult> resize_terminal(ToolContext& ctx, session::Execution& execution,
                                          pty::TerminalSize size) {
  const json not_ok = {{"ok", false}};
  if (auto held = held_refusal(execution, ctx,
                               "the terminal was not resized and nothing was written", not_ok))
    return held;
  if (execution.finished()) {
    return refusal(execution, ctx,
                   "execution_id: execution " + execution.id() + " has ended (" +
                       session::to_string(execution.status()) +
                       "); it was not resized. Start a new one with " +
                       (execution.kind() == session::ExecutionKind::session ? "open." : "execute."),
                   not_ok);
  }
  execution.resize(size, session::InputSource::agent);
  return std::nullopt;
}

// action: a session action answers the call itself; resume continues a
// suspended program and the call goes on (to wait for its reply). A result
// when the call ends here.
boost::asio::awaitable<std::optional<ToolResult>> take_action(ToolContext& ctx, const json& args,
                                                              session::Execution& execution,
                                                              bool typing, bool resizing) {
  if (resizing)
    co_return tool_error("cols/rows: cannot be combined with action; resize in a separate write.");
  if (args["action"] != "resume") co_return co_await session_action(ctx, execution, args);
  if (typing)
    co_return tool_error(
        "action: \"resume\" cannot be combined with input, keys or eof; type in a separate "
        "write once it runs.");
  auto continued = execution.resume(session::InputSource::agent);
  if (!continued) co_return refusal(execution, ctx, continued.error(), {{"ok", false}});
  co_return std::nullopt;
}

// Resizes and types `bytes`, the command rules checked first so a refusal
// changes nothing; a result when refused.
std::optional<ToolResult> deliver(ToolContext& ctx, const json& args, session::Execution& execution,
                                  const std::string& bytes,
                                  const std::optional<pty::TerminalSize>& size) {
  std::string pending;
  if (!bytes.empty() && !execution.held() && !execution.finished()) {
    if (auto refused = check_typed(ctx, execution, bytes, pending)) return refused;
  }
  if (size) {
    if (auto refused = resize_terminal(ctx, execution, *size)) return refused;
  }
  if (bytes.empty()) return std::nullopt;
  if (auto written = execution.write(bytes, session::InputSource::agent); !written) {
    return refusal(execution, ctx, written.error(),
                   {{"ok", false}, {"input_pending_bytes", execution.queued_input_bytes()}});
  }
  // After end-of-file the terminal's line is empty whatever was typed.
  if (args.value("eof", false)) pending.clear();
  execution.set_agent_typed_line(std::move(pending));
  return std::nullopt;
}

boost::asio::awaitable<ToolResult> write(ToolContext& ctx, const json& args,
                                         std::shared_ptr<session::Execution> execution) {
  auto size = requested_size(*execution, args);
  // newline alone presses Enter ("Press Enter to continue").
  bool typing = args.contains("input") || args.contains("keys") || args.value("eof", false) ||
                args.value("newline", false);
  if (!typing && !size && !args.contains("action")) {
    co_return tool_error(
        "input: give input, newline, keys, eof, action or cols/rows (nothing to write)");
  }
  const bool resumed = args.contains("action");  // other actions answer in take_action
  if (resumed) {
    if (auto ended = co_await take_action(ctx, args, *execution, typing, size.has_value()))
      co_return std::move(*ended);
  }
  const auto modes = execution->screen_modes();
  auto bytes = compose_input(*execution, args, modes);
  if (!bytes) co_return tool_error(bytes.error());
  // ok=true would say something was typed.
  if (bytes->empty() && !size && !resumed) {
    co_return tool_error(
        "input: empty, and no keys, eof or cols/rows: nothing was written. Give the text to "
        "type, newline: true to press Enter, or keys; use read or wait to follow the output.");
  }
  const bool hidden_line = answers_hidden_line(*execution, *bytes);
  const auto seq_before = execution->log().latest_seq();
  if (!bytes->empty()) co_await await_input_answer(ctx, *execution);  // for the command rules
  const TypedInput typed{*bytes, resumed, hidden_line, at_line_prompt(*execution)};
  const bool collected = terminal_collects_lines(*execution);
  if (auto refused = deliver(ctx, args, *execution, *bytes, size)) co_return std::move(*refused);
  // Return what the program printed in reply.
  auto yield = effective_yield(ctx, args, hidden_line ? kHiddenLineYield : kDefaultYield);
  auto end = co_await wait_until(ctx, *execution, steady_clock::now() + milliseconds(yield),
                                 reply_settled(*execution, typed), milliseconds(50));
  if (end == WaitEnd::cancelled) co_return ToolResult{};
  auto request = read_request(ctx, args);
  request.tail_preview = true;  // a long reply that ends in a question shows it
  json result = merged(execution_result(*execution, ctx, request), session_fields(*execution));
  result["ok"] = true;
  note_pending_input(result, *execution);
  note_line_cut(result, collected, *bytes);
  if (!hidden_line) note_not_reading(result, *execution, typed, seq_before, end);
  note_interrupt_ignored(result, *execution, *bytes, seq_before);
  note_interrupt_unanswered(result, *execution, *bytes, seq_before);
  if (!hidden_line) note_line_unanswered(result, *execution, *bytes, seq_before);
  if (auto pending = unsubmitted_input(*execution)) {
    append_message(result, unsubmitted_input_advice(*pending));
  } else if (result.value("waiting_for_input", false)) {
    if (const std::string row = cursor_row_note(*execution); !row.empty())
      append_message(result, row);
  }
  if (args.value("paste", false)) result["bracketed_paste"] = modes.bracketed_paste;
  result["yield_ms"] = yield;
  note_capped_timer(result, ctx, args, "yield_ms", "yield_ms");
  if (size) {
    result["cols"] = execution->size().cols;
    result["rows"] = execution->size().rows;
  }
  note_full_screen(result, *execution);
  co_return ToolResult{std::move(result)};
}

json resize_inputs() {
  json size = terminal_size_inputs();  // the bounds of execute and open
  size["cols"]["description"] =
      "Resize the terminal to this width before typing (the program gets SIGWINCH).";
  size["rows"]["description"] =
      "Resize the terminal to this height before typing (the program gets SIGWINCH).";
  return size;
}

}  // namespace

ToolDefinition make_write_tool(const ToolConfig& config) {
  json properties = merged(
      {
          {"execution_id", execution_id_input()},
          {"input",
           {{"type", "string"},
            {"maxLength", 1 << 20},
            {"contentMediaType", "application/octet-stream"},
            {"description", "Text to type (raw: a NUL byte is ctrl-@)."}}},
          {"newline",
           {{"type", "boolean"}, {"description", "Press Enter after input (default false)."}}},
          {"paste",
           {{"type", "boolean"},
            {"description",
             "Send input as a terminal pastes it (default false): line endings become CR, and "
             "if the program turned on bracketed paste (bash, zsh and vim do; python3 and node "
             "REPLs do not) it goes between the paste markers, so the program takes it as one "
             "block: a shell runs nothing until Enter (newline: true or keys: [\"enter\"]), "
             "an editor does not auto-indent the pasted lines again. The answer's "
             "bracketed_paste says which happened. Command rules check every pasted line."}}},
          {"keys",
           {{"type", "array"},
            {"maxItems", 256},
            {"items",
             {{"type", "string"},
              {"enum", session::key_names()},
              {"description",
               "A key with no name here (alt-x, ctrl-shift-...) is sent as its bytes in input, "
               "e.g. input=\"\\u001bx\" for alt-x."}}},
            {"description",
             "Keys pressed after input, in order, encoded as a real terminal would (e.g. "
             "[\"ctrl-c\"], [\"up\", \"enter\"]; every ctrl-a..ctrl-z, shift-tab, insert; "
             "anything else, such as alt-x, as its bytes in input: \"\\u001bx\")."}}},
          {"eof",
           {{"type", "boolean"},
            {"description",
             "Send end-of-file (ctrl-d) last; after text left on the line (input without a "
             "newline) it is sent twice, since the terminal ends input only at the start of a "
             "line."}}},
          {"action",
           {{"type", "string"},
            {"enum", {"rearm", "flush", "resume"}},
            {"description",
             "rearm (sessions): re-inject the prompt hook after switching into a new shell "
             "(bash or zsh), or into the session's own shell after a command replaced its "
             "PROMPT_COMMAND/PS1 (bash), precmd_functions/PS1 (zsh) or PS1 (sh); "
             "flush (sessions): drop typed-ahead input and clear the line; resume: continue a "
             "program stopped by ctrl-z that no shell will continue (suspended=true), as fg "
             "would, and return what it prints."}}},
          {"yield_ms",
           capped_timer_input(config,
                              "Longest wait for the reply (default 2000; 5000 for a line typed "
                              "where the terminal does not echo, a password, which the program "
                              "checks before it answers; 3000 for an action, which waits for "
                              "the shell's prompt); returns earlier once the reply goes "
                              "quiet or the program waits for input again (the echo of the "
                              "typed text alone is not a reply; a line typed at a line "
                              "editor's prompt, gdb or a REPL, is answered at its next "
                              "prompt while the program is busy with it).")},
      },
      merged(resize_inputs(), read_inputs(config)));
  json output = merged(status_output_properties(), read_output_properties());
  output["ok"] = {{"type", "boolean"}, {"description", "True when the input was written."}};
  output["armed"] = {
      {"type", "boolean"},
      {"description",
       "action=rearm: the foreground shell is back at a prompt with the hook's marks, so "
       "execute(session=) has exact boundaries."}};
  output["input_pending_bytes"] = {
      {"type", "integer"},
      {"description",
       "Input the program has not read yet (it does not read its terminal now), still queued "
       "for it; a lower bound: what the terminal's own input buffer (a few KiB) or, on a host, "
       "the SSH window already took is not counted. Past 16 MiB a write is refused."}};
  output["bracketed_paste"] = {
      {"type", "boolean"},
      {"description",
       "paste=true: the program had bracketed paste on, so the input went between the paste "
       "markers; false: it was typed as a terminal pastes to a program that did not ask."}};
  output["refused_line"] = {
      {"type", "string"},
      {"description", "The submitted line the command rules refused (nothing was written)."}};
  output["alt_screen"] = alt_screen_output_property();
  output["yield_ms"] = {{"type", "integer"},
                        {"description", "The effective yield_ms after capping."}};
  output["cols"] = {{"type", "integer"}, {"description", "The terminal's width after a resize."}};
  output["rows"] = {{"type", "integer"}, {"description", "The terminal's height after a resize."}};
  return ToolDefinition{
      "write",
      "Type into a terminal",
      "Type into a running execution's terminal and return what the program printed in reply "
      "(waits until its reply, more than the echo of what was typed, goes quiet, the program "
      "waits for input again, or yield_ms). Use it to answer "
      "prompts, drive REPLs "
      "(python3, psql), press keys (`keys`: ctrl-c to interrupt, arrows, tab, f1..f12) or send "
      "end-of-file (`eof`). A program stopped by ctrl-z with no shell above it to continue it "
      "answers suspended=true: action=\"resume\" continues it. "
      "Input is echoed as on a terminal; a line typed at a password prompt (the terminal "
      "reads it without echoing) is not, and the answer waits past the line break the prompt "
      "prints until the program replies (\"Sorry, try again.\", its output, the next prompt) "
      "or ends. `cols`/`rows` resize the terminal first (either alone "
      "keeps the other; the program gets SIGWINCH and screen follows), with or without input. "
      "Command rules: when a shell reads the input as commands (a session whose shell is at "
      "its prompt, or an interactive shell such as `bash` in the terminal's foreground), every "
      "line it submits (newline, CR/LF in input, or the enter key; text typed by an earlier write "
      "counts once Enter submits it) is checked against the operator's command rules like "
      "execute's command. Answers to a program that reads the terminal (python, a `read` or "
      "password prompt) are not checked. "
      "Errors: a line refused by the command rules: nothing was written or resized, the error "
      "names the rule and refused_line the line; run something the rules allow instead. "
      "held=true means a human has taken over and nothing was written or resized: "
      "wait(until=\"released\") and retry; an ended execution cannot be written to (start a new "
      "one); a write that would type nothing (empty input, no keys, eof or resize) is refused.",
      object_schema(properties, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(false, true, false, true),
      for_execution(write),
  };
}

}  // namespace agentty::mcp::tools
