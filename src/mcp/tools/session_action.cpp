// write(action=...) on a shell session from open: "rearm" types the prompt
// hook again into the foreground shell (exact boundaries after a nested
// shell), "flush" drops typed-ahead input and the line being typed.
#include <chrono>
#include <regex>

#include "mcp/tools/common.hpp"
#include "mcp/tools/login_hook.hpp"
#include "mcp/tools/session_execute.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;
using session::ShellIntegration;

// readline turns echo off at every prompt, so echo off alone does not mean a
// password prompt: it must also ask for one on the cursor's line.
bool asking_for_secret(session::Execution& execution) {
  if (execution.echo_enabled() != false) return false;
  auto snapshot = execution.screen().snapshot();
  if (snapshot.cursor.row < 0 || snapshot.cursor.row >= static_cast<int>(snapshot.lines.size()))
    return true;
  static const std::regex secret(
      R"((pass(word|phrase)?|PIN|OTP|token|verification|secret|key)[^\n]*[:?]\s*$)",
      std::regex::icase);
  return std::regex_search(snapshot.lines[snapshot.cursor.row], secret);
}

// Types what `action` sends; a refusal when nothing could be typed.
std::optional<ToolResult> send_action(ToolContext& ctx, session::Execution& execution,
                                      const std::string& action) {
  if (action == "rearm") {
    if (asking_for_secret(execution)) {
      return session_refusal(
          execution, ctx,
          "action: the terminal has echo off (a password prompt?); nothing was typed. "
          "Answer the prompt first (or ask a human with handoff), then rearm at the new "
          "shell's prompt.");
    }
    // Typed on an erased line (clear_line_keys), erasing its echo (a person
    // watching sees no hook line, and the agent's text leaves it out).
    if (auto typed = retype_hook(execution); !typed)
      return session_refusal(execution, ctx, typed.error());
    return std::nullopt;
  }
  // At the shell's prompt, ctrl-c: the terminal discards typed-ahead input
  // and readline drops the line. With a program running, only ctrl-u
  // (erase the line being typed), so the program is never interrupted.
  const std::string bytes = execution.shell()->prompt_ready() ? "\x03" : "\x15";
  if (auto ok = execution.write(bytes, session::InputSource::agent); !ok)
    return session_refusal(execution, ctx, ok.error());
  return std::nullopt;
}

// What the action did, once the shell answered or the wait ran out.
void describe_action(json& result, const ShellIntegration& shell, const std::string& action,
                     std::uint64_t typed_at, WaitEnd end) {
  if (action == "rearm") {
    // A prompt alone is not proof: one left from before (marks in PS1, a zsh
    // that could not run the bash hook) comes without the hook's end mark.
    const bool armed =
        shell.prompt_ready() && !shell.line_entered() && shell.last_end_mark() > typed_at;
    result["armed"] = armed;
    // sh has no preexec hook: its marks tell where a command ended, not
    // where its output began.
    result["message"] = armed && shell.sh_marks()
                            ? "sh's marked prompt is installed in the foreground shell (sh has "
                              "no hooks): execute(session=) has exact exit codes again, and "
                              "heuristic boundaries (the output starts after the typed line's "
                              "echo)."
                        : armed
                            ? "The prompt hook is installed in the foreground shell; "
                              "execute(session=) has exact boundaries again."
                            : "The hook's line brought back no end mark: the foreground program "
                              "may be no shell agentty knows (rearm types the bash/zsh hook, "
                              "or sh's marked PS1 into sh and dash; output shows what it "
                              "answered). execute(session=) boundaries stay as they were.";
  } else {
    result["message"] = shell.prompt_ready() || end == WaitEnd::condition
                            ? "Sent ctrl-c at the shell prompt (drops typed-ahead input and the "
                              "line) or ctrl-u to the "
                              "running program (erases its current line)."
                            : "Sent; nothing printed yet.";
  }
}

}  // namespace

boost::asio::awaitable<ToolResult> session_action(ToolContext& ctx, session::Execution& execution,
                                                  const json& args) {
  auto* shell = execution.shell();
  std::string action = args["action"].get<std::string>();
  if (!shell) {
    co_return tool_error("action: " + action +
                         " applies to shell sessions started with open; this execution is a "
                         "plain command. Use input/keys instead.");
  }
  if (args.contains("input") || args.contains("keys") || args.contains("eof") ||
      args.contains("newline")) {
    co_return tool_error(
        "action: cannot be combined with input, keys, newline or eof; send them in a separate "
        "write.");
  }
  if (auto held = held_refusal(execution, ctx, "nothing was written",
                               merged(session_fields(execution), {{"ok", false}})))
    co_return std::move(*held);
  auto yield = milliseconds(effective_yield(ctx, args, 3000));
  const auto typed_at = execution.log().latest_seq();
  // send_action's own test: at a marked prompt, flush is a ctrl-c, and bash
  // draws a fresh prompt after it.
  const bool flush_at_prompt = action == "flush" && shell->prompt_ready();
  if (auto refused = send_action(ctx, execution, action)) co_return std::move(*refused);
  auto before = execution.log().latest_seq();
  auto sent_at = steady_clock::now();
  auto done = [&] {
    if (execution.finished()) return true;
    // Back at a marked prompt after the hook's line: a shell already at its
    // prompt is ready before it has even read that line.
    if (action == "rearm") return shell->prompt_ready() && !shell->line_entered();
    // The fresh prompt, not the echoed ^C going quiet: on a loaded machine
    // bash can take longer than the quiet time to draw it.
    if (flush_at_prompt) return shell->last_prompt_end() > before;
    auto quiet = execution.idle().value_or(milliseconds::max());
    return execution.log().latest_seq() > before && quiet >= milliseconds(150) &&
           steady_clock::now() - sent_at >= milliseconds(150);
  };
  auto end = co_await wait_until(ctx, execution, sent_at + yield, done, milliseconds(50));
  if (end == WaitEnd::cancelled) co_return ToolResult{};
  json result =
      merged(execution_result(execution, ctx, read_request(ctx, args)), session_fields(execution));
  result["ok"] = true;
  result["yield_ms"] = yield.count();
  note_capped_timer(result, ctx, args, "yield_ms", "yield_ms");
  describe_action(result, *shell, action, typed_at, end);
  co_return ToolResult{std::move(result)};
}

}  // namespace agentty::mcp::tools
