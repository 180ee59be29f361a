// wait: block until a condition (exit, idle, match, input, released) or a
// deadline; never ends the process.
#include <algorithm>

#include "base/utf8.hpp"
#include "mcp/tools/common.hpp"
#include "mcp/tools/foreground_program.hpp"
#include "mcp/tools/pattern.hpp"
#include "mcp/tools/session_execute.hpp"
#include "mcp/tools/unsubmitted_input.hpp"
#include "mcp/tools/wait_conditions.hpp"
#include "session/shell_integration.hpp"
#include "session/text_view.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

std::string input_guess_message(const session::Execution& execution) {
  return "waiting_for_input is a guess: " + input_guess_rule(execution) + "; " +
         input_guess_cause(execution) +
         ". A busy program that printed half a line looks the same: check the output or screen "
         "for its prompt before you write; if it is still working, wait with until=\"match\" for "
         "the prompt instead.";
}

// What the arguments ask to wait for, checked: until (implied by pattern or
// idle_ms when left out), the compiled pattern, the quiet time.
struct WaitFor {
  std::string until;
  std::optional<Pattern> pattern;
  milliseconds idle{1000};
};

Expected<WaitFor> wait_for(const json& args) {
  if (args.contains("since_seq") && args.contains("tail_lines"))
    return make_error("tail_lines: cannot be combined with since_seq; use one of them.");
  WaitFor wanted;
  wanted.until = args.value(
      "until", args.contains("pattern") ? "match" : (args.contains("idle_ms") ? "idle" : "exit"));
  if (wanted.until != "idle" && args.contains("idle_ms")) {
    return make_error("idle_ms: only applies with until=\"idle\" (it was " + wanted.until +
                      "); set until=\"idle\" or remove idle_ms.");
  }
  if (wanted.until == "match") {
    if (!args.contains("pattern"))
      return make_error("pattern: is required with until=\"match\" (a PCRE2 regular expression).");
    auto compiled = Pattern::compile(args["pattern"].get<std::string>());
    if (!compiled) return make_error("pattern: " + compiled.error());
    wanted.pattern = std::move(compiled).value();
  } else if (args.contains("pattern")) {
    return make_error("pattern: only applies with until=\"match\"; set until or remove pattern.");
  }
  wanted.idle = milliseconds(args.value("idle_ms", 1000));
  return wanted;
}

// What to do after a deadline. A program that waits for input (a prompt
// that came after the wait began, a line typed without Enter) would make
// "wait again" a loop that never ends.
std::string deadline_advice(session::Execution& execution, const std::string& until) {
  const std::string again = "Call wait again to keep waiting.";
  // Stopped within the last moments of the wait (else it would have ended it).
  if (until != "released" && execution.suspended())
    return "It is stopped (suspended=true) and does not go on by itself: "
           "write(action=\"resume\") continues it, stop ends it.";
  if (until == "exit") {
    if (auto left = left_running_note(execution); !left.empty()) return left;
  }
  if (until == "input" || until == "released" || !execution.waiting_for_input()) return again;
  if (auto pending = unsubmitted_input(execution)) return unsubmitted_input_advice(*pending);
  // A session's shell at its own prompt waits for a command, not an answer.
  if (execution.shell() && !execution.shell()->command_running()) return again;
  // ...also when its marks were lost: the command it waits for has ended.
  if (execution.shell() && shell_at_unmarked_prompt(execution)) return kUnmarkedPromptNote;
  return "It waits for input (waiting_for_input=true): a prompt goes on only once it is "
         "answered, so answer it with write (or end it: keys [\"ctrl-c\"], stop); a server "
         "that also reads its terminal (keyboard shortcuts) looks the same, and then waiting "
         "again is right.";
}

// A match wait that ran out, whose pattern is in output from before `from`
// (up to kEarlierLookBack back): the line it is on. The usual cause is the
// line having come in execute's own answer (a server's "Listening on..."):
// wait looks only at output from the cursor on, and would never see it.
constexpr std::uint64_t kEarlierLookBack = 256 << 10;
std::optional<std::string> earlier_match(session::Execution& execution, const Pattern& pattern,
                                         std::uint64_t from) {
  const auto& log = execution.log();
  const std::uint64_t begin = std::max<std::uint64_t>(
      log.first_retained_seq(), from > kEarlierLookBack ? from - kEarlierLookBack : 1);
  if (begin >= from) return std::nullopt;
  auto searched =
      pattern.search(session::to_text(log.copy_range(begin, from), log.charsets_at(begin)));
  if (!searched || !*searched) return std::nullopt;
  std::string line = std::move((*searched)->line);
  constexpr std::size_t kShown = 200;
  if (line.size() > kShown) {
    line = line.substr(0, utf8_char_start(line, kShown)) + "...";
  }
  return line;
}

// wait_result: why the wait ended.
std::string wait_result_name(WaitEnd end, const std::string& until, const WaitFindings& findings,
                             session::Execution& execution) {
  if (end == WaitEnd::deadline) return "deadline_reached";
  if (findings.found) return "matched";
  if (findings.stopped) return "suspended";
  if (findings.asked) return "waiting_for_input";
  if (until == "exit" && execution.shell()) return "exited";  // the session's command
  if (execution.finished()) return "exited";
  if (until == "idle") return "idle";
  if (until == "input") return "waiting_for_input";
  return "released";
}

boost::asio::awaitable<ToolResult> wait(ToolContext& ctx, const json& args,
                                        std::shared_ptr<session::Execution> execution) {
  auto wanted = wait_for(args);
  if (!wanted) co_return tool_error(wanted.error());
  const std::string until = wanted->until;
  std::uint32_t budget = effective_timer(ctx, args, "timeout_ms", ctx.config.max_yield_ms);
  auto start = steady_clock::now();
  auto request = read_request(ctx, args);
  request.tail_preview = true;  // an ended program's answer shows its end too
  const bool cursorless = !request.since_seq && !request.tail_lines;
  // Where a match may start: since_seq, the newest tail_lines (both
  // out-of-band), else the server-side cursor.
  std::uint64_t from = request.since_seq.value_or(execution->cursor());
  if (request.tail_lines) from = tail_lines_start(*execution, request);

  WaitFindings findings;
  WaitCondition condition =
      until == "exit"       ? until_exit(*execution, findings)
      : until == "idle"     ? until_idle(*execution, wanted->idle, start)
      : until == "input"    ? until_input(*execution, findings)
      : until == "released" ? until_released(*execution, ctx)
                            : until_match(*execution, *wanted->pattern, from, cursorless, findings);
  // Locally only: on a host each look is a probe on the host (its answers
  // age in 2 s), which a long quiet wait for exit never cost before.
  if (until != "idle" && until != "released" && execution->spec().host.empty())
    condition = with_stop(std::move(condition), *execution, findings);
  if (until == "exit" && execution->spec().host.empty())
    condition = with_question(std::move(condition), *execution, findings);
  // Nobody holds it and no handoff is pending: the answer comes at once, and
  // says why, so it is not mistaken for a person having handed it back.
  bool nothing_held = until == "released" && condition.done() && !execution->finished() &&
                      !declined_in_client(*execution, ctx);
  auto end = co_await wait_until(ctx, *execution, start + milliseconds(budget), condition.done,
                                 condition.recheck);
  if (end == WaitEnd::cancelled) co_return ToolResult{};
  // Said at once: the same search would fail at every wake, and the wait
  // answered deadline_reached (or exited) as if the text had no match.
  if (!findings.match_failure.empty()) {
    co_return refusal(*execution, ctx,
                      "pattern: " + findings.match_failure + "; nothing was read.");
  }
  // Not a search that found nothing: the output is kept but unreadable now.
  if (!findings.read_failure.empty()) {
    co_return refusal(*execution, ctx,
                      "wait: " + findings.read_failure +
                          "; nothing was searched or read. The output is kept: wait again once "
                          "agentty can open files.");
  }
  if (cursorless) {
    skip_command_echo(*execution);
    if (findings.found && !findings.found_on_screen)
      execution->raise_match_floor(findings.found_line_end);
  }

  std::string result_name = wait_result_name(end, until, findings, *execution);
  const bool declined = result_name == "released" && declined_in_client(*execution, ctx);
  if (declined) result_name = "declined";
  // A session command's end: its output as execute(session=) answers it,
  // without the next prompt.
  std::optional<json> rest;
  if (cursorless && result_name == "exited") rest = ended_command_rest(*execution, request);
  json result = merged(merged(status_fields(*execution, ctx),
                              rest ? std::move(*rest) : read_fields(*execution, request)),
                       session_fields(*execution, until == "exit"));
  result["wait_result"] = result_name;
  if (findings.asked) {
    result["message"] = std::string(
        "This answered before the end: the program waits for input with the cursor after "
        "text (a question, a prompt), so it goes on only once answered. Answer it with write, "
        "or end it (keys [\"ctrl-c\"], stop); wait again after answering.");
    if (auto pending = unsubmitted_input(*execution))
      append_message(result, unsubmitted_input_advice(*pending));
    if (const std::string keys = key_reader_note(*execution); !keys.empty())
      append_message(result, keys);
  }
  // The answer's own reason: output that came after the condition held (a
  // REPL's prompt drawn a moment later) restarts the quiet time and would
  // make the field say false next to wait_result=waiting_for_input.
  if (result_name == "waiting_for_input") {
    result["waiting_for_input"] = true;
    // The kernel could not be asked (a host, or here a program of another
    // user): only quiet and the cursor.
    if (findings.guessed) result["message"] = input_guess_message(*execution);
    if (const std::string row = cursor_row_note(*execution); !row.empty())
      append_message(result, row);
  }
  result["waited_ms"] = duration_cast<milliseconds>(steady_clock::now() - start).count();
  result["max_wait_ms"] = budget;
  result["timeout_ms"] = budget;
  note_capped_timer(result, ctx, args, "timeout_ms", "max_wait_ms");
  note_timed_out(result, *execution);
  if (const auto& found = findings.found)
    result["match"] = {{"text", found->text},
                       {"groups", found->groups},
                       {"line", found->line},
                       {"source", findings.found_on_screen ? "screen" : "text"}};
  if (end == WaitEnd::deadline) {
    result["message"] = "The wait budget ran out; the execution is " +
                        session::to_string(execution->status()) + " and was not touched. " +
                        deadline_advice(*execution, until);
    if (wanted->pattern) {
      if (auto line = earlier_match(*execution, *wanted->pattern, from)) {
        append_message(
            result,
            "The pattern is in output from before where this wait looked (a line an earlier "
            "answer returned): \"" +
                *line +
                "\". wait(until=\"match\") looks only at output after the cursor; since_seq=1 "
                "searches from the start.");
      }
    }
  }
  if (result_name == "suspended") result["message"] = stopped_message(*execution);
  if (declined) {
    result["message"] =
        "The person declined the handoff in your MCP client (handoff_in_client), so nobody is "
        "coming; the execution was not touched and stays highlighted on the dashboard. Do "
        "something else, or ask them another way.";
  }
  if (nothing_held) {
    result["message"] =
        "Not held: no person has taken this execution over and no handoff is pending, so there "
        "was nothing to wait for. until=\"released\" is for after handoff or while held=true.";
  }
  co_return ToolResult{std::move(result)};
}

}  // namespace

ToolDefinition make_wait_tool(const ToolConfig& config) {
  json properties = merged(
      {
          {"execution_id", execution_id_input()},
          {"until",
           {{"type", "string"},
            {"enum", {"exit", "idle", "match", "input", "released"}},
            {"description",
             "exit (default; match when pattern is given, idle when idle_ms is): the process "
             "group ended (in a "
             "session: the running command). idle: no output for idle_ms. match: "
             "`pattern` "
             "appears in the output's text from the cursor on (from since_seq, or in the newest "
             "tail_lines, when given; cursorless: never before the end of "
             "the "
             "line of the match it last reported, which a capped page may leave ahead of the "
             "cursor). input: the program waits for input (read from /proc, also on a Linux SSH "
             "host; "
             "where that cannot tell, a host or here a program of another user such as su, a "
             "guess: it stopped "
             "mid-line and has been quiet for 2 s, or 0.5 s where the terminal reads a line "
             "without echoing it, a password prompt; the answer's message says so). "
             "released: a human released a takeover (or declined the handoff in your MCP "
             "client: wait_result=declined). exit, match and input also end, "
             "wait_result=suspended, when the program is stopped (ctrl-z) with no shell to "
             "continue it: write(action=\"resume\") continues it."}}},
          {"pattern",
           {{"type", "string"},
            {"minLength", 1},
            {"maxLength", 4096},
            {"description",
             "PCRE2 pattern for until=match, searched in the text view (multi-line mode; "
             "Unicode: \\w and \\b know non-ASCII letters); while a full-screen program draws "
             "(alt_screen: watch, a TUI), also in the rows of its screen that changed since the "
             "wait began (match.source=screen), since it redraws only the cells that change."}}},
          {"idle_ms",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", 55000},
            {"description",
             "Quiet time for until=idle (default 1000); given alone it implies until=idle."}}},
          {"timeout_ms", capped_timer_input(config,
                                            "Longest wait (default: the cap). Reaching it returns "
                                            "wait_result=deadline_reached; the process keeps "
                                            "running.")},
      },
      read_inputs(config));
  json output = merged(status_output_properties(), read_output_properties());
  output["wait_result"] = {{"type", "string"},
                           {"enum",
                            {"exited", "idle", "matched", "waiting_for_input", "released",
                             "declined", "suspended", "deadline_reached"}}};
  output["waited_ms"] = {{"type", "integer"}};
  output["max_wait_ms"] = {{"type", "integer"},
                           {"description", "The effective budget after capping."}};
  output["timeout_ms"] = {
      {"type", "integer"},
      {"description", "The effective timeout_ms after capping (= max_wait_ms)."}};
  output["match"] = {{"type", "object"},
                     {"properties",
                      {{"text", {{"type", "string"}}},
                       {"groups", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                       {"line", {{"type", "string"}}},
                       {"source",
                        {{"type", "string"},
                         {"enum", {"text", "screen"}},
                         {"description",
                          "text: in the output's text view; screen: in a row a full-screen "
                          "program (alt_screen) redrew since the wait began, as the screen "
                          "shows it (the text view has only the cells that changed)."}}}}}};
  return ToolDefinition{
      "wait",
      "Wait for an execution",
      "Block until a condition holds or timeout_ms (<= " + std::to_string(config.max_yield_ms) +
          " ms) passes, then return the new output (advancing the cursor, like read). "
          "Conditions: exit (default), idle, match (a PCRE2 pattern such as \"Listening on port "
          "\\\\d+\"), input (the program waits for you to type), released (a human handed back "
          "control). wait never ends or signals the process: wait_result=deadline_reached means "
          "call wait again, unless its message says the program waits for an answer (then write "
          "it); wait_result=suspended: it is stopped (ctrl-z) and waits for "
          "write(action=\"resume\") or stop. A cancelled request returns at once. Errors: an "
          "invalid pattern (the message quotes PCRE2's reason and offset), or one PCRE2 gives up "
          "on (match limit: simplify it); unknown execution_id.",
      object_schema(properties, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(true, false, false, false),
      for_execution(wait),
  };
}

}  // namespace agentty::mcp::tools
