// stop: signal the process group, escalate to SIGKILL after a grace.
#include <csignal>

#include "mcp/tools/common.hpp"
#include "pty/exit_status.hpp"

namespace agentty::mcp::tools {

namespace {

using namespace std::chrono;

boost::asio::awaitable<ToolResult> stop(ToolContext& ctx, const json& args,
                                        std::shared_ptr<session::Execution> execution) {
  // An interactive shell ignores SIGTERM: a session is hung up, as close
  // does, instead of waiting out the grace for SIGKILL.
  const bool is_session = execution->kind() == session::ExecutionKind::session;
  std::string name = args.value("signal", is_session ? "SIGHUP" : "SIGTERM");
  int signo = pty::signal_number(name).value_or(SIGTERM);
  auto grace = milliseconds(args.value("force_after_ms", ctx.config.default_stop_grace_ms));
  bool was_running = !execution->finished();
  // A host may not take the signal as such (a root login on OpenSSH).
  auto delivery = was_running ? execution->signal_note(signo) : std::nullopt;
  const json not_stopped = {{"stopped", false}};  // a named json: GCC rejects a braced one here
  if (auto early = co_await signal_and_wait(ctx, *execution, signo, grace, not_stopped))
    co_return std::move(*early);
  json result = status_fields(*execution, ctx);
  result["stopped"] = was_running && execution->finished();
  if (!was_running) result["message"] = "The execution had already ended; nothing was signalled.";
  if (!execution->finished()) {
    result["message"] = "Signalled, but the process group has not ended yet; wait with until=exit.";
  } else if (was_running && signo != SIGKILL && execution->force_killed()) {
    // passwd at its prompt, a trap '' TERM: say why it took the grace and what it skipped.
    // A handler that was still cleaning up (trap '...; sleep 3' TERM) is cut
    // short the same way: "did not run" was untrue when its output showed it.
    result["message"] = name + " did not end it within force_after_ms (" +
                        std::to_string(grace.count()) +
                        " ms), so SIGKILL did: it ignores or blocks " + name +
                        ", or handles it more slowly than that (a clean-up it started was cut "
                        "short). Next time give signal=\"SIGKILL\" if waiting is pointless, or "
                        "a longer force_after_ms to let a clean-up finish.";
  }
  if (delivery) {
    std::string message = result.value("message", "");
    result["message"] = *delivery + (message.empty() ? "" : " " + message);
  }
  co_return ToolResult{std::move(result)};
}

}  // namespace

ToolDefinition make_stop_tool(const ToolConfig& config) {
  json properties = {
      {"execution_id", execution_id_input()},
      {"signal",
       {{"type", "string"},
        {"enum", {"SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2"}},
        {"description",
         "Signal sent to the whole process group (default SIGTERM; SIGHUP for a session from "
         "open, which ignores SIGTERM)."}}},
      {"force_after_ms",
       {{"type", "integer"},
        {"minimum", 0},
        {"maximum", 50000},
        {"description", "Grace before SIGKILL if it has not ended (default " +
                            std::to_string(config.default_stop_grace_ms) + ")."}}},
  };
  json output = status_output_properties();
  output["stopped"] = {{"type", "boolean"},
                       {"description", "True when this call ended a running execution."}};
  return ToolDefinition{
      "stop",
      "Stop an execution",
      "End a running execution: sends `signal` (default SIGTERM) to its whole process group and "
      "SIGKILL after "
      "`force_after_ms` if it is still alive, then returns the final status and exit_code. Use it "
      "for runaway or no "
      "longer needed commands; to interrupt a program politely, write keys=[\"ctrl-c\"] instead. "
      "On a session (open) it ends the shell and everything in it, like close: the shell is the "
      "execution, and a signal it ignores (SIGINT) only delays the SIGKILL; to stop just the "
      "command running in the session, write keys=[\"ctrl-c\"]. "
      "Stopping an ended "
      "execution is harmless (stopped=false). Errors: held=true means a human has taken over and "
      "nothing was done: "
      "wait(until=\"released\") first; an unknown execution_id (ps lists them).",
      object_schema(properties, {"execution_id"}),
      {{"type", "object"}, {"properties", output}},
      annotations(false, true, true, false),
      for_execution(stop),
  };
}

}  // namespace agentty::mcp::tools
