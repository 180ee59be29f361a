#include "session/display_command.hpp"

#include "session/shell_integration.hpp"

namespace agentty::session {

std::optional<std::string> running_command(Execution& execution) {
  auto* shell = execution.shell();
  if (execution.kind() != ExecutionKind::session || !shell || execution.finished()) {
    return std::nullopt;
  }
  const auto* current = shell->current();
  if (!shell->command_running() || !current) return std::nullopt;
  return execution.redacted(current->text);
}

std::string display_command(Execution& execution) {
  const auto& spec = execution.spec();
  if (execution.kind() != ExecutionKind::session) return execution.redacted(spec.command_text);
  auto* shell = execution.shell();
  // On a host the hook knows bash and zsh; which one is the account's.
  std::string name = !spec.host.empty() ? std::string("login shell")
                     : shell            ? to_string(shell->kind())
                             : spec.command_text.substr(spec.command_text.rfind('/') + 1);
  std::string command = execution.redacted(name + " (session)");
  if (auto running = running_command(execution)) command += " running: " + *running;
  return command;
}

}  // namespace agentty::session
