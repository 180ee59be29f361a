// Pieces every execution tool shares: looking up an execution, refusals,
// the cursor read fields, the status fields, schema fragments, the fields
// execute and open both fill in a new execution's spec, and the event-driven
// wait loop. Defined in common.cpp, with the schema fragments in
// tool_schemas.cpp.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/expected.hpp"
#include "mcp/tool.hpp"
#include "session/text_view.hpp"

namespace agentty::mcp::tools {

// --- schema fragments -------------------------------------------------------
json execution_id_input();
// since_seq, tail_lines, max_output_bytes, format
json read_inputs(const ToolConfig& config);
// One property each; `text` ends the description.
json max_output_bytes_input(const ToolConfig& config, const std::string& text);
json format_input(const std::string& description);
// Properties every output-bearing result has (output, cursor fields, status...).
json read_output_properties();
// cols and rows of a terminal (execute, open: the new one; write: a resize).
json terminal_size_inputs();
// What starts a new execution where: name, purpose, cwd, env, host, user,
// port, cols, rows (execute, open). Descriptions that differ per tool:
struct StartInputDescriptions {
  std::string purpose, cwd, env, host, user, port;
};
json start_inputs(const StartInputDescriptions& descriptions);
json status_output_properties();
json object_schema(json properties, std::vector<std::string> required = {});
json annotations(bool read_only, bool destructive, bool idempotent, bool open_world);
// Merges property maps.
json merged(json a, const json& b);
// How long something took, for a message: "10 s" (rounded to whole seconds).
std::string whole_seconds(std::chrono::milliseconds duration);

// --- lookups -----------------------------------------------------------------
using ToolHandler = decltype(ToolDefinition::handler);
// The handler of a tool that acts on the execution named by execution_id; it
// holds the record alive while it runs.
using ExecutionHandler = boost::asio::awaitable<ToolResult> (*)(
    ToolContext& ctx, const json& args, std::shared_ptr<session::Execution> execution);
// Looks the execution up and answers an unknown execution_id itself.
ToolHandler for_execution(ExecutionHandler handler);

// --- refusals ----------------------------------------------------------------
// A user's mistake or a refused action, with where the execution stands
// (status fields) and `extra`.
ToolResult refusal(session::Execution& execution, const ToolContext& ctx, std::string message,
                   const json& extra = json::object());
// The refusal of an agent action while a person holds the terminal; `undone`
// says what did not happen ("nothing was written"). Nothing when not held.
std::optional<ToolResult> held_refusal(session::Execution& execution, const ToolContext& ctx,
                                       const std::string& undone,
                                       const json& extra = json::object());
// execute/open: nothing was started.
ToolResult failed_to_start(std::string message);

// --- starting (execute, open) ------------------------------------------------
// A host that is not a target (named part, accepted forms), or user/port
// without host; nullopt when fine.
std::optional<std::string> ssh_options_problem(const json& args);
// Fills purpose, name, host, user, port, size, env and cwd (checked against
// the policy when local); the error names the argument.
Expected<void> fill_start_spec(const ToolContext& ctx, const json& args,
                               session::ExecutionSpec& spec);
// The live-execution limit and the total spool budget (reclaiming old records first).
Expected<void> check_start_limits(ToolContext& ctx);

// --- results -----------------------------------------------------------------
// Adds `sentence` to result["message"], after what it says already.
void append_message(json& result, std::string_view sentence);

struct ReadRequest {
  std::optional<std::uint64_t> since_seq;
  std::optional<std::size_t> tail_lines;
  std::size_t max_bytes = 20000;
  bool raw = false;
  // The first answer about an ended execution, or one waiting for input
  // (execute, wait, write): when its output does not fit, keep part of
  // max_bytes for its last lines.
  bool tail_preview = false;
  // The text view with the terminal's size (its live area: a redrawn
  // display reads as its last frame). Off where text lines are mapped back
  // to bytes (raw_length_through_line knows no size).
  bool live_area = true;
};
ReadRequest read_request(const ToolContext& ctx, const json& args);
// Output + cursor fields (+ hint); advances the server-side cursor when the
// request is cursorless.
json read_fields(session::Execution& execution, const ReadRequest& request);
// The seq where the last request.tail_lines lines of the text view begin (of
// the raw bytes with format=raw): where read(tail_lines) starts its page, for
// wait(tail_lines)'s match window.
std::uint64_t tail_lines_start(session::Execution& execution, ReadRequest request);
// The last lines of [from, to) within the tail share of `max_bytes`,
// starting at a line's start: what an answer shows of the end of an output
// too long for one page (the end holds a build's errors, a summary). None
// when max_bytes is too small to share or no whole line fits.
std::optional<session::LogPage> output_tail(const session::OutputLog& log, std::uint64_t from,
                                            std::uint64_t to, std::size_t max_bytes);
// The cap is on what the agent gets, but text can be longer than the bytes
// it comes from (an invalid byte reads as U+FFFD, three bytes; DEC line
// drawing as box characters). `read_page(budget)` gives a page of at most
// `budget` bytes and its text; a page whose text is over `limit` is read
// again, shorter, until it fits (the log keeps pages whole: a single
// sequence longer than that is returned as it is). A page whose text is
// under half of `limit` is read again, longer (up to 16 times `limit` in
// bytes), while its text fits.
using PageReader = std::function<std::pair<session::LogPage, std::string>(std::size_t budget)>;
std::pair<session::LogPage, std::string> fitted_page(const PageReader& read_page,
                                                     std::size_t budget, std::size_t limit);
// Sets output_tail / output_tail_seq (out-of-band: no cursor moves) and
// returns the hint that names the bytes between `shown_to` and the tail.
std::string add_output_tail(json& out, session::Execution& execution, const ReadRequest& request,
                            const session::LogPage& tail, std::uint64_t shown_to);
// Why output before first_retained_seq is gone, and what to do about it:
// the spool cap, the total budget, or a spool file that could not be written.
struct EvictionCause {
  std::string reason;  // "past the spool cap", ...
  std::string fix;     // a sentence
};
EvictionCause eviction_cause(const session::OutputLog& log);
// spool_limited / spool_error, when the log's spool was frozen or failed.
void add_spool_notes(json& out, const session::OutputLog& log);
// How the text view lays out the bytes [begin, end): the terminal sizes
// they were written at, and where they start on it (nothing without the
// live area).
struct TextLayout {
  session::TerminalSizes sizes;
  session::TextStart start;
};
TextLayout text_layout(const session::Execution& execution, const ReadRequest& request,
                       std::uint64_t begin, std::uint64_t end);
// Bytes as the agent reads them: raw, or the text view (with a session's
// [human] lines).
std::string rendered(session::Execution& execution, const ReadRequest& request,
                     const std::string& bytes, std::uint64_t start_seq);
// status, exit_code, signal, held, waiting_for_input, process_id, terminal_url...
json status_fields(session::Execution& execution, const ToolContext& ctx);
// Both of the above.
json execution_result(session::Execution& execution, const ToolContext& ctx,
                      const ReadRequest& request);

// --- waiting -----------------------------------------------------------------
enum class WaitEnd { condition, deadline, cancelled };
// Re-checks `done` after every change of the execution (and at least every
// `recheck`, for conditions no event announces), until it holds or the
// deadline passes. Sends progress about once a second.
boost::asio::awaitable<WaitEnd> wait_until(
    ToolContext& ctx, session::Execution& execution, std::chrono::steady_clock::time_point deadline,
    const std::function<bool()>& done,
    std::chrono::milliseconds recheck = std::chrono::milliseconds(0));

// execute: the program has been waiting for input (blocked reading the
// terminal, quiet) for kAnswerQuiet: nothing will happen until someone types,
// so waiting out the rest of yield_ms would only stall the agent. On an SSH
// host the host's /proc is asked (pty/remote_input_probe.hpp); where it
// cannot tell (locally: a program of another user, such as su at its
// password prompt, when agentty is not root), waiting_for_input is the
// Execution's guess (stopped mid-line, quiet for kGuessedInputQuiet), and the
// answer says it is a guess.
constexpr std::chrono::milliseconds kAnswerQuiet{500};
constexpr std::chrono::milliseconds kAnswerRecheck{100};
bool awaits_answer(session::Execution& execution);
// The program is stopped (ctrl-z, SIGSTOP) with no job-control shell above it
// to continue it (suspended), and has been quiet for kAnswerQuiet: as at a
// prompt, nothing happens until someone acts (write action="resume", stop),
// so execute and wait answer instead of waiting out their time. The quiet
// leaves out the moment between a session's job stopping and its shell taking
// the terminal back, when the foreground group is all stopped too.
bool stays_stopped(session::Execution& execution);
// The message of an answer that ended because of stays_stopped.
std::string stopped_message(const session::Execution& execution);
// On a host, whether a session's running program waits for input (and
// which program holds the terminal) is the answer of a probe that may still
// be on its way (~100 ms; the program printed a moment ago, as a REPL's
// prompt after a write). Waits up to kInputAnswerWait for it before a
// decision that goes by it; returns at once locally, at a prompt, or where
// no probe runs.
constexpr std::chrono::milliseconds kInputAnswerWait{2000};
boost::asio::awaitable<void> await_input_answer(ToolContext& ctx, session::Execution& execution);
// Why awaits_answer holds, for the answer's message ("It waits for input (...)").
std::string awaits_answer_reason(const session::Execution& execution);
// Why waiting_for_input is a guess for this execution (its input state is
// unknown): "this host cannot show whether ...".
std::string input_guess_cause(const session::Execution& execution);
// The guess's rule as it applies now: "it stopped mid-line ... for 2 s".
std::string input_guess_rule(const session::Execution& execution);

// The command itself has ended and only what it left in the background
// (`server &`, nohup) keeps the execution running: a sentence naming those
// and what to do; empty otherwise.
std::string left_running_note(session::Execution& execution);
// Those jobs as "name (pid N), ..."; empty while the command itself runs.
std::string left_running_names(session::Execution& execution);

// An execution that timeout_ms ended: result["message"] says so and how to
// allow more time (status timed_out alone does not say which limit applied).
void note_timed_out(json& result, session::Execution& execution);

// stop and close: signals the process group (SIGKILL after `grace`) and waits
// until it ends or 3 s past the grace. Returns what to answer at once: the
// refusal (with `refused` fields) or an empty result when the request was
// cancelled; nullopt when the wait ran (ended or not).
boost::asio::awaitable<std::optional<ToolResult>> signal_and_wait(ToolContext& ctx,
                                                                  session::Execution& execution,
                                                                  int signo,
                                                                  std::chrono::milliseconds grace,
                                                                  const json& refused);

// execute and write, while the program runs: `alt_screen`, and when it is
// true a message that the text output is a full-screen drawing flattened
// (cursor moves dropped), so the agent looks at `screen` instead.
void note_full_screen(json& result, session::Execution& execution);
json alt_screen_output_property();

// --- timers (yield_ms, wait's timeout_ms) -------------------------------------
// The schema of a timer that is capped at config.max_yield_ms: a longer
// request is accepted and clamped (the contract reports the effective value)
// instead of refused; negative and non-integer values are still refused.
// `text` is the description's start; the cap sentence is appended.
json capped_timer_input(const ToolConfig& config, const std::string& text);
// args[name] (else `fallback`) clamped to the cap.
std::uint32_t effective_timer(const ToolContext& ctx, const json& args, const std::string& name,
                              std::uint32_t fallback);
std::uint32_t effective_yield(const ToolContext& ctx, const json& args, std::uint32_t fallback);
// Appends to result["hint"] when args[name] was above the cap: what was asked,
// what applied, where the response reports it (`reported_in`) and, while the
// execution runs, the wait call that waits longer.
void note_capped_timer(json& result, const ToolContext& ctx, const json& args,
                       const std::string& name, const std::string& reported_in);
// Appends `text` to result["hint"] (a hint may say several things).
void add_hint(json& result, const std::string& text);

}  // namespace agentty::mcp::tools
