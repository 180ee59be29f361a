// ExecutionSummary: one execution as the dashboard and /api/executions show
// it (JSON), and as a terminal viewer's `state` message.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "session/execution.hpp"
#include "web/wire_protocol.hpp"

namespace agentty::web {

// Everything the dashboard lists. `idle_ms` and `duration_ms` change with the
// clock alone; stable_view() leaves them out to tell whether anything else did.
nlohmann::json execution_summary(session::Execution& execution);
nlohmann::json stable_view(const nlohmann::json& summaries);

// What one viewer (identified by `who`) is told about the execution.
wire::ViewerState viewer_state(session::Execution& execution, const std::string& who);

}  // namespace agentty::web
