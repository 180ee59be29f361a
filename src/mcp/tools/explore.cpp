// explore: look inside a large output (stat, grep, read by line) without
// pulling it all into context; never moves the read cursor.
#include <optional>
#include <string>
#include <utility>

#include "mcp/tools/common.hpp"
#include "session/explore.hpp"

namespace agentty::mcp::tools {

namespace {

json line_json(const session::ExploreLine& line) {
  json out = {{"line", line.line_number}, {"text", line.text}};
  if (line.truncated) out["truncated"] = true;
  return out;
}

json lines_json(const std::vector<session::ExploreLine>& lines) {
  json out = json::array();
  for (const auto& line : lines) out.push_back(line_json(line));
  return out;
}

// Every answer says when the output's beginning is gone, and where line 1
// now starts: line numbers count from there.
void add_eviction(session::Execution& execution, const session::Explorer& explorer, json& out) {
  const auto s = explorer.cached_stat();
  out["evicted"] = s.evicted;
  if (!s.evicted) return;
  out["first_retained_seq"] = s.first_retained_seq;
  out["text_start_seq"] = s.text_seq;
  const auto& spool_error = execution.log().spool_error();
  std::string message =
      "Output before byte " + std::to_string(s.first_retained_seq) + " is gone for good " +
      (spool_error.empty()
           ? "(only the newest AGENTTY_MAX_SPOOL_BYTES per execution are kept, fewer once "
             "AGENTTY_MAX_TOTAL_SPOOL_BYTES is reached). "
           : "(" + spool_error + ", so only the newest bytes held in memory are kept). " +
                 eviction_cause(execution.log()).fix + " ");
  if (s.first_line_cut) {
    message += "No line end is left after it, so line 1 is the end of a line whose start is gone.";
  } else {
    message += "Line 1 is the first whole line left, from byte " + std::to_string(s.text_seq) +
               (s.text_seq > s.first_retained_seq
                    ? " (the " + std::to_string(s.text_seq - s.first_retained_seq) +
                          " bytes before it ended a line whose start is gone, and are skipped)."
                    : ".");
  }
  out["message"] = message;
  // The contract's hint for evicted, naming what is left to read.
  if (!out.contains("hint"))
    out["hint"] =
        "Read what is left from line 1 (explore op=\"read\" line_offset=0), or read "
        "with since_seq=" +
        std::to_string(s.first_retained_seq) + ".";
}

// The spool could not be read (agentty out of fds): an error, not an empty
// or short text passed off as the whole output.
std::optional<ToolResult> read_failure(const session::Explorer& explorer) {
  const auto s = explorer.cached_stat();
  if (s.read_error.empty()) return std::nullopt;
  return tool_error("explore: " + s.read_error +
                    ". The output is kept: call explore again once agentty can open files.");
}

// The ops below run their work in steps that yield to the event loop
// (session::Explorer's *_async calls), so a 1 GB output does not stall
// other calls and viewers while it is converted or searched.
using Explorer = session::Explorer;

boost::asio::awaitable<ToolResult> stat(session::Execution& execution, Explorer& explorer) {
  auto s = co_await explorer.stat_async();
  if (auto failed = read_failure(explorer)) co_return std::move(*failed);
  json out = {{"op", "stat"},
              {"execution_id", execution.id()},
              {"size_bytes", s.size_bytes},
              {"line_count", s.line_count},
              {"max_line_bytes", s.max_line_bytes},
              {"raw_bytes", s.raw_bytes}};
  add_eviction(execution, explorer, out);
  co_return ToolResult{std::move(out)};
}

boost::asio::awaitable<ToolResult> grep(session::Execution& execution, Explorer& explorer,
                                        const json& args, std::size_t max_bytes) {
  if (!args.contains("pattern"))
    co_return tool_error("pattern: is required with op=\"grep\" (a PCRE2 regular expression).");
  session::GrepOptions options;
  options.pattern = args["pattern"];
  options.ignore_case = args.value("ignore_case", false);
  options.before = args.value("before", 0);
  options.after = args.value("after", 0);
  options.limit = args.value("limit", 50);
  options.max_bytes = max_bytes;
  options.start_line = args.value("start_line", std::uint64_t{1});  // 64 bits: it wrapped at 2^32
  auto found = co_await explorer.grep_async(options);
  if (auto failed = read_failure(explorer)) co_return std::move(*failed);
  if (!found) co_return tool_error(found.error());
  json matches = json::array();
  for (const auto& match : found->matches) {
    json item = line_json(match.line);
    if (!match.before.empty()) item["before"] = lines_json(match.before);
    if (!match.after.empty()) item["after"] = lines_json(match.after);
    matches.push_back(std::move(item));
  }
  json out = {{"op", "grep"},
              {"execution_id", execution.id()},
              {"matches", matches},
              {"capped", found->capped},
              {"lines_searched", found->lines_searched}};
  if (found->lines_searched == 0 && options.start_line > 1) {
    const auto lines = explorer.cached_stat().line_count;
    out["line_count"] = lines;
    out["hint"] = "start_line=" + std::to_string(options.start_line) +
                  " is past the end: the output has " + std::to_string(lines) +
                  " lines (start_line 1.." + std::to_string(lines) + ").";
  }
  if (found->capped) {
    out["next_start_line"] = found->next_start_line;
    out["hint"] = "More matches may follow: call explore op=grep again with start_line=" +
                  std::to_string(found->next_start_line) + ", or narrow the pattern.";
  }
  add_eviction(execution, explorer, out);
  co_return ToolResult{std::move(out)};
}

boost::asio::awaitable<ToolResult> read_lines(session::Execution& execution, Explorer& explorer,
                                              const json& args, std::size_t max_bytes) {
  session::ExploreReadOptions options;
  options.line_offset = args.value("line_offset", 0LL);
  options.limit = args.value("limit", 100);
  options.max_bytes = max_bytes;
  options.byte_offset = args.value("byte_offset", 0ULL);
  auto read = co_await explorer.read_async(options);
  if (auto failed = read_failure(explorer)) co_return std::move(*failed);
  if (!read) co_return tool_error(read.error());
  json out = {{"op", "read"},
              {"execution_id", execution.id()},
              {"lines", lines_json(read->lines)},
              {"next_line_offset", read->next_line_offset},
              {"capped", read->capped},
              {"at_end", read->at_end}};
  if (read->next_byte_offset) out["next_byte_offset"] = read->next_byte_offset;
  if (read->capped) {
    // The contract: a hint whenever capped is set, naming the next call.
    out["hint"] =
        "More follows: call explore op=\"read\" with execution_id=\"" + execution.id() +
        "\" and line_offset=" + std::to_string(read->next_line_offset) +
        (read->next_byte_offset ? " and byte_offset=" + std::to_string(read->next_byte_offset) +
                                      " (the rest of a line longer than max_output_bytes)."
                                : ", or raise limit.");
  }
  if (read->lines.empty() && options.line_offset >= 0) {
    // Past the end: say how long the output is, so the next call can aim right.
    const auto lines = explorer.cached_stat().line_count;
    out["line_count"] = lines;
    out["hint"] = "line_offset=" + std::to_string(options.line_offset) +
                  " is at or past the end: the output has " + std::to_string(lines) +
                  " lines (line_offset 0.." + std::to_string(lines == 0 ? 0 : lines - 1) +
                  "). Use line_offset=-N for the last N lines" +
                  (execution.finished() ? "." : ", or wait for more output.");
  }
  add_eviction(execution, explorer, out);
  co_return ToolResult{std::move(out)};
}

// An argument the chosen op would ignore: refused, so a mixed-up call (grep
// with line_offset, read with before) does not silently answer something else.
std::optional<std::string> misplaced_argument(const std::string& op, const json& args) {
  static const std::pair<const char*, const char*> kOwnOp[] = {
      {"pattern", "grep"},    {"ignore_case", "grep"}, {"before", "grep"},      {"after", "grep"},
      {"start_line", "grep"}, {"line_offset", "read"}, {"byte_offset", "read"},
  };
  for (const auto& [arg, own] : kOwnOp) {
    if (op == own || !args.contains(arg)) continue;
    std::string fix = op == "grep" && std::string(arg) == "line_offset"
                          ? " (a grep continues with start_line, 1-based)"
                      : op == "read" && std::string(arg) == "start_line"
                          ? " (a read starts at line_offset, 0-based)"
                          : "";
    return std::string(arg) + ": only applies to op=\"" + own + "\"" + fix +
           "; remove it or use op=\"" + own + "\".";
  }
  if (op == "stat" && args.contains("limit"))
    return std::string("limit: does not apply to op=\"stat\"; remove it.");
  return std::nullopt;
}

boost::asio::awaitable<ToolResult> explore(ToolContext& ctx, const json& args,
                                           std::shared_ptr<session::Execution> execution) {
  std::string op = args["op"];
  std::size_t max_bytes =
      std::min<std::size_t>(args.value("max_bytes", 16384), ctx.config.max_output_bytes);
  if (auto problem = misplaced_argument(op, args)) co_return tool_error(*problem);
  // Held for the whole call: a budget drop of the cache meanwhile lets go
  // of it only in the execution.
  const std::shared_ptr<Explorer> explorer = execution->explorer();
  ToolResult result;
  if (op == "stat")
    result = co_await stat(*execution, *explorer);
  else if (op == "grep")
    result = co_await grep(*execution, *explorer, args, max_bytes);
  else
    result = co_await read_lines(*execution, *explorer, args, max_bytes);
  // The text cache may have grown: it counts toward AGENTTY_MAX_TOTAL_SPOOL_BYTES.
  ctx.registry.account_text_cache(*execution);
  co_return result;
}

}  // namespace

ToolDefinition make_explore_tool(const ToolConfig& config) {
  json properties = {
      {"execution_id", execution_id_input()},
      {"op",
       {{"type", "string"},
        {"enum", {"stat", "grep", "read"}},
        {"description",
         "stat: size and line count. grep: find lines matching pattern. read: a window of "
         "lines."}}},
      {"pattern",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", 4096},
        {"description",
         "PCRE2 pattern for op=grep (matched per line; Unicode: \\w and \\b know "
         "non-ASCII letters)."}}},
      {"ignore_case", {{"type", "boolean"}, {"description", "Case-insensitive grep."}}},
      {"before",
       {{"type", "integer"},
        {"minimum", 0},
        {"maximum", 100},
        {"description", "Context lines before each grep match."}}},
      {"after",
       {{"type", "integer"},
        {"minimum", 0},
        {"maximum", 100},
        {"description", "Context lines after each grep match."}}},
      {"start_line",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 9007199254740991LL},
        {"description", "grep: start at this line (next_start_line of a capped grep)."}}},
      {"line_offset",
       {{"type", "integer"},
        {"minimum", -9007199254740991LL},
        {"maximum", 9007199254740991LL},
        {"description",
         "read: first line, 0-based; negative counts from the end (-50 = the last 50 lines)."}}},
      {"byte_offset",
       {{"type", "integer"},
        {"minimum", 0},
        {"maximum", 9007199254740991LL},
        {"description", "read: continue a long line from this byte (next_byte_offset)."}}},
      {"limit",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 10000},
        {"description", "Most lines (read, default 100) or matches (grep, default 50)."}}},
      {"max_bytes",
       {{"type", "integer"},
        {"minimum", 256},
        {"maximum", config.max_output_bytes},
        {"description", "Cap on returned text (default 16384)."}}},
  };
  json line = {{"type", "object"},
               {"properties",
                {{"line", {{"type", "integer"}}},
                 {"text", {{"type", "string"}}},
                 {"truncated", {{"type", "boolean"}}}}}};
  json match = line;
  match["properties"]["before"] = {{"type", "array"}, {"items", line}};
  match["properties"]["after"] = {{"type", "array"}, {"items", line}};
  json output = {
      {"op", {{"type", "string"}}},
      {"execution_id", {{"type", "string"}}},
      {"size_bytes", {{"type", "integer"}}},
      {"line_count", {{"type", "integer"}}},
      {"max_line_bytes", {{"type", "integer"}}},
      {"raw_bytes", {{"type", "integer"}}},
      {"evicted", {{"type", "boolean"}}},
      {"first_retained_seq", {{"type", "integer"}}},
      {"text_start_seq", {{"type", "integer"}}},
      {"message", {{"type", "string"}}},
      {"matches", {{"type", "array"}, {"items", match}}},
      {"lines_searched", {{"type", "integer"}}},
      {"next_start_line", {{"type", "integer"}}},
      {"lines", {{"type", "array"}, {"items", line}}},
      {"next_line_offset", {{"type", "integer"}}},
      {"next_byte_offset", {{"type", "integer"}}},
      {"capped", {{"type", "boolean"}}},
      {"at_end", {{"type", "boolean"}}},
      {"hint", {{"type", "string"}}},
      {"error", {{"type", "string"}}},
  };
  return ToolDefinition{
      "explore",
      "Search a large output",
      "Look inside an execution's whole output (its text view, from disk) without reading it all "
      "into context, and "
      "without moving the read cursor. Start with op=stat (size, line count), then op=grep (PCRE2 "
      "pattern, with "
      "before/after context; line numbers are 1-based) to find what matters, then op=read a window "
      "of lines "
      "(line_offset 0-based; negative = from the end, e.g. -40 for the last 40 lines, where errors "
      "usually are). A "
      "capped grep gives next_start_line to continue. When the output's beginning was evicted "
      "(past the spool cap), every answer says evicted=true with a message, and line 1 is the "
      "first whole line left. Errors: an invalid pattern (PCRE2's reason "
      "and offset); "
      "unknown execution_id.",
      object_schema(properties, {"execution_id", "op"}),
      {{"type", "object"}, {"properties", output}},
      annotations(true, false, true, false),
      for_execution(explore),
  };
}

}  // namespace agentty::mcp::tools
