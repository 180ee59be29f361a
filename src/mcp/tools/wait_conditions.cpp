// The conditions wait waits for (wait_conditions.hpp).
#include "mcp/tools/wait_conditions.hpp"

#include <algorithm>

#include "mcp/tools/common.hpp"
#include "mcp/tools/foreground_program.hpp"
#include "mcp/tools/match_progress.hpp"
#include "mcp/tools/session_execute.hpp"
#include "session/shell_integration.hpp"
#include "session/text_view.hpp"

namespace agentty::mcp::tools {

using namespace std::chrono;

namespace {

constexpr std::size_t kMatchWindow = 4 << 20;  // text searched for `match`, newest bytes

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

}  // namespace

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

WaitCondition with_question(WaitCondition condition, session::Execution& execution,
                            WaitFindings& findings) {
  auto done = [done = std::move(condition.done), &execution, &findings] {
    if (done()) return true;
    // A person at the terminal may be answering it; a server that reads
    // keys sits at the start of a line (vite's "press h + enter").
    // A session's shell at a prompt it no longer marks waits for a command,
    // not an answer: the deadline's advice (rearm) is the one to give.
    findings.asked = !execution.finished() && !execution.held() && awaits_answer(execution) &&
                     cursor_after_text(execution) &&
                     !(execution.shell() && shell_at_unmarked_prompt(execution));
    return findings.asked;
  };
  const auto recheck =
      condition.recheck.count() > 0 ? std::min(condition.recheck, kAnswerRecheck) : kAnswerRecheck;
  return {std::move(done), recheck};
}

}  // namespace agentty::mcp::tools
