// wait: block until a condition (exit, idle, match, input, released) or a
// deadline; never ends the process.
#include <algorithm>

#include "base/utf8.hpp"
#include "mcp/tools/common.hpp"
#include "mcp/tools/match_progress.hpp"
#include "mcp/tools/pattern.hpp"
#include "mcp/tools/session_execute.hpp"
#include "mcp/tools/unsubmitted_input.hpp"
#include "session/shell_integration.hpp"
#include "session/text_view.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

constexpr std::size_t kMatchWindow = 4 << 20;  // text searched for `match`, newest bytes

std::string input_guess_message(const session::Execution& execution) {
  return "waiting_for_input is a guess: " + input_guess_rule(execution) + "; " +
         input_guess_cause(execution) +
         ". A busy program that printed half a line looks the same: check the output or screen "
         "for its prompt before you write; if it is still working, wait with until=\"match\" for "
         "the prompt instead.";
}

// After a session command's D mark the shell draws its prompt, usually in
// the same read: waiting for it means prompt_ready is true in the answer and
// the prompt is not left for the next read. A prompt hook that draws no
// marked prompt is given this long.
constexpr milliseconds kPromptGrace{300};

// A session's running command has ended (its D mark) and the prompt is back
// (or kPromptGrace passed; `ended_at` remembers when the end was seen).
bool session_command_over(session::Execution& execution,
                          std::optional<steady_clock::time_point>& ended_at) {
  auto* shell = execution.shell();
  if (!shell || shell->command_running() || unstarted_command(*shell)) return false;
  const auto* command = shell->current();
  if (!command || !command->ended() || command->prompt_end != 0 || shell->prompt_ready())
    return true;
  auto now = steady_clock::now();
  if (!ended_at) ended_at = now;
  return now - *ended_at >= kPromptGrace;
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

// What a condition found out while it was checked, for the answer.
struct WaitFindings {
  std::optional<PatternMatch> found;
  bool found_on_screen = false;  // in the rows a full-screen program shows, not the text view
  std::uint64_t found_line_end = 0;
  std::string match_failure;  // PCRE2 gave up: no answer will come
  std::string read_failure;   // the output to search could not be read (out of fds)
  bool guessed = false;       // until=input held by the guess (the backend could not tell)
  std::optional<steady_clock::time_point> ended_at;  // see session_command_over
  bool stopped = false;                              // ended by stays_stopped (see with_stop)
};

// A condition: whether it holds now, looked at on every change and at
// least every `recheck` (0: only on changes).
struct WaitCondition {
  std::function<bool()> done;
  milliseconds recheck{0};
};

// In a session: the current command's end (its D mark), not the shell's; a
// command typed but not started yet (execute with a short yield_ms) has not
// ended either.
WaitCondition until_exit(session::Execution& execution, WaitFindings& findings) {
  return {
      [&] { return execution.finished() || session_command_over(execution, findings.ended_at); },
      execution.shell() ? kPromptGrace : milliseconds(0)};
}

WaitCondition until_idle(session::Execution& execution, milliseconds idle,
                         steady_clock::time_point start) {
  return {[&execution, idle, start] {
            auto waited = duration_cast<milliseconds>(steady_clock::now() - start);
            auto quiet = execution.idle().value_or(waited);
            return execution.finished() || std::min(quiet, waited) >= idle;
          },
          milliseconds(25)};
}

// Seen waiting twice, with no output in between: what a program prints
// just before it blocks reading can still be in the terminal's buffers (the
// kernel moves it to the reader's side later) when the first look finds it
// reading, and the answer then lacked that output.
WaitCondition until_input(session::Execution& execution, WaitFindings& findings) {
  std::optional<std::uint64_t> seen_waiting_at;  // latest_seq then
  return {[&execution, &findings, seen_waiting_at]() mutable {
            const auto state = execution.input_state();
            if (!execution.waiting_for_input(state)) {
              seen_waiting_at.reset();
              return execution.finished();
            }
            const auto seq = execution.log().latest_seq();
            if (seen_waiting_at != seq) {
              seen_waiting_at = seq;
              return false;
            }
            findings.guessed = state == pty::InputState::unknown;
            return true;
          },
          milliseconds(40)};
}

// The person declined the handoff in the agent's MCP client and has not
// taken it over: nobody is coming.
bool declined_in_client(session::Execution& execution, const ToolContext& ctx) {
  return !execution.held() && ctx.client_handoff &&
         ctx.client_handoff(execution.id()).state == "declined";
}

// A handoff not yet taken over is still waiting for its person.
WaitCondition until_released(session::Execution& execution, const ToolContext& ctx) {
  return {[&execution, &ctx] {
    return (!execution.held() && !execution.handoff_reason()) || execution.finished() ||
           declined_in_client(execution, ctx);
  }};
}

// The rows of a full-screen program's screen now; empty on the main screen.
std::vector<std::string> alt_screen_rows(session::Execution& execution) {
  if (!execution.screen_modes().alt_screen) return {};
  return execution.screen().snapshot().lines;
}

// A full-screen program (watch, a TUI's status line) redraws only the
// cells that changed, so its text view holds fragments: "status: done" over
// "status: pending" arrives as "   done", and a match wait on the text never
// ended. While the alt screen is up, its rows are searched too: those that
// differ from what they showed when the wait began (`before`), so a line
// still shown from earlier (vim's "written" after a second :w) is not taken
// for a new one, as a match in the text is only in output from the cursor on.
// `before` is empty (every row counts) when output after the cursor was
// unread then: the change may have come before the wait, after the agent's
// last look, and must not be missed.
bool search_alt_screen(const std::vector<std::string>& now, const Pattern& pattern,
                       const std::vector<std::string>& before, WaitFindings& findings) {
  if (now.empty()) return false;
  std::string rows;
  for (std::size_t i = 0; i < now.size(); ++i)
    rows += (i < before.size() && before[i] == now[i] ? "" : now[i]) + '\n';
  auto searched = pattern.search(rows);
  if (!searched) {
    findings.match_failure = searched.error();
    return true;
  }
  if (!*searched) return false;
  findings.found = std::move(*searched);
  findings.found_on_screen = true;
  return true;
}

// Whether output from seq `begin` (`raw`) may have switched to the alt
// screen after seq `known_to` (up to which it is known not to have): only
// an escape sequence (ESC, or CSI as C1) does that. Asking the screen ends
// the feeder's bulk skip of a flood (screen_feeder.hpp): asked at every
// wake, that cost a wait on a plain flood more than its search.
bool may_have_switched_screen(std::string_view raw, std::uint64_t begin, std::uint64_t known_to) {
  if (known_to < begin) return true;  // bytes between were not looked at
  return raw.find_first_of("\x1b\x9b", known_to - begin) != std::string_view::npos;
}

// The pattern in the text view from `from` (the newest kMatchWindow at
// most); lines searched without a match are not searched again. On the alt
// screen also in the screen's rows (search_alt_screen).
WaitCondition until_match(session::Execution& execution, const Pattern& pattern, std::uint64_t from,
                          bool cursorless, WaitFindings& findings) {
  std::uint64_t scanned_to = 0;
  std::uint64_t settled = 0;         // searched before, no match: see settled_seq
  std::uint64_t main_screen_to = 0;  // output up to which the alt screen is known to be off
  bool alt_screen_up = true;         // at the last look (at first: not looked yet)
  return {[&execution, &pattern, &findings, from, cursorless, scanned_to, settled, main_screen_to,
           alt_screen_up,
           before = from >= execution.log().latest_seq() ? alt_screen_rows(execution)
                                                         : std::vector<std::string>{}]() mutable {
    auto latest = execution.log().latest_seq();
    // Cursorless in a session: not in the echo of the line execute typed.
    auto start = cursorless ? past_command_echo(execution, from) : std::optional(from);
    if (start && cursorless) start = std::max(*start, execution.match_floor());
    if (start && latest != scanned_to) {
      scanned_to = latest;
      std::uint64_t begin =
          std::max({*start, latest > kMatchWindow ? latest - kMatchWindow : 1, settled});
      std::string raw = execution.log().copy_range(begin, latest);
      if (!execution.log().read_error().empty()) {
        findings.read_failure = execution.log().read_error();
        return true;
      }
      std::string text = session::to_text(raw, execution.log().charsets_at(begin));
      auto searched = pattern.search(text);
      if (!searched) {
        findings.match_failure = searched.error();
        return true;
      }
      findings.found = std::move(*searched);
      if (findings.found) {
        findings.found_line_end = seq_after_match_line(raw, begin, text, *findings.found);
        return true;
      }
      settled = settled_seq(raw, begin, text, pattern);
      if (alt_screen_up || may_have_switched_screen(raw, begin, main_screen_to)) {
        const auto rows = alt_screen_rows(execution);
        alt_screen_up = !rows.empty();
        if (search_alt_screen(rows, pattern, before, findings)) return true;
      }
      if (!alt_screen_up) main_screen_to = latest;
    }
    return execution.finished();
  }};
}

// exit, input and match also end once the program is stopped with nothing to
// continue it (stays_stopped): it makes no progress toward any of them until
// someone resumes it. A wait on it ran out its whole budget (55 s) and said
// "call wait again", which waits the same way for ever.
WaitCondition with_stop(WaitCondition condition, session::Execution& execution,
                        WaitFindings& findings) {
  auto done = [done = std::move(condition.done), &execution, &findings] {
    if (done()) return true;
    findings.stopped = !execution.finished() && stays_stopped(execution);
    return findings.stopped;
  };
  // No event announces a stop: looked at on a timer too.
  const auto recheck =
      condition.recheck.count() > 0 ? std::min(condition.recheck, kAnswerRecheck) : kAnswerRecheck;
  return {std::move(done), recheck};
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
  json result = merged(execution_result(*execution, ctx, request),
                       session_fields(*execution, until == "exit"));
  result["wait_result"] = result_name;
  // The answer's own reason: output that came after the condition held (a
  // REPL's prompt drawn a moment later) restarts the quiet time and would
  // make the field say false next to wait_result=waiting_for_input.
  if (result_name == "waiting_for_input") {
    result["waiting_for_input"] = true;
    // The kernel could not be asked (a host, or here a program of another
    // user): only quiet and the cursor.
    if (findings.guessed) result["message"] = input_guess_message(*execution);
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
      "Block until a condition holds or timeout_ms (<= 55 s) passes, then return the new output "
      "(advancing the "
      "cursor, like read). Conditions: exit (default), idle, match (a PCRE2 pattern such as "
      "\"Listening on port \\\\d+\"), "
      "input (the program waits for you to type), released (a human handed back control). wait "
      "never ends or "
      "signals the process: wait_result=deadline_reached means call wait again, unless its "
      "message says the program waits for an answer (then write it); wait_result=suspended: "
      "it is stopped (ctrl-z) and waits for write(action=\"resume\") or stop. A cancelled "
      "request returns at "
      "once. Errors: an invalid pattern (the message quotes PCRE2's reason and offset), or one "
      "PCRE2 gives up on (match limit: simplify it); unknown "
      "execution_id.",
      object_schema(properties, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(true, false, false, false),
      for_execution(wait),
  };
}

}  // namespace agentty::mcp::tools
