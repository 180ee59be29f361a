#include "session/display_command.hpp"

#include <string_view>

#include "session/shell_integration.hpp"

namespace agentty::session {

namespace {

// `fg`, `fg %2`, `%1`, `%+`: bash's ways to bring a stopped or background
// job to the foreground. The typed line names none of the program it runs.
bool resumes_a_job(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos) return false;
  line.remove_prefix(first);
  if (line.front() == '%') return true;
  return line.starts_with("fg") && (line.size() == 2 || line[2] == ' ' || line[2] == '\t');
}

}  // namespace

std::optional<std::string> running_command(Execution& execution) {
  auto* shell = execution.shell();
  if (execution.kind() != ExecutionKind::session || !shell || execution.finished()) {
    return std::nullopt;
  }
  const auto* current = shell->current();
  if (!shell->command_running() || !current) return std::nullopt;
  std::string text = current->text;
  // After `fg` what runs is the job it continued: say which program that is
  // (locally, where the terminal's foreground group can be read).
  if (resumes_a_job(text)) {
    if (auto program = execution.foreground_program();
        program && *program != to_string(shell->kind()))
      text += " (resumed " + *program + ")";
  }
  return execution.redacted(text);
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
