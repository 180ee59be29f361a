// execute(session=...): type a command into an open shell and answer with
// exactly its output (between the C and D marks) and its exit code (from the
// D mark). write's session actions are session_action.cpp.
#include "mcp/tools/session_execute.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "mcp/tools/common.hpp"
#include "mcp/tools/foreground_program.hpp"
#include "mcp/tools/login_hook.hpp"
#include "mcp/tools/session_admission.hpp"
#include "mcp/tools/unstarted_line.hpp"
#include "mcp/tools/write_notes.hpp"
#include "session/redrawn_echo.hpp"
#include "session/shell_integration.hpp"
#include "session/text_view.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;
using session::ShellIntegration;

constexpr milliseconds kPromptWait{10000};
constexpr milliseconds kHeuristicQuiet{300};
constexpr const char* kPromptRebuiltAfterHook =
    "a precmd function or PROMPT_COMMAND entry added since the session opened rebuilds the "
    "prompt after the hook";

// `text` as bash's and zsh's $'...' quoting, on one line with no control bytes.
std::string ansi_c_quoted(const std::string& text) {
  std::string quoted = "$'";
  for (unsigned char c : text) {
    if (c == '\\' || c == '\'') {
      quoted += '\\';
      quoted += static_cast<char>(c);
    } else if (c == '\n') {
      quoted += "\\n";
    } else if (c == '\t') {
      quoted += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      quoted += fmt::format("\\x{:02x}", c);
    } else {
      quoted += static_cast<char>(c);
    }
  }
  return quoted + "'";
}

// What to type so the shell reads `text` as one command line. At a prompt,
// the line is erased first (ctrl-u; in vi mode ESC S) of whatever is already
// on it (a key typed by an earlier write, a person's unfinished line after a
// takeover): the shell must run exactly `text`, the line the command rules
// checked.
std::string typed_bytes(session::Execution& execution, ShellIntegration& shell,
                        const std::string& text, bool heuristic) {
  std::string clear(heuristic ? "" : shell.clear_line_keys());
  bool multi = text.find_first_of("\n\t") != std::string::npos;
  if (shell.sh_marks()) {
    if (!multi) return clear + text + "\r";
    std::string quoted = "eval '";
    for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return clear + quoted + "'\r";
  }
  const auto program = heuristic ? execution.foreground_program() : std::nullopt;
  if (multi && execution.screen_modes().bracketed_paste && !reads_paste_as_one_line(program))
    return clear + "\x1b[200~" + text + "\x1b[201~\r";
  // A marked bash or zsh prompt whose line editor has not turned pasting on
  // (yet: zsh turns it on just after its prompt's end mark, and an execute
  // sent right after the last answer came in between, ~1 in 30): typed raw,
  // each line ran as a command of its own, a tab completed, and the answer
  // ended at the first line's end. One line of $'...' runs them as one.
  if (multi && !heuristic) return clear + "eval " + ansi_c_quoted(text) + "\r";
  // python's REPL turns pasting off, gdb is typed line by line, and their
  // readline takes a TAB for completion and drops it: quoted-insert
  // (ctrl-v; VLNEXT where python reads without readline) types the TAB the
  // command holds.
  if (heuristic && text.find('\t') != std::string::npos &&
      (is_python(program) || reads_paste_as_one_line(program))) {
    std::string quoted;
    for (char c : text) quoted += c == '\t' ? std::string("\x16\t") : std::string(1, c);
    return clear + quoted + "\r";
  }
  return clear + text + "\r";
}

// Where a line typed into a program starts: its log position, and the
// column its prompt left the cursor at.
struct TypedAt {
  std::uint64_t seq = 0;
  int column = 0;
};

// A REPL's answer starts with the line's echo, drawn from the prompt's
// column on, and some line editors draw it again in place: readline's
// redraw of a pasted line goes back to that column (CR, then CSI 8 C past
// `sqlite> `), which the text of an answer that starts at column 0 placed
// 8 columns into the first drawing ("select 'select 'a  b';"); and a redraw
// on a row of its own reads twice (redrawn_echo.hpp). Read as the screen
// shows it: from the prompt's column, once.
void read_echo_once(json& result, session::Execution& execution, const std::string& typed,
                    TypedAt at) {
  const auto start = result.value("start_seq", std::uint64_t{0});
  const auto next = result.value("next_seq", std::uint64_t{0});
  if (!result["output"].is_string() || next <= start) return;
  const auto& log = execution.log();
  const std::string bytes = log.copy_range(start, next);
  const auto width = static_cast<std::size_t>(std::max(at.column, 0));
  if (start == at.seq && width > 0 && !result.value("capped", false)) {
    auto sizes = execution.sizes_over(start, next);
    for (std::size_t k = 1; k < sizes.size(); ++k) sizes[k].offset += width;  // the blanks first
    auto text = session::to_text(std::string(width, ' ') + bytes, log.charsets_at(start), sizes,
                                 execution.text_start(start));
    const auto blanks = text.find_first_not_of(' ');
    text.erase(0, std::min({width, blanks, text.size()}));
    result["output"] = std::move(text);
  }
  if (!session::moves_up(bytes)) return;
  result["output"] = session::without_redrawn_echo(result["output"].get<std::string>(), typed);
}

// The shell read the agent's line and ran nothing (a blank line, only a
// comment): no C mark, but the prompt loop came round (a D mark) after the
// line was typed. A prompt alone is not enough: bash redraws a pasted
// multi-line command, prompt included, before it runs it.
bool ran_nothing(const ShellIntegration& shell, const session::ShellCommand& command) {
  return command.by_agent && !command.heuristic && !command.ended() && command.c_mark_seq == 0 &&
         shell.last_end_mark() > command.submitted_seq &&
         shell.last_prompt_end() > command.submitted_seq;
}

// The shell ended without starting the agent's line: a marked shell prints
// its C mark (PS0, zsh's preexec) before anything it runs, `exit` included.
bool never_started(session::Execution& execution, const session::ShellCommand& command) {
  return execution.finished() && command.by_agent && !command.heuristic && !command.ended() &&
         command.c_mark_seq == 0 && !execution.shell()->sh_marks();
}

// The command a heuristic line was typed into, once it ended and the shell
// drew its marked prompt again; nullptr while it runs. (Its own prompt_end
// stays 0: the prompt is credited to the newest command, the typed line.)
const session::ShellCommand* ended_at_prompt(const ShellIntegration& shell,
                                             std::optional<std::uint64_t> typed_into) {
  const auto* program = typed_into ? shell.find(*typed_into) : nullptr;
  const bool back = program && program->ended() && shell.prompt_ready() &&
                    shell.last_prompt_end() > program->output_end;
  return back ? program : nullptr;
}

// The last command ended (its D mark came) and the shell reads a line at a
// prompt without A/B marks, quiet: a prompt function added since the hook
// was installed (add-zsh-hook precmd, PROMPT_COMMAND+=) rebuilt the prompt
// after it, so the marked prompt is not coming. (A marked prompt's marks are
// printed before its line editor waits, so they would be in by then.)
bool ended_at_unmarked_prompt(session::Execution& execution) {
  const auto* shell = execution.shell();
  return shell->marks_seen() > 0 && !shell->command_running() && !shell->prompt_ready() &&
         shell_at_unmarked_prompt(execution) && execution.waiting_for_input() &&
         execution.idle().value_or(milliseconds::max()) >= kHeuristicQuiet;
}

// Whether a marked prompt came within `bound`; false at once when the shell
// is back at an unmarked one.
boost::asio::awaitable<bool> wait_for_prompt(ToolContext& ctx, session::Execution& execution,
                                             milliseconds bound) {
  auto* shell = execution.shell();
  co_await wait_until(ctx, execution, steady_clock::now() + bound, [&] {
    return execution.finished() || shell->prompt_ready() || ended_at_unmarked_prompt(execution);
  });
  co_return shell->prompt_ready() && !execution.finished();
}

// Whether the program waiting in the foreground may be a shell of its own
// (or a way into one), where write(action="rearm") brings back exact
// boundaries; advice about it would only distract at a REPL's prompt.
// The session's own shell reading the terminal (its builtin `read`, a
// `select` menu) is no nested shell, whatever its name: its marks still come.
// At its line editor it is at a prompt its marks no longer come from.
bool shell_itself_reads(const session::Execution& execution) {
  return execution.program_in_foreground() == true && !shell_at_unmarked_prompt(execution);
}

// A typed line the wait left before its command ended: the status and the
// message that says what to do next.
void describe_unfinished(json& result, session::Execution& execution, std::uint64_t command_id,
                         bool heuristic, WaitEnd end, std::uint32_t yield) {
  const auto* command = execution.shell()->find(command_id);
  if (execution.finished()) {
    result["message"] = "The shell ended (" + how_shell_ended(execution) +
                        ") while the command ran; open a new session to continue.";
  } else if (heuristic) {
    execution.shell()->abandon_pending(command_id);
    result["status"] = "completed";
    result["boundaries"] = "heuristic";
    result["exit_code"] = nullptr;
    const auto program = execution.foreground_program();
    if (end != WaitEnd::condition) {
      // yield_ms ran out before the program was quiet at its prompt again:
      // it still works on the line (python's time.sleep), and "completed"
      // sent agents on to a next line the busy check then refused.
      result["status"] = "backgrounded";
      result["message"] = "Typed into " + program.value_or("the program running in the session") +
                          "; it has not come back to wait for input within yield_ms (it still "
                          "runs the line, or prints on). wait(until=\"input\") for its next "
                          "prompt, or interrupt it with write keys [\"ctrl-c\"].";
    } else if (!may_be_nested_shell(program)) {
      // A REPL line: the rearm advice would be noise on every line typed.
      result["message"] = "Typed into " + *program +
                          " (running in the session), answered once its output went quiet and "
                          "it waited for input again; the output starts with the echoed line; "
                          "no exit code.";
    } else {
      result["message"] =
          "Typed into the program running in the session (no prompt marks: a nested shell or "
          "REPL, or a prompt whose PS1 and PROMPT_COMMAND were both replaced), returned once its "
          "output went quiet and it waited for input; the output includes the echoed line and "
          "the exit code is unknown. After ssh/su/bash into a bash (or that reset), "
          "write(action=\"rearm\") restores exact boundaries.";
    }
  } else if (end == WaitEnd::condition && execution.suspended()) {
    result["status"] = "backgrounded";
    result["message"] = stopped_message(execution);
  } else if (command && command->c_mark_seq == 0 && execution.waiting_for_input() &&
             asks_to_correct(execution)) {
    result["status"] = "backgrounded";
    result["message"] = std::string("The shell has not started the command: ") + kCorrectionAdvice;
  } else if (command && back_without_marks(*execution.shell(), *command) &&
             execution.waiting_for_input()) {
    result["status"] = "backgrounded";
    result["message"] = kBackWithoutMarksNote;
  } else if (command && command->c_mark_seq == 0 && execution.waiting_for_input()) {
    result["status"] = "backgrounded";
    result["message"] =
        "The shell has not started the command: it waits for the rest of the line (an unclosed "
        "quote, a trailing backslash, a here-document; the output shows its continuation "
        "prompt). write the rest of the line, or write(action=\"flush\") to drop it.";
  } else if (end == WaitEnd::condition && shell_at_unmarked_prompt(execution)) {
    // "Answer it with write" sent agents to type into what is the shell's
    // own prompt, and the answer said the boundaries were still exact.
    result["status"] = "backgrounded";
    result["message"] = kUnmarkedPromptNote;
  } else if (end == WaitEnd::condition) {
    result["status"] = "backgrounded";
    result["message"] =
        "The command waits for input (" + awaits_answer_reason(execution) +
        "), so this returned before yield_ms. Answer it with write, or keys [\"ctrl-c\"] to "
        "interrupt it.";
    // su and sudo lead into shells, but at their password prompt the rearm
    // advice is beside the point (and rearm is refused there).
    if (execution.hides_typed_line() == std::optional<bool>(true)) {
      append_message(result,
                     "It asks for a password (the terminal reads the line without echoing "
                     "it): write it with newline=true, and the answer shows whether it was "
                     "taken; or handoff to a person.");
    } else if (const std::string pager = pager_note(execution); !pager.empty()) {
      // A session keeps the user's PAGER (a person shares it); commands
      // started by execute without a session get PAGER=cat instead.
      append_message(result, pager +
                                 " To get such output without one: PAGER=cat before the "
                                 "command (git --no-pager ..., MANPAGER=cat for man).");
    } else if (const std::string editor = editor_note(execution); !editor.empty()) {
      append_message(result, editor);
    } else if (may_be_nested_shell(execution.foreground_program()) &&
               !shell_itself_reads(execution)) {
      append_message(result,
                     "A nested shell (bash, su, ssh to a bash), or this shell after a "
                     "command replaced both its PS1 and PROMPT_COMMAND (output ends with its "
                     "unmarked prompt): write(action=\"rearm\") gives exact boundaries "
                     "again; until then execute(session=) types into it heuristically.");
    } else if (const std::string row = cursor_row_note(execution); !row.empty()) {
      append_message(result, row);
    }
  } else {
    result["status"] = "backgrounded";
    result["message"] =
        "Still running after " + std::to_string(yield) +
        " ms; it continues in the session. Use wait "
        "with execution_id=\"" +
        execution.id() +
        "\" (until=\"exit\" waits for this command's end) "
        "or read to follow it, write to answer prompts, write keys [\"ctrl-c\"] to interrupt it.";
  }
}

}  // namespace

const char* const kBackWithoutMarksNote =
    "The shell drew its prompt again after the line, but printed none of the marks that start "
    "and end a command: its hook is gone (`exec bash` after an exported PS1, as a venv's "
    "activate exports it, keeps only the prompt's marks), so agentty cannot tell the line's "
    "output or exit code; the output shows what it printed. write(action=\"rearm\") puts the "
    "hook back; nothing else will.";

bool back_without_marks(const session::ShellIntegration& shell,
                        const session::ShellCommand& command) {
  return command.by_agent && !command.heuristic && !command.ended() && command.c_mark_seq == 0 &&
         shell.last_end_mark() <= command.submitted_seq &&
         shell.last_prompt_end() > command.submitted_seq;
}

const char* const kUnmarkedPromptNote =
    "The shell is back at a prompt the session's hook no longer marks: the command "
    "replaced both PS1 and PROMPT_COMMAND, or replaced the shell (exec bash). "
    "write(action=\"rearm\") brings exact boundaries and exit codes back; until then "
    "execute(session=) types into it heuristically. (The shell's own line editor reading a "
    "line for a builtin, zsh's vared or bash's read -e, looks the same: answer that with "
    "write.)";

bool shell_at_unmarked_prompt(const session::Execution& execution) {
  // readline and zle turn the line discipline and echo off and keep signals;
  // `read` and `select` keep the line discipline on (`read -n1` turns it off
  // but echoes), unless a program left the terminal raw: then signals are
  // off too (audit 43: `read` there was called an unmarked prompt, and the
  // agent's next commands were typed into it).
  return execution.program_in_foreground() == true && execution.set_for_line_editor() == true;
}

ToolResult session_refusal(session::Execution& execution, const ToolContext& ctx,
                           std::string message) {
  return refusal(execution, ctx, std::move(message), session_fields(execution));
}

const session::ShellCommand* unstarted_command(const ShellIntegration& shell) {
  if (shell.command_running()) return nullptr;
  const auto* command = shell.current();
  if (!command || !command->by_agent || command->heuristic || command->ended() ||
      command->c_mark_seq != 0)
    return nullptr;
  return ran_nothing(shell, *command) ? nullptr : command;
}

std::optional<std::uint64_t> past_command_echo(session::Execution& execution, std::uint64_t from) {
  const auto* shell = execution.shell();
  const auto* command = shell ? shell->current() : nullptr;
  if (!command || !command->by_agent || command->heuristic || from < command->submitted_seq)
    return from;
  if (command->c_mark_seq == 0)  // not started: its echo is all there is (unless it was dropped)
    return unstarted_command(*shell) == command ? std::nullopt : std::optional(from);
  return std::max(from, command->output_begin);
}

void skip_command_echo(session::Execution& execution) {
  auto cursor = execution.cursor();
  auto start = past_command_echo(execution, cursor);
  if (!start) start = execution.log().latest_seq();  // only the echo so far
  if (*start > cursor) execution.advance_cursor(*start);
}

json session_fields(session::Execution& execution, bool command_exit) {
  auto* shell = execution.shell();
  if (!shell) return json::object();
  // An ended shell runs nothing, whatever its last marks said (`exit` has no D mark).
  bool running = shell->command_running() && !execution.finished();
  bool heuristic = shell->sh_marks() ||
                   (running && execution.waiting_for_input() && !shell_itself_reads(execution));
  json out = {{"boundaries", heuristic ? "heuristic" : "exact"},
              {"command_running", running},
              // A typed line the shell has not started (a continuation prompt) is not a prompt.
              {"prompt_ready",
               shell->prompt_ready() && !unstarted_command(*shell) && !shell->line_entered()}};
  const auto* command = shell->current();
  if (command && !running && command->ended()) {
    out["command_exit_code"] = *command->exit_code;
    if (command_exit && !execution.finished()) out["exit_code"] = *command->exit_code;
  }
  return out;
}

boost::asio::awaitable<ToolResult> execute_in_session(ToolContext& ctx, const json& args) {
  // The prompt wait and the command's yield together stay within
  // --max-yield-ms, under a client's request timeout.
  const auto called_at = steady_clock::now();
  const auto call_end = called_at + milliseconds(ctx.config.max_yield_ms);
  auto found = session_named(ctx, args);
  if (!found) co_return failed_to_start(found.error());
  auto execution = std::move(found).value();
  auto text = line_to_type(ctx, args);
  if (!text) co_return failed_to_start(text.error());
  bool heuristic = false;
  // Deciding before the host's answer came refused a line for python's
  // `>>> ` as "a command is still running", which a local session types in.
  co_await await_input_answer(ctx, *execution);
  if (auto busy = busy_refusal(ctx, *execution, heuristic)) co_return std::move(*busy);
  auto* shell = execution->shell();
  if (!heuristic && !shell->prompt_ready() &&
      !co_await wait_for_prompt(
          ctx, *execution,
          std::min(kPromptWait, duration_cast<milliseconds>(call_end - steady_clock::now())))) {
    if (ended_at_unmarked_prompt(*execution))
      co_return session_refusal(
          *execution, ctx,
          std::string("session: the shell reads a line at a prompt without "
                      "the hook's marks (") +
              kPromptRebuiltAfterHook +
              "): write(action=\"rearm\") puts them back; nothing was typed.");
    co_return session_refusal(
        *execution, ctx,
        "session: the shell did not show a prompt within " +
            whole_seconds(duration_cast<milliseconds>(steady_clock::now() - called_at)) +
            "; read the session to see why, or write(action=\"flush\") and try again." +
            (execution->spec().host.empty() ? "" : std::string(" ") + kHookNeedsBash));
  }

  // Typed at python's prompt, a command keeps the newline it ended with:
  // the blank line that runs an indented block or a one-line `for i in r:
  // print(i)`, as a person types it (trimmed, the REPL sat at its `... `
  // prompt and took the next command into the block). Elsewhere a blank
  // line may repeat the last command (gdb; pdb, in the same python): the
  // habitual final newline is dropped.
  if (heuristic && args["command"].get<std::string>().ends_with('\n') &&
      at_python_prompt(*execution)) {
    *text += '\n';
  }
  auto submitted_at = steady_clock::now();
  auto submitted_seq = execution->log().latest_seq();
  // Typed into a REPL or a prompt: the command that runs it, whose end (the
  // line was `exit()`, the last answer) brings the shell's marked prompt back.
  const auto typed_into = heuristic && shell->command_running()
                              ? std::optional<std::uint64_t>(shell->current()->id)
                              : std::nullopt;
  const TypedAt typed_at{submitted_seq, heuristic ? execution->screen().cursor().col : 0};
  auto command_id = shell->submit_agent_command(*text, submitted_seq, heuristic);
  const bool collected = heuristic && terminal_collects_lines(*execution);
  if (auto ok = execution->write(typed_bytes(*execution, *shell, *text, heuristic),
                                 session::InputSource::agent);
      !ok) {
    shell->abandon_pending(command_id);
    co_return session_refusal(*execution, ctx, ok.error());
  }
  execution->set_agent_typed_line("");  // erased (clear_line_keys) or submitted with the command
  auto yield = effective_yield(ctx, args, ctx.config.default_yield_ms);
  auto done = [&] {
    if (execution->finished()) return true;
    const auto* command = shell->find(command_id);
    if (command && command->ended())
      return command->prompt_end != 0 || ended_at_unmarked_prompt(*execution);
    if (command && ran_nothing(*shell, *command)) return true;
    // Stopped with no shell to continue it (the session's own shell stopped:
    // `kill -STOP $$`; `exec prog` then ctrl-z): nothing happens until resumed.
    if (stays_stopped(*execution)) return true;
    // The command (a REPL, a nested shell, a prompt) or the shell (an
    // unclosed quote) waits for input: nothing happens until someone types.
    if (!heuristic) return awaits_answer(*execution);
    if (ended_at_prompt(*shell, typed_into)) return true;
    bool printed = execution->log().latest_seq() > submitted_seq;
    auto quiet = execution->idle().value_or(milliseconds::max());
    return printed && quiet >= kHeuristicQuiet && execution->waiting_for_input();
  };
  auto end =
      co_await wait_until(ctx, *execution, std::min(submitted_at + milliseconds(yield), call_end),
                          done, heuristic ? milliseconds(50) : kAnswerRecheck);
  if (end == WaitEnd::cancelled) co_return ToolResult{};

  auto request = read_request(ctx, args);
  json result = merged(status_fields(*execution, ctx), session_fields(*execution));
  result["yield_ms"] = yield;
  result["duration_ms"] = duration_cast<milliseconds>(steady_clock::now() - submitted_at).count();
  const auto* command = shell->find(command_id);
  if (const auto* program = ended_at_prompt(*shell, typed_into)) {
    shell->abandon_pending(command_id);  // the shell never saw this line as a command
    result = merged(result, program_ended_answer(*execution, *program, request));
  } else if (command && command->ended()) {
    result = merged(result, command_output(*execution, *command, request));
    result["status"] = "completed";
    result["exit_code"] = *command->exit_code;
    result["boundaries"] = shell->sh_marks() ? "heuristic" : "exact";
    if (command->prompt_end == 0 && ended_at_unmarked_prompt(*execution))
      result["message"] = std::string(
                              "The command ended; the shell is back at a prompt without the "
                              "hook's marks (") +
                          kPromptRebuiltAfterHook +
                          "), so the next execute(session=) would be refused: "
                          "write(action=\"rearm\") puts them back.";
  } else if (command && never_started(*execution, *command)) {
    // A shell killed just before the line was typed: its exit is not the line's.
    shell->abandon_pending(command_id);
    co_return session_refusal(*execution, ctx,
                              "session: the shell ended (" + how_shell_ended(*execution) +
                                  ") before it started the command; nothing ran. Open a new "
                                  "session with open.");
  } else if (command && ran_nothing(*shell, *command)) {
    shell->abandon_pending(command_id);  // a later C mark is not this line's
    execution->advance_cursor(shell->last_prompt_end());
    result = merged(result, read_fields(*execution, request));
    result["status"] = "completed";
    // bash and zsh refuse a line that does not parse before any hook runs:
    // it was answered as blank, exit code 0, its error left out.
    if (auto printed = printed_before_prompt(*execution, *command); !printed.empty()) {
      result["output"] = std::move(printed);
      result["exit_code"] = shell->last_end_status();
      result["message"] =
          "The shell read the line and started no command; output is what it printed instead "
          "(a syntax error when exit_code is not 0).";
    } else {
      result["exit_code"] = 0;
      result["message"] =
          "The shell read the line and ran no command (it is blank or only a comment); nothing "
          "failed.";
    }
  } else {
    if (command && command->output_begin != 0) execution->advance_cursor(command->output_begin);
    result = merged(result, read_fields(*execution, request));
    if (heuristic && !request.raw) read_echo_once(result, *execution, *text, typed_at);
    describe_unfinished(result, *execution, command_id, heuristic, end, yield);
    note_full_screen(result, *execution);  // vim, less, top run in the session
  }
  note_line_cut(result, collected, *text);
  note_capped_timer(result, ctx, args, "yield_ms", "yield_ms");  // last: a hint may be set
  co_return ToolResult{std::move(result)};
}

}  // namespace agentty::mcp::tools
