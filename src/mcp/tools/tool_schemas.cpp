// The JSON Schemas the tools share: inputs (execution_id, read's cursor and
// caps, start options, capped timers), output properties, annotations.
#include "mcp/tools/common.hpp"

namespace agentty::mcp::tools {

json execution_id_input() {
  return {{"type", "string"},
          {"minLength", 1},
          {"maxLength", 128},
          {"description",
           "The opaque execution_id returned by execute or open; pass it unchanged. The numeric "
           "process_id is not accepted."}};
}

json read_inputs(const ToolConfig& config) {
  return {
      {"since_seq",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 9007199254740991LL},
        {"description",
         "Read from this byte position (a next_seq from an earlier response; 1 = from the "
         "start). Out-of-band: does not use or move the server-side cursor."}}},
      {"tail_lines",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 100000},
        {"description",
         "Return only the newest N lines. Out-of-band; cannot be combined with since_seq."}}},
      {"max_output_bytes",
       max_output_bytes_input(config,
                              ". Output past the cap is kept; the response says capped=true.")},
      {"format",
       format_input(
           "text (default): each line as a terminal shows it (CR, backspace, cursor moves, "
           "erases and edits along the line replayed, so progress-bar redraws and edited "
           "command lines read as shown; a display redrawn in place over several rows, as "
           "tqdm, docker build or Jest draw one, reads as its latest frame), escape "
           "sequences removed, CRLF -> LF. raw: the bytes as the terminal got them, escape "
           "sequences included (bytes that "
           "are not valid UTF-8 become U+FFFD: JSON text cannot carry them).")},
  };
}

json max_output_bytes_input(const ToolConfig& config, const std::string& text) {
  return {{"type", "integer"},
          {"minimum", 1},
          {"maximum", config.max_output_bytes},
          {"description", "Cap on output bytes in this response (default " +
                              std::to_string(config.default_max_output_bytes) + ")" + text}};
}

json format_input(const std::string& description) {
  return {{"type", "string"}, {"enum", {"text", "raw"}}, {"description", description}};
}

json terminal_size_inputs() {
  return {
      {"cols",
       {{"type", "integer"},
        {"minimum", 10},
        {"maximum", 1000},
        {"description", "Terminal width (default 120)."}}},
      {"rows",
       {{"type", "integer"},
        {"minimum", 2},
        {"maximum", 500},
        {"description", "Terminal height (default 40)."}}},
  };
}

json start_inputs(const StartInputDescriptions& descriptions) {
  json properties = {
      {"name",
       {{"type", "string"},
        {"maxLength", 200},
        {"description", "A short label for ps and the dashboard."}}},
      {"purpose", {{"type", "string"}, {"maxLength", 1000}, {"description", descriptions.purpose}}},
      {"cwd",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", 4096},
        {"description", descriptions.cwd}}},
      {"env",
       {{"type", "object"},
        {"additionalProperties", {{"type", "string"}, {"maxLength", 1 << 16}}},
        {"description", descriptions.env}}},
      {"host",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", 512},
        {"description", descriptions.host}}},
      {"user",
       {{"type", "string"},
        {"minLength", 1},
        {"maxLength", 256},
        {"description", descriptions.user}}},
      {"port",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 65535},
        {"description", descriptions.port}}},
  };
  return merged(std::move(properties), terminal_size_inputs());
}

json read_output_properties() {
  auto integer = [](const char* text) { return json{{"type", "integer"}, {"description", text}}; };
  return {
      {"output", {{"type", "string"}, {"description", "Output in the requested format."}}},
      {"start_seq", integer("Byte position of the first byte returned.")},
      {"next_seq",
       integer("Byte position after the last byte returned; pass as since_seq to continue.")},
      {"latest_seq",
       integer(
           "Byte position just past the newest output byte; > next_seq means more is waiting.")},
      {"capped",
       {{"type", "boolean"},
        {"description", "The response cap cut the output; the rest is still readable."}}},
      {"evicted",
       {{"type", "boolean"},
        {"description",
         "Part of the requested range is gone for good (past the spool cap; hint says why)."}}},
      {"hint",
       {{"type", "string"},
        {"description",
         "The exact follow-up call when capped or evicted; also says when a since_seq was past "
         "the end or a timer (yield_ms, timeout_ms) was above its cap."}}},
      {"output_tail",
       {{"type", "string"},
        {"description",
         "When an ended command's output does not fit (execute, wait): its last lines, in the "
         "same format, after output's start; the bytes in between are not shown (hint says "
         "how to read them). Out-of-band: the cursor stays after output."}}},
      {"output_tail_seq", integer("Byte position where output_tail starts.")},
      {"spool_limited",
       {{"type", "string"},
        {"description",
         "Set once the total output budget of all executions ran out while this one wrote: it "
         "keeps only its newest bytes from then on; says how many."}}},
      {"spool_error",
       {{"type", "string"},
        {"description",
         "Set when this execution's output could not be written to its spool file (a full "
         "disk, a read-only or removed state directory): why, and that only its newest bytes "
         "are kept, in memory."}}},
      {"read_error",
       {{"type", "string"},
        {"description",
         "Set when the kept output could not be read back (agentty out of file descriptors): "
         "output is empty and the cursor stays; read again later."}}},
  };
}

json status_output_properties() {
  return {
      {"execution_id", {{"type", "string"}}},
      {"status",
       {{"type", "string"},
        {"enum",
         {"running", "completed", "backgrounded", "timed_out", "stopped", "failed_to_start",
          "failed"}},
        {"description",
         "completed: ended by itself within the call; backgrounded: still running after "
         "yield_ms (or waiting for input), follow with wait/read; running: what read, wait and "
         "write say of one still running (a session's shell always is); timed_out: ended by "
         "timeout_ms; stopped: ended by stop; failed_to_start / failed: see failure_reason."}}},
      {"kind", {{"type", "string"}, {"enum", {"command", "session"}}}},
      {"process_id", {{"type", {"integer", "null"}}}},
      {"exit_code",
       {{"type", {"integer", "null"}},
        {"description",
         "The program's exit code once it ended (null while it runs, or when a signal ended it). "
         "Sessions: the shell's; execute(session=) and wait(until=\"exit\") give the command's "
         "here, every session answer gives it as command_exit_code."}}},
      {"signal", {{"type", {"string", "null"}}}},
      {"held",
       {{"type", "boolean"}, {"description", "A human has taken over; agent writes are refused."}}},
      {"held_by", {{"type", "string"}}},
      {"waiting_for_input", {{"type", "boolean"}}},
      {"suspended",
       {{"type", "boolean"},
        {"description",
         "Present and true when the program was stopped by ctrl-z (SIGTSTP) and no shell above "
         "it will continue it: write(action=\"resume\") continues it, stop ends it."}}},
      {"duration_ms", {{"type", "integer"}}},
      {"terminal_url", {{"type", "string"}}},
      {"handoff_in_client",
       {{"type", "string"},
        {"enum", {"asked", "accepted", "declined", "cancelled", "failed"}},
        {"description",
         "While a handoff is open and your MCP client was asked to send the person to "
         "terminal_url: their answer there (asked: none yet; failed: the client refused)."}}},
      {"failure_reason", {{"type", "string"}}},
      {"message", {{"type", "string"}}},
      {"error", {{"type", "string"}}},
      {"boundaries",
       {{"type", "string"},
        {"enum", {"exact", "heuristic"}},
        {"description",
         "Sessions: exact while the prompt hook's marks arrive; heuristic inside a nested shell or "
         "REPL without them (quiet output + waiting_for_input)."}}},
      {"command_running",
       {{"type", "boolean"}, {"description", "Sessions: a command is running in the shell."}}},
      {"prompt_ready",
       {{"type", "boolean"},
        {"description", "Sessions: the shell shows its prompt and takes a command."}}},
      {"command_exit_code",
       {{"type", "integer"}, {"description", "Sessions: exit code of the last finished command."}}},
  };
}

json object_schema(json properties, std::vector<std::string> required) {
  json schema = {
      {"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) schema["required"] = required;
  return schema;
}

json annotations(bool read_only, bool destructive, bool idempotent, bool open_world) {
  return {{"readOnlyHint", read_only},
          {"destructiveHint", destructive},
          {"idempotentHint", idempotent},
          {"openWorldHint", open_world}};
}

namespace {
// The schema's bound on a capped timer: high enough for any wait an agent may
// ask for (a day), so that it is clamped rather than refused.
constexpr std::uint32_t kTimerInputMax = 86400000;
}  // namespace

json capped_timer_input(const ToolConfig& config, const std::string& text) {
  std::string cap = std::to_string(config.max_yield_ms);
  return {{"type", "integer"},
          {"minimum", 0},
          {"maximum", kTimerInputMax},
          {"description", text + " Capped at " + cap + " ms: a larger value is accepted, " + cap +
                              " ms applies and the response reports it."}};
}

json alt_screen_output_property() {
  return {{"type", "boolean"},
          {"description",
           "While it runs: a full-screen program (vim, less, top) is drawing; read it with "
           "screen."}};
}

}  // namespace agentty::mcp::tools
