// Execution: its input side. Typing into the program (refused while a
// person holds it, recorded without what a hidden prompt reads), and what the
// terminal tells about the program's reading: waiting for input, the line
// modes, which program reads, resuming one that was stopped.
#include <chrono>
#include <string>

#include "session/execution.hpp"
#include "session/recorder.hpp"
#include "session/redactor.hpp"
#include "session/shell_integration.hpp"

namespace agentty::session {

Expected<void> Execution::write(std::string_view bytes, InputSource source) {
  if (source == InputSource::agent && held()) {
    // A login held for a person has no holder yet: nobody has taken over.
    return make_error(std::string(held_by_ ? "held: a human has taken over this execution"
                                           : "held: the SSH login waits for a person to log in "
                                             "on terminal_url (handoff_reason)") +
                      "; nothing was written. Wait with wait(until=\"released\") and try again.");
  }
  if (finished() || !channel_ || channel_->finished()) {
    return make_error("execution_id: execution " + id_ + " has ended (" + to_string(status_) +
                      "); nothing was written. Start a new one with " +
                      (kind() == ExecutionKind::session ? "open." : "execute."));
  }
  if (const auto queued = channel_->queued_input_bytes();
      queued + bytes.size() > pty::PtyChannel::kMaxQueuedInput) {
    return make_error("input: the program has not read the " + std::to_string(queued) +
                      " bytes typed before it; nothing was written. It does not read its "
                      "terminal now: read or screen to see what it does, wait(until=\"input\") "
                      "before typing more, or stop it.");
  }
  if (recorder_) record_input(bytes, source);
  if (shell_) shell_->on_input(bytes, source);
  channel_->write(bytes);
  last_input_steady_ = std::chrono::steady_clock::now();
  return {};
}

std::size_t Execution::queued_input_bytes() const {
  return channel_ && !finished() ? channel_->queued_input_bytes() : 0;
}

void Execution::record_input(std::string_view bytes, InputSource source) {
  const bool human = source == InputSource::human;
  last_input_source_ = source;
  // Typing at a prompt that does not echo (a password) is not recorded, nor
  // where the echo is not known yet: an SSH host answers about its terminal
  // a moment after each quiet spell, and a password typed right after its
  // prompt was recorded in clear. What was echoed is in the output anyway.
  if (channel_->echo_enabled() != std::optional<bool>(true)) {
    recorder_->input("[hidden input]", human);
    return;
  }
  if (!input_redactor_) {
    recorder_->input(bytes, human);
    return;
  }
  std::string safe = input_redactor_->process(bytes);
  if (!safe.empty()) recorder_->input(safe, human);
}

pty::InputState Execution::input_state() const {
  if (finished() || !channel_ || quiet() < options_.quiet_for_input) return pty::InputState::busy;
  return channel_->input_state();
}

bool Execution::waiting_for_input(pty::InputState state) {
  if (login_hold_) return false;  // a login prompt is not for the agent
  switch (state) {
    case pty::InputState::reading_input:
      return true;
    case pty::InputState::busy:
    case pty::InputState::suspended:
      return false;
    case pty::InputState::unknown:
      return quiet() >= guessed_input_quiet() && screen().cursor().col > 0;
  }
  return false;
}

bool Execution::input_state_pending() {
  if (finished() || !channel_ || input_state() != pty::InputState::busy) return false;
  return quiet() >= options_.quiet_for_input && channel_->input_state_pending();
}

std::chrono::milliseconds Execution::guessed_input_quiet() const {
  return hides_typed_line() == std::optional<bool>(true) ? kHiddenLineQuiet : kGuessedInputQuiet;
}

Expected<void> Execution::resume(InputSource source) {
  if (source == InputSource::agent && held_by_) {
    return make_error(
        "held: a human has taken over this execution; it was not resumed. "
        "Wait with wait(until=\"released\") and try again.");
  }
  if (finished())
    return make_error("execution " + id_ + " has ended (" + to_string(status()) +
                      "); there is nothing to resume.");
  if (!channel_->resume_foreground()) {
    // In a session ctrl-z leaves a job stopped but the shell in the
    // foreground: "not stopped" read as if the job had been lost.
    if (kind() == ExecutionKind::session) {
      return make_error(
          "action: \"resume\" continues a program stopped with no shell to continue it "
          "(suspended=true); nothing in the session's foreground is stopped, so nothing was "
          "sent. The session's shell keeps what ctrl-z stopped as a job (jobs lists them): "
          "continue it with execute(session=, command=\"fg\") (or bg).");
    }
    return make_error(
        "action: \"resume\" continues a program stopped by ctrl-z (suspended=true); this one "
        "is not stopped, so nothing was sent.");
  }
  return {};
}

std::optional<bool> Execution::echo_enabled() const {
  return channel_ ? channel_->echo_enabled() : std::nullopt;
}

std::optional<bool> Execution::hides_typed_line() const {
  return channel_ ? channel_->hides_typed_line() : std::nullopt;
}

std::optional<bool> Execution::program_edits_line() const {
  return channel_ ? channel_->program_edits_line() : std::nullopt;
}

std::optional<bool> Execution::set_for_line_editor() const {
  return channel_ ? channel_->set_for_line_editor() : std::nullopt;
}

bool Execution::input_state_withheld() const {
  return channel_ && !finished() && channel_->input_state_withheld();
}

std::optional<std::string> Execution::foreground_program() const {
  if (finished() || !channel_) return std::nullopt;
  return channel_->foreground_program();
}

boost::asio::awaitable<std::optional<std::string>> Execution::login_shell() {
  if (finished() || !channel_) co_return std::nullopt;
  co_return co_await channel_->login_shell();
}

boost::asio::awaitable<std::optional<std::string>> Execution::put_temp_file(std::string content) {
  if (finished() || !channel_) co_return std::nullopt;
  co_return co_await channel_->put_temp_file(std::move(content));
}

boost::asio::awaitable<void> Execution::remove_temp_file(std::string path) {
  if (channel_) co_await channel_->remove_temp_file(std::move(path));
}

std::optional<std::string> Execution::reading_program() const {
  if (finished() || !channel_) return std::nullopt;
  return channel_->reading_program();
}

std::optional<bool> Execution::program_in_foreground() const {
  if (finished() || !channel_) return std::nullopt;
  return channel_->program_in_foreground();
}

}  // namespace agentty::session
