#include "mcp/tools/session_admission.hpp"

#include <utility>

#include "mcp/tools/foreground_program.hpp"
#include "mcp/tools/session_execute.hpp"
#include "mcp/tools/unstarted_line.hpp"
#include "mcp/tools/unsubmitted_input.hpp"
#include "session/policy.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

namespace {

// Arguments of execute that only make sense for a new process, each with
// what to do instead in a session.
constexpr std::pair<const char*, const char*> kNotWithSession[] = {
    {"argv", "and give the line as command"},
    {"script", "and give the lines as command (a multi-line command runs as typed)"},
    {"host", "(the session's host was chosen by open; open a session with host, or omit session)"},
    {"user", "(the session's user was chosen by open; open a session with user, or omit session)"},
    {"port", "(the session's port was chosen by open; open a session with port, or omit session)"},
    {"cwd", "and cd inside the session (command=\"cd DIR && ...\")"},
    {"env", "and export inside the session (or prefix the command: VAR=value cmd)"},
    {"stdin", "and answer the command with write (after wait until=\"input\")"},
    {"close_stdin", "and send end-of-file with write eof=true"},
    {"cols", "and resize with write(cols, rows)"},
    {"rows", "and resize with write(cols, rows)"},
    {"name", "(a session's name is given by open)"},
};

std::string trim_trailing_newlines(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

std::string how_shell_ended(const session::Execution& execution) {
  auto status = execution.exit_status();
  return status ? status->describe() : session::to_string(execution.status());
}

Expected<std::shared_ptr<session::Execution>> session_named(ToolContext& ctx, const json& args) {
  std::string id = args["session"].get<std::string>();
  auto execution = ctx.registry.find(id);
  if (execution && !execution->shell()) {
    return make_error("session: '" + id +
                      "' is a command execution, not a shell session; follow it with "
                      "read/wait/write, or open a session with open and pass its "
                      "execution_id.");
  }
  if (!execution) {
    return make_error("session: '" + id +
                      "' is not an open shell session. Use the execution_id that open returned "
                      "(ps lists sessions with kind=session), or omit session to run a new "
                      "process.");
  }
  return execution;
}

Expected<std::string> line_to_type(ToolContext& ctx, const json& args) {
  for (const auto& [arg, fix] : kNotWithSession) {
    if (args.contains(arg)) {
      return make_error(
          std::string(arg) +
          ": does not apply with session (the command is typed into the open shell); remove it " +
          fix + ".");
    }
  }
  if (args.contains("timeout_ms")) {
    return make_error(
        "timeout_ms: does not apply with session (the shell outlives its commands); remove it. "
        "To bound a command, wait for it and end it with write keys [\"ctrl-c\"] (or close the "
        "session), or run it as its own execute without session.");
  }
  if (!args.contains("command"))
    return make_error("command: with session, give the command line as command.");
  auto side_effects = args["side_effects"].get<std::vector<std::string>>();
  if (auto ok = ctx.policy->check_side_effects(side_effects); !ok) return make_error(ok.error());
  std::string text = trim_trailing_newlines(args["command"].get<std::string>());
  if (text.empty())
    return make_error("command: is empty; give a command line to run in the session.");
  if (auto ok = ctx.policy->check_command(text); !ok) return make_error(ok.error());
  return text;
}

std::optional<ToolResult> busy_refusal(ToolContext& ctx, session::Execution& execution,
                                       bool& heuristic) {
  if (execution.finished()) {
    return session_refusal(execution, ctx,
                           "session: the shell has ended (" + how_shell_ended(execution) +
                               "); open a new session with open.");
  }
  if (auto held = held_refusal(execution, ctx, "nothing was typed", session_fields(execution)))
    return held;
  auto* shell = execution.shell();
  if (const auto* waiting = unstarted_command(*shell)) {
    if (back_without_marks(*shell, *waiting)) {
      return session_refusal(execution, ctx,
                             "session: the previous command (" + execution.redacted(waiting->text) +
                                 ") was not started with marks. " + kBackWithoutMarksNote +
                                 " Nothing was typed.");
    }
    if (asks_to_correct(execution)) {
      return session_refusal(execution, ctx,
                             "session: the previous command (" + execution.redacted(waiting->text) +
                                 ") has not started: " + kCorrectionAdvice + " Nothing was typed.");
    }
    return session_refusal(
        execution, ctx,
        "session: the previous command (" + execution.redacted(waiting->text) +
            ") was typed but the shell has not started it: it is still starting, or the shell "
            "waits for the rest of the line (an unclosed quote, a trailing backslash). "
            "wait(until=\"exit\") for it, write the rest of the line, or write(action=\"flush\") "
            "to drop it; nothing was typed.");
  }
  if (shell->line_entered()) {
    return session_refusal(
        execution, ctx,
        "session: a line entered with write (or by a person) has not come back to the prompt: "
        "the shell is about to run it, runs it, or waits for the rest of the line (an unclosed "
        "quote, a trailing backslash, a here-document). read the session to see which; write "
        "the rest of the line, or write(action=\"flush\") to drop it; nothing was typed.");
  }
  heuristic = false;
  if (!shell->command_running()) return std::nullopt;
  // wait, write and ctrl-c do nothing for a stopped foreground (kill -STOP $$).
  if (execution.suspended()) {
    return session_refusal(execution, ctx,
                           "session: the command running in this session (" +
                               execution.redacted(shell->current()->text) +
                               ") is stopped (suspended=true) and nothing will continue it: "
                               "write(action=\"resume\") continues it, stop ends the session; "
                               "nothing was typed.");
  }
  if (!execution.waiting_for_input()) {
    return session_refusal(
        execution, ctx,
        "session: a command is still running in this session (" +
            execution.redacted(shell->current()->text) +
            "). wait(until=\"exit\") for it to end (until=\"input\" for a program that "
            "reads input again, as a REPL does at its next prompt), write to answer it, write "
            "keys [\"ctrl-c\"] to interrupt it, or open another session.");
  }
  const bool alt_screen = execution.screen_modes().alt_screen;
  const auto pager = alt_screen ? std::nullopt : key_reader(execution);
  if (alt_screen || pager) {
    // vim, less, top: a command line typed there is keys (vim would edit
    // its buffer with it), whoever left the program open.
    const std::string what =
        alt_screen ? "a full-screen program (" : "a pager or editor (" + *pager + ", run by ";
    return session_refusal(
        execution, ctx,
        "session: " + what + execution.redacted(shell->current()->text) +
            ") is open in this session and reads keys, not command lines: typing this "
            "command into it would act as keystrokes. screen shows it; quit it with write "
            "(vim: one write with keys [\"esc\"], then another with input \":q\\r\", or \":q!\\r\" "
            "to drop changes; less: input \"q\"), "
            "or open another session; nothing was typed.");
  }
  if (auto pending = unsubmitted_input(execution)) {
    // git add -p answered with "y" alone: the command would only lengthen that answer.
    return session_refusal(
        execution, ctx,
        "session: the program running in this session (" +
            execution.redacted(shell->current()->text) + ") waits with " + *pending +
            ", typed by an earlier write, on its input line, not submitted: this command line "
            "would be appended to it. Submit it with write newline=true, erase it with write "
            "keys [\"ctrl-u\"], or open another session; nothing was typed.");
  }
  // sudo, ssh, passwd ask with the terminal's echo off: a command line typed
  // there would be taken as the password (and sent on as one).
  if (execution.hides_typed_line() == std::optional<bool>(true)) {
    return session_refusal(
        execution, ctx,
        "session: the program running in this session (" +
            execution.redacted(shell->current()->text) +
            ") asks for a password or another hidden answer (the terminal does not echo what "
            "is typed): this command line would be taken as that answer. Answer it with write "
            "(newline=true), handoff to a person, or write keys [\"ctrl-c\"] to cancel it; "
            "nothing was typed.");
  }
  heuristic = true;  // the foreground program reads the terminal: a nested shell or REPL
  return std::nullopt;
}

}  // namespace agentty::mcp::tools
