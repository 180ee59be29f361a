// What the agent's ps and the web dashboard show as an execution's command.
//
// A session's command_text is its shell's path, which says nothing a person
// watching needs: they show "bash (session)" and what runs in it now (the
// command a person or the agent typed), so both lists agree.
#pragma once

#include <optional>
#include <string>

#include "session/execution.hpp"

namespace agentty::session {

// The command line to list, secrets masked: for a session "bash (session)",
// plus " running: CMD" while a command runs in it.
std::string display_command(Execution& execution);
// For a session, the command running in it now (masked); nullopt otherwise.
std::optional<std::string> running_command(Execution& execution);

}  // namespace agentty::session
