// The output page of an answer: what read, wait, execute and write return
// of an execution's output, with the cursor rules of the contract (a
// cursorless read advances the server-side cursor; since_seq and tail_lines
// are out-of-band) and the hints that name the follow-up call.
#include <algorithm>
#include <string_view>
#include <tuple>
#include <utility>

#include "base/utf8.hpp"
#include "mcp/tools/common.hpp"
#include "session/shell_integration.hpp"
#include "session/text_view.hpp"

namespace agentty::mcp::tools {

ReadRequest read_request(const ToolContext& ctx, const json& args) {
  ReadRequest request;
  if (args.contains("since_seq")) request.since_seq = args["since_seq"].get<std::uint64_t>();
  if (args.contains("tail_lines")) request.tail_lines = args["tail_lines"].get<std::size_t>();
  request.max_bytes = args.value("max_output_bytes", ctx.config.default_max_output_bytes);
  request.max_bytes = std::min(request.max_bytes, ctx.config.max_output_bytes);
  request.raw = args.value("format", "text") == "raw";
  return request;
}

TextLayout text_layout(const session::Execution& execution, const ReadRequest& request,
                       std::uint64_t begin, std::uint64_t end) {
  if (!request.live_area) return {};
  return {execution.sizes_over(begin, end), execution.text_start(begin)};
}

std::string rendered(session::Execution& execution, const ReadRequest& request,
                     const std::string& bytes, std::uint64_t start_seq) {
  if (request.raw) return bytes;
  const session::Charsets charsets = execution.log().charsets_at(start_seq);
  const TextLayout layout = text_layout(execution, request, start_seq, start_seq + bytes.size());
  return execution.shell() ? execution.shell()->agent_text(bytes, start_seq, charsets, layout.sizes,
                                                           layout.start)  // + [human]
                           : session::to_text(bytes, charsets, layout.sizes, layout.start);
}

namespace {

// Lines of a text (a final line without LF counts).
std::size_t count_lines(std::string_view text) {
  auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return lines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

// The last `lines` lines of a text view (a final line without LF counts).
std::string last_lines(std::string text, std::size_t lines) {
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  for (std::size_t found = 0; end > 0;) {
    end = text.rfind('\n', end - 1);
    if (end == std::string::npos) return text;
    if (++found == lines) return text.substr(end + 1);
  }
  return text;
}

// A page of mostly bytes that are not text (a binary file printed to the
// terminal): its U+FFFD soup tells the agent nothing, so the hint says how to
// look at the bytes instead. Both formats replace such bytes (JSON strings
// carry text), so format="raw" is no way out.
std::string binary_note(std::string_view text) {
  constexpr std::size_t kFewest = 16;  // a stray U+FFFD in real text is no sign
  std::size_t replaced = 0;
  for (auto at = text.find(kReplacementCharacter); at != std::string_view::npos;
       at = text.find(kReplacementCharacter, at + kReplacementCharacter.size()))
    ++replaced;
  if (replaced < kFewest) return {};
  const auto characters = static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !is_utf8_continuation(c); }));
  if (replaced * 10 < characters) return {};
  return "The output looks binary: " + std::to_string(replaced) + " of its " +
         std::to_string(characters) +
         " characters are bytes that are not text, shown as U+FFFD. To see the bytes, run the "
         "command through `xxd | head` or `base64`; `file` tells what it is. ";
}

// tail_lines as text. The log finds the bytes of the last N lines by raw
// LFs, but their text can hold more lines (a cursor-up redraw, as in a
// multi-bar progress display, ends a text line without a LF) or fewer (a
// last raw "line" of escapes only, empty lines a move up takes back, as the
// 30-odd a prompt_toolkit REPL reserves below its prompt): ask for more raw
// lines until the text has N (or the page is cut). The caller keeps its last N.
std::pair<session::LogPage, std::string> widened_tail(session::Execution& execution,
                                                      const ReadRequest& request) {
  constexpr std::size_t kMaxWidening = 8;
  constexpr std::size_t kMinWidenedLines = 256;
  const std::size_t wanted = *request.tail_lines;
  const auto& log = execution.log();
  session::LogPage page;
  std::string text;
  for (std::size_t raw_lines = wanted;; raw_lines *= 2) {
    std::tie(page, text) = fitted_page(
        [&](std::size_t budget) {
          auto tail = log.tail_lines(raw_lines, budget);
          auto tail_text = rendered(execution, request, tail.bytes, tail.start_seq);
          return std::pair{std::move(tail), std::move(tail_text)};
        },
        request.max_bytes, request.max_bytes);
    if (request.raw || count_lines(text) >= wanted || page.capped || page.evicted ||
        page.start_seq <= log.first_retained_seq() ||
        raw_lines >= std::max(wanted * kMaxWidening, kMinWidenedLines))
      break;
  }
  return {std::move(page), std::move(text)};
}

std::pair<session::LogPage, std::string> tail_as_text(session::Execution& execution,
                                                      const ReadRequest& request) {
  auto [page, text] = widened_tail(execution, request);
  if (!request.raw) text = last_lines(std::move(text), *request.tail_lines);
  return {std::move(page), std::move(text)};
}

}  // namespace

std::uint64_t tail_lines_start(session::Execution& execution, ReadRequest request) {
  request.live_area = false;  // its lines are mapped back to bytes
  auto [page, text] = widened_tail(execution, request);
  const std::size_t lines = count_lines(text);
  const std::size_t wanted = *request.tail_lines;
  if (request.raw || lines <= wanted) return page.start_seq;
  return page.start_seq + session::raw_length_through_line(page.bytes, lines - wanted);
}

std::pair<session::LogPage, std::string> fitted_page(const PageReader& read_page,
                                                     std::size_t budget, std::size_t limit) {
  auto [page, text] = read_page(budget);
  const bool too_long = text.size() > limit;
  for (int tries = 0; text.size() > limit && page.bytes.size() > 1 && tries < 8; ++tries) {
    const std::size_t shorter =
        std::min(page.bytes.size() - 1, page.bytes.size() * limit / text.size());
    if (shorter == 0) break;
    std::tie(page, text) = read_page(shorter);
  }
  // Text much shorter than its bytes (colours, a display redrawn in place,
  // a progress line's CRs): read on, as long as the text still fits. Not
  // bounded by the cap: a `\r` line cut between pages read as a stale frame
  // per page, glued into one line (audit 54: 700 KB of one line, 16x the
  // cap per page, read as three frames).
  constexpr std::size_t kMostBytes = std::size_t{8} << 20;
  for (int tries = 0;
       !too_long && page.capped && text.size() < limit / 2 && budget < kMostBytes && tries < 4;
       ++tries) {
    const std::size_t factor =
        std::clamp<std::size_t>(limit / std::max<std::size_t>(text.size(), 1), 2, 8);
    const std::size_t wider = std::min(kMostBytes, budget * factor);
    auto [wider_page, wider_text] = read_page(wider);
    if (wider_text.size() > limit) break;
    page = std::move(wider_page);
    text = std::move(wider_text);
    budget = wider;
  }
  return {std::move(page), std::move(text)};
}

std::optional<session::LogPage> output_tail(const session::OutputLog& log, std::uint64_t from,
                                            std::uint64_t to, std::size_t max_bytes) {
  // A quarter of the page, at most 4 KiB: the start keeps most of it. A
  // small cap (an agent saving context) still gets the last line or two,
  // which hold the error or the summary: up to half of it, 256 bytes.
  const std::size_t budget = std::min<std::size_t>(
      std::max(max_bytes / 4, std::min<std::size_t>(256, max_bytes / 2)), 4096);
  if (budget < 64 || to <= from || to - from <= max_bytes) return std::nullopt;
  session::LogPage tail;
  tail.start_seq = std::max({from, to - budget, log.first_retained_seq()});
  tail.bytes = log.copy_range(tail.start_seq, to);
  // Start after a line feed: a whole line, a whole character and escape sequence.
  auto line_end = tail.bytes.find('\n');
  if (line_end == std::string::npos || line_end + 1 == tail.bytes.size()) return std::nullopt;
  std::size_t start = line_end + 1;
  // Or at the last redraw of a progress line the tail's start cuts (CRs, no
  // LF until its end): its final state is what the agent wants of it. Not
  // from inside a string sequence (an OSC title), which BEL or ST would end.
  const std::size_t before =
      line_end > 0 && tail.bytes[line_end - 1] == '\r' ? line_end - 1 : line_end;
  const auto redraw = before > 0 ? tail.bytes.rfind('\r', before - 1) : std::string::npos;
  if (redraw != std::string::npos) {
    const std::string_view rest = std::string_view(tail.bytes).substr(redraw, before - redraw);
    if (rest.find('\a') == std::string_view::npos && rest.find("\x1b\\") == std::string_view::npos)
      start = redraw;
  }
  tail.bytes.erase(0, start);
  tail.start_seq += start;
  tail.next_seq = to;
  return tail;
}

std::string add_output_tail(json& out, session::Execution& execution, const ReadRequest& request,
                            const session::LogPage& tail, std::uint64_t shown_to) {
  out["output_tail"] = rendered(execution, request, tail.bytes, tail.start_seq);
  out["output_tail_seq"] = tail.start_seq;
  // A since_seq read left the server-side cursor where it was: the follow-up
  // must name the position itself.
  const std::string continue_from =
      request.since_seq
          ? " and since_seq=" + std::to_string(shown_to) + " to page through them"
          : " to page through them (the cursor is at byte " + std::to_string(shown_to) + ")";
  return "The output is longer than max_output_bytes: output holds its start (to byte " +
         std::to_string(shown_to) + ") and output_tail its last lines (from byte " +
         std::to_string(tail.start_seq) + "); the " + std::to_string(tail.start_seq - shown_to) +
         " bytes in between are not shown. Call read with execution_id=\"" + execution.id() + "\"" +
         continue_from + ", or explore to search them.";
}

namespace {
// What an operator does about a spool_error (a full disk, a read-only or
// removed state dir, a spool/ that is a link to somewhere not agentty's).
constexpr const char* kSpoolErrorFix =
    "Free space in the state directory or make it writable (its spool/ must be a directory of "
    "the user agentty runs as), or restart agentty with another --state-dir.";
}  // namespace

EvictionCause eviction_cause(const session::OutputLog& log) {
  if (!log.spool_error().empty())
    return {"the spool file could not be written, see spool_error", kSpoolErrorFix};
  if (log.spool_frozen_at()) {
    return {"past the spool cap or the total budget, see spool_limited",
            "Read more often, use explore, or raise AGENTTY_MAX_SPOOL_BYTES."};
  }
  return {"past the spool cap", "Read more often, use explore, or raise AGENTTY_MAX_SPOOL_BYTES."};
}

void add_spool_notes(json& out, const session::OutputLog& log) {
  // What the log can hold from now on, not what it holds yet: a running
  // execution's count would grow up to it.
  const auto kept = std::to_string(log.retention_capacity());
  if (auto frozen = log.spool_frozen_at()) {
    out["spool_limited"] =
        "The total output budget of all executions (AGENTTY_MAX_TOTAL_SPOOL_BYTES) ran out at "
        "byte " +
        std::to_string(frozen) + ": from there on this execution keeps only its newest " + kept +
        " bytes and older ones are evicted (evicted=true). The program keeps running. Read more "
        "often, use tail_lines or explore, or cleanup ended executions.";
  }
  if (!log.spool_error().empty()) {
    out["spool_error"] = log.spool_error() + ". So this execution keeps only its newest " + kept +
                         " bytes, in memory, and older ones are evicted (evicted=true). The "
                         "program keeps running. " +
                         kSpoolErrorFix;
  }
}

json read_fields(session::Execution& execution, const ReadRequest& request) {
  auto& log = execution.log();
  session::LogPage page;
  std::optional<session::LogPage> tail;
  std::string output;
  bool cursorless = !request.since_seq && !request.tail_lines;
  if (request.tail_lines) {
    std::tie(page, output) = tail_as_text(execution, request);
  } else {
    auto from = request.since_seq.value_or(execution.cursor());
    auto read_from = [&](std::size_t budget) {
      auto from_page = log.read(from, budget);
      auto text = rendered(execution, request, from_page.bytes, from_page.start_seq);
      return std::pair{std::move(from_page), std::move(text)};
    };
    std::tie(page, output) = fitted_page(read_from, request.max_bytes, request.max_bytes);
    // An ended execution's output no longer grows: show its end too. So
    // for one that waits for input: its end is the question it asks (a
    // package list, then "Do you want to continue? [Y/n]").
    if (page.capped && request.tail_preview &&
        (execution.finished() || execution.waiting_for_input()))
      tail = output_tail(log, from, log.latest_seq(), request.max_bytes);
    if (tail) {
      // A tail whose text is half the cap or more (binary bytes) shows nothing useful.
      const auto tail_text = rendered(execution, request, tail->bytes, tail->start_seq).size();
      if (tail_text > request.max_bytes / 2) {
        tail.reset();
      } else {
        std::tie(page, output) = fitted_page(read_from, request.max_bytes - tail->bytes.size(),
                                             request.max_bytes - tail_text);
      }
    }
    if (tail && page.next_seq > tail->start_seq) {  // a single sequence longer than the page
      tail.reset();
      std::tie(page, output) = fitted_page(read_from, request.max_bytes, request.max_bytes);
    }
  }
  if (cursorless) execution.advance_cursor(page.next_seq);
  json out = {
      {"output", std::move(output)},    {"start_seq", page.start_seq}, {"next_seq", page.next_seq},
      {"latest_seq", log.latest_seq()}, {"capped", page.capped},       {"evicted", page.evicted},
  };
  add_spool_notes(out, log);
  std::string hint = binary_note(out["output"].get_ref<const std::string&>());
  if (!page.read_error.empty()) {
    // An empty page would pass for no output.
    out["read_error"] = page.read_error;
    hint += "The output from byte " + std::to_string(page.start_seq) +
            " is kept but could not be read (see read_error); the cursor did not move. Read "
            "again once agentty can open files. ";
  }
  if (page.evicted) {
    const auto cause = eviction_cause(log);
    hint += "Output before byte " + std::to_string(page.start_seq) + " is gone for good (" +
            cause.reason + "); this page starts there. " + cause.fix + " ";
  }
  if (page.capped && request.tail_lines) {
    // A tail page is cut at its start: nothing more is waiting after it.
    hint += "The newest " + std::to_string(*request.tail_lines) +
            " line(s) hold more than max_output_bytes, so this page is only their last " +
            std::to_string(page.next_seq - page.start_seq) + " bytes (from byte " +
            std::to_string(page.start_seq) +
            "). Raise max_output_bytes, or page them with explore op=\"read\" line_offset=-" +
            std::to_string(*request.tail_lines) + " (execution_id=\"" + execution.id() + "\").";
  } else if (tail) {
    hint += add_output_tail(out, execution, request, *tail, page.next_seq);
  } else if (page.capped) {
    hint += "More output is waiting (" + std::to_string(log.latest_seq() - page.next_seq) +
            " bytes). Call read with execution_id=\"" + execution.id() + "\"" +
            (cursorless ? "" : " and since_seq=" + std::to_string(page.next_seq)) +
            " to continue, or use tail_lines / explore to look without paging.";
  }
  if (request.since_seq && *request.since_seq > log.latest_seq()) {
    hint += "since_seq=" + std::to_string(*request.since_seq) +
            " is past the end of the output (latest_seq " + std::to_string(log.latest_seq()) +
            "), so nothing is returned. Pass a next_seq from an earlier response, since_seq=1 "
            "to re-read from the start, or no since_seq to continue from the cursor.";
  }
  while (!hint.empty() && hint.back() == ' ') hint.pop_back();
  if (!hint.empty()) out["hint"] = hint;
  return out;
}

}  // namespace agentty::mcp::tools
