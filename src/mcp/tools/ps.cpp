// ps: list executions with their activity.
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "mcp/tools/common.hpp"
#include "mcp/tools/session_execute.hpp"
#include "session/display_command.hpp"
#include "session/shell_integration.hpp"

namespace agentty::mcp::tools {

namespace {

std::string iso8601(session::SystemTime time) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::ostringstream out;
  out << std::put_time(&utc, "%Y-%m-%dT%H:%M:%S") << '.' << std::setw(3) << std::setfill('0')
      << ms % 1000 << 'Z';
  return out.str();
}

// Where a session's shell is now: it cds, and spec.cwd is only where it
// started. The hook reports it at each prompt (from the innermost marked
// shell: after `ssh` and rearm, the remote one); before a marked prompt, and
// for sh, a local shell's /proc cwd. Null once the shell has ended.
json shell_cwd(session::Execution& execution) {
  if (execution.finished()) return nullptr;
  if (const auto* shell = execution.shell(); shell && shell->shell_cwd())
    return execution.redacted(*shell->shell_cwd());
  auto pid = execution.process_id();
  if (!pid || !execution.spec().host.empty()) return nullptr;
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/" + std::to_string(*pid) + "/cwd", error);
  return error ? json(nullptr) : json(path.string());
}

// A session's command_text is the shell's path: say it is a session, and
// what runs in it now (the command a person or the agent typed).
void describe_session(session::Execution& execution, json& item) {
  item["command"] = session::display_command(execution);
  item["shell_program"] = execution.redacted(execution.spec().command_text);
  auto running = session::running_command(execution);
  item["running_command"] = running ? json(*running) : json(nullptr);
  item["shell_cwd"] = shell_cwd(execution);
  item.update(session_fields(execution, false));
}

json describe(session::Execution& execution, const ToolContext& ctx) {
  json item = status_fields(execution, ctx);
  const auto& spec = execution.spec();
  item["host"] = spec.host.empty() ? json(nullptr) : json(spec.host);
  // Shown with the secrets output is redacted for masked, as everywhere
  // (the web list, the audit log): an agent may have put one in a command.
  item["name"] = execution.redacted(spec.name);
  item["purpose"] = execution.redacted(spec.purpose);
  item["command"] = execution.redacted(spec.command_text);
  if (execution.kind() == session::ExecutionKind::session) describe_session(execution, item);
  item["cwd"] = execution.redacted(spec.cwd);
  item["started_at"] = iso8601(execution.started_at());
  item["ended_at"] = execution.ended_at() ? json(iso8601(*execution.ended_at())) : json(nullptr);
  item["latest_seq"] = execution.log().latest_seq();
  item["cursor_seq"] = execution.cursor();
  item["last_output_at"] =
      execution.last_output_at() ? json(iso8601(*execution.last_output_at())) : json(nullptr);
  // Quiet since the last output, or since the start when it printed nothing
  // yet (null read as "just started" after ten silent minutes); null once it
  // ended, where a number growing for an hour read as a stuck process.
  if (execution.finished())
    item["idle_ms"] = nullptr;
  else if (execution.idle())
    item["idle_ms"] = execution.idle()->count();
  else
    item["idle_ms"] = item.value("duration_ms", std::int64_t{0});
  if (execution.handoff_reason())
    item["handoff_reason"] = execution.redacted(*execution.handoff_reason());
  return item;
}

boost::asio::awaitable<ToolResult> ps(ToolContext& ctx, const json& args) {
  bool include_completed = args.value("include_completed", true);
  std::size_t limit = args.value("limit", 50);
  std::string status = args.value("status", "");
  // execute answers "backgrounded" for what ps lists as "running": the same
  // execution, so an agent filtering by the status it was given finds it.
  if (status == "backgrounded") status = "running";
  if (!include_completed && !status.empty() && status != "running")
    co_return tool_error("include_completed: false leaves out ended executions, so status=" +
                         status + " can match nothing; drop include_completed (or the status).");
  json list = json::array();
  auto executions = ctx.registry.list();
  // Newest first: the agent usually wants what it just started.
  for (auto it = executions.rbegin(); it != executions.rend() && list.size() < limit; ++it) {
    auto& execution = **it;
    if (!include_completed && execution.finished()) continue;
    if (!status.empty() && session::to_string(execution.status()) != status) continue;
    list.push_back(describe(execution, ctx));
  }
  co_return ToolResult{
      {{"executions", list}, {"total", executions.size()}, {"live", ctx.registry.live_count()}}};
}

}  // namespace

ToolDefinition make_ps_tool(const ToolConfig&) {
  json properties = {
      {"include_completed",
       {{"type", "boolean"}, {"description", "Include ended executions (default true)."}}},
      {"limit",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 1000},
        {"description", "Most entries returned, newest first (default 50)."}}},
      {"status",
       {{"type", "string"},
        {"enum",
         {"running", "backgrounded", "completed", "timed_out", "stopped", "failed_to_start",
          "failed"}},
        {"description",
         "Only executions with this status (backgrounded, as execute says, is the same as "
         "running)."}}},
  };
  json item = status_output_properties();
  for (const char* key : {"name", "purpose", "command", "cwd", "started_at", "handoff_reason"})
    item[key] = {{"type", "string"}};
  for (const char* key : {"host", "ended_at", "last_output_at"})
    item[key] = {{"type", {"string", "null"}}};
  item["command"]["description"] =
      "What runs: the command line or argv; for a session \"bash (session)\", with \" running: "
      "CMD\" while a command runs in it.";
  item["shell_program"] = {{"type", "string"}, {"description", "Sessions: the shell started."}};
  item["running_command"] = {
      {"type", {"string", "null"}},
      {"description",
       "Sessions: the command running in the shell now (null at the prompt); after fg, with the "
       "program it resumed: \"fg (resumed vim)\"."}};
  item["shell_cwd"] = {
      {"type", {"string", "null"}},
      {"description",
       "Sessions: the shell's current directory (cwd is where it started), as the innermost "
       "marked shell reported at its last prompt (on a host too; after ssh and rearm, the "
       "remote one); null before a prompt on a host, or once the shell ended."}};
  item["latest_seq"] = {{"type", "integer"}};
  item["cursor_seq"] = {{"type", "integer"}};
  item["idle_ms"] = {{"type", {"integer", "null"}},
                     {"description",
                      "Running: ms since its last output (since its start when it printed "
                      "nothing yet). null once it ended."}};
  return ToolDefinition{
      "ps",
      "List executions",
      "List executions, newest first, with status, exit_code, what they run, and activity: idle_ms "
      "(time since the "
      "last output; large and growing on a running process suggests it is stuck or waiting), "
      "waiting_for_input, "
      "held (a human has control), latest_seq vs cursor_seq (unread output). Use it to find an "
      "execution_id again "
      "or to see what is still running. Ended records are pruned after their retention time "
      "(or by cleanup) and then no longer listed. Errors: include_completed=false with a status "
      "of an ended execution can match nothing and is refused: drop one of the two.",
      object_schema(properties),
      {{"type", "object"},
       {"properties",
        {{"executions", {{"type", "array"}, {"items", {{"type", "object"}, {"properties", item}}}}},
         {"total", {{"type", "integer"}}},
         {"live", {{"type", "integer"}}},
         {"error", {{"type", "string"}}}}}},
      annotations(true, false, true, false),
      ps,
  };
}

}  // namespace agentty::mcp::tools
