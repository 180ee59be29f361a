// The answer of execute(session=) once the typed line's command ended: its
// output between the shell's marks (capped, with its tail), or, for a line
// that ended the program it was typed into, that program's output and exit.
#include <algorithm>
#include <utility>

#include "mcp/tools/common.hpp"
#include "mcp/tools/session_execute.hpp"
#include "session/text_view.hpp"

namespace agentty::mcp::tools {

// The command's output, then what the shell printed before its next prompt
// (a prompt hook's message, a job notice): both are what a person sees.
json command_output(session::Execution& execution, const session::ShellCommand& command,
                    const ReadRequest& request) {
  auto& log = execution.log();
  json out;
  std::uint64_t next = command.output_end;
  bool capped = false;
  // The command's start may be gone (past the spool cap, a spool that could
  // not be written): the answer then starts where the log does, and says so.
  const std::uint64_t begin =
      std::min(std::max(command.output_begin, log.first_retained_seq()), command.output_end);
  const bool evicted = begin > command.output_begin;
  auto text_of = [&](std::string bytes, std::uint64_t seq) {
    if (request.raw) return bytes;
    const TextLayout layout = text_layout(execution, request, seq, seq + bytes.size());
    return session::to_text(bytes, log.charsets_at(seq), layout.sizes, layout.start);
  };
  // Too long for one page: its start, and its last lines (errors, a summary).
  auto tail = output_tail(log, begin, command.output_end, request.max_bytes);
  const std::size_t limit = request.max_bytes - (tail ? tail->bytes.size() : std::size_t{0});
  std::string text;
  if (command.output_end - begin <= request.max_bytes)
    text = text_of(log.copy_range(begin, command.output_end), begin);
  if (command.output_end - begin > request.max_bytes || text.size() > limit) {
    // A page of it whose text fits: shorter when the text is longer than
    // its bytes (binary output, line drawing), longer when much shorter
    // (colours, a redrawn display).
    auto [page, page_text] = fitted_page(
        [&](std::size_t budget) {
          auto part = log.read(begin, std::min<std::uint64_t>(budget, command.output_end - begin));
          part.capped = part.next_seq < command.output_end;
          auto part_text = text_of(part.bytes, begin);
          return std::pair{std::move(part), std::move(part_text)};
        },
        limit, limit);
    text = std::move(page_text);
    next = page.next_seq;
    capped = page.capped;
    if (tail && (!capped || next > tail->start_seq)) tail.reset();  // all of it, or one sequence
  }
  if (!capped && command.after_end > command.after_begin) {
    std::string after =
        text_of(log.copy_range(command.after_begin, command.after_end), command.after_begin);
    if (text.size() + after.size() > request.max_bytes) {
      next = command.after_begin;  // the next read starts with it
      capped = true;
    } else {
      text += after;
      next = command.after_end;
    }
  }
  out["output"] = std::move(text);
  out["start_seq"] = begin;
  out["next_seq"] = next;
  out["latest_seq"] = log.latest_seq();
  out["capped"] = capped;
  out["evicted"] = evicted;
  add_spool_notes(out, log);
  std::string hint;
  if (evicted) {
    const auto cause = eviction_cause(log);
    hint = "The command's output from byte " + std::to_string(command.output_begin) + " to byte " +
           std::to_string(begin) + " is gone for good (" + cause.reason +
           "); output starts after it. " + cause.fix + " ";
  }
  if (tail) {
    hint += add_output_tail(out, execution, request, *tail, next);
  } else if (capped) {
    hint += "The command's output is longer than max_output_bytes; read with execution_id=\"" +
            execution.id() + "\" and since_seq=" + std::to_string(next) +
            " for the rest (it ends at byte " + std::to_string(command.output_end) + ").";
  }
  if (!hint.empty()) out["hint"] = hint;
  execution.advance_cursor(capped ? next : std::max(command.prompt_end, command.output_end));
  return out;
}

std::optional<json> ended_command_rest(session::Execution& execution, const ReadRequest& request) {
  const auto* shell = execution.shell();
  if (!shell || execution.finished() || shell->sh_marks() || shell->command_running())
    return std::nullopt;
  const auto* command = shell->current();
  if (!command || command->heuristic || !command->ended() || command->prompt_end == 0)
    return std::nullopt;
  // Output before the command's own (unread earlier output, an echo not
  // skipped) is not dropped: the plain read answers then.
  const auto cursor = execution.cursor();
  if (cursor < command->output_begin || cursor > command->output_end) return std::nullopt;
  auto rest = *command;
  rest.output_begin = cursor;
  return command_output(execution, rest, request);
}

// A line typed into a program (a REPL, a nested shell) that ended it: the
// program's output since the last answer (the line's echo first) and its
// exit code, from the shell's marked prompt.
json program_ended_answer(session::Execution& execution, const session::ShellCommand& program,
                          const ReadRequest& request) {
  auto rest = program;
  rest.output_begin =
      std::min(std::max(execution.cursor(), program.output_begin), program.output_end);
  rest.prompt_end = execution.shell()->last_prompt_end();  // the cursor goes past the prompt
  json result = command_output(execution, rest, request);
  result["status"] = "completed";
  result["exit_code"] = *program.exit_code;
  result["command_exit_code"] = *program.exit_code;
  result["boundaries"] = "exact";
  result["message"] = "The line ended the program it was typed into (" +
                      execution.redacted(program.text) + ", exit code " +
                      std::to_string(*program.exit_code) +
                      "); the session is back at its shell prompt. output starts with the "
                      "line's echo.";
  return result;
}

}  // namespace agentty::mcp::tools
