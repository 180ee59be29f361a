#include "web/execution_summary.hpp"

#include "session/display_command.hpp"

namespace agentty::web {
namespace {

using nlohmann::json;

json epoch_ms(std::optional<session::SystemTime> time) {
  if (!time) return nullptr;
  return std::chrono::duration_cast<std::chrono::milliseconds>(time->time_since_epoch()).count();
}

json optional_string(const std::optional<std::string>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

json execution_summary(session::Execution& execution) {
  const auto& spec = execution.spec();
  auto exit = execution.exit_status();
  auto idle = execution.idle();
  auto size = execution.size();
  auto running = session::running_command(execution);
  return json{
      {"execution_id", execution.id()},
      {"kind", session::to_string(execution.kind())},
      // Secrets masked as in the agent's ps and the audit log.
      {"name", execution.redacted(spec.name)},
      {"purpose", execution.redacted(spec.purpose)},
      // A session's is "bash (session) running: CMD", as in the agent's ps.
      {"command", session::display_command(execution)},
      {"running_command", running ? json(*running) : json(nullptr)},
      {"host", spec.host},
      {"cwd", execution.redacted(spec.cwd)},
      {"status", session::to_string(execution.status())},
      {"exit_code", exit && exit->code ? json(*exit->code) : json(nullptr)},
      {"signal", exit && exit->signal ? json(pty::signal_name(*exit->signal)) : json(nullptr)},
      {"exit_description", exit ? exit->describe() : execution.failure_reason()},
      {"process_id", execution.process_id() ? json(*execution.process_id()) : json(nullptr)},
      {"started_at", epoch_ms(execution.started_at())},
      {"ended_at", epoch_ms(execution.ended_at())},
      {"last_output_at", epoch_ms(execution.last_output_at())},
      {"duration_ms", execution.duration().count()},
      {"idle_ms", idle ? json(idle->count()) : json(nullptr)},
      // A person holds it (an SSH login waiting for one is a handoff, not held here).
      {"held", execution.held_by().has_value()},
      {"held_by", optional_string(execution.held_by())},
      {"handoff_reason", execution.handoff_reason()
                             ? json(execution.redacted(*execution.handoff_reason()))
                             : json(nullptr)},
      {"waiting_for_input", !execution.finished() && execution.waiting_for_input()},
      {"latest_seq", execution.log().latest_seq()},
      {"cols", size.cols},
      {"rows", size.rows},
      {"terminal_path", std::string(wire::kTerminalPagePrefix) + execution.id()},
  };
}

json stable_view(const json& summaries) {
  json view = summaries;
  for (auto& summary : view) {
    summary.erase("idle_ms");
    summary.erase("duration_ms");
  }
  return view;
}

wire::ViewerState viewer_state(session::Execution& execution, const std::string& who) {
  wire::ViewerState state;
  const auto& spec = execution.spec();
  auto exit = execution.exit_status();
  state.execution_id = execution.id();
  state.status = session::to_string(execution.status());
  if (exit) {
    state.exit_code = exit->code;
    state.signal = exit->signal;
    state.exit_description = exit->describe();
  } else if (execution.finished()) {
    state.exit_description = execution.failure_reason();
  }
  state.held = execution.held_by().has_value();  // the login hold still lets a person take over
  state.held_by = execution.held_by();
  state.held_by_you = execution.held_by() && *execution.held_by() == who;
  if (execution.handoff_reason())
    state.handoff_reason = execution.redacted(*execution.handoff_reason());
  state.waiting_for_input = !execution.finished() && execution.waiting_for_input();
  state.size = execution.size();
  state.name = execution.redacted(spec.name);
  state.purpose = execution.redacted(spec.purpose);
  state.command = session::display_command(execution);
  return state;
}

}  // namespace agentty::web
