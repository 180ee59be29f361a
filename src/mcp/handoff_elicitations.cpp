#include "mcp/handoff_elicitations.hpp"

#include <spdlog/spdlog.h>

#include "base/utf8.hpp"

namespace agentty::mcp {

namespace {

// A command line is cut here in the message: a client shows it in a dialog.
constexpr std::size_t kCommandShown = 200;

// `text` cut to `limit` bytes, never inside a UTF-8 character.
std::string shortened(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  text.resize(utf8_char_start(text, limit));
  return text + "...";
}

// The handoff is over: the person handed it back, or the execution ended.
bool handoff_over(const session::Execution& execution) {
  return execution.finished() || (!execution.held() && !execution.handoff_reason());
}

// What the person reads in the client: what to do, for which program, how.
std::string message_for(const session::Execution& execution, const std::string& reason) {
  const auto& spec = execution.spec();
  std::string what =
      spec.kind == session::ExecutionKind::session
          ? "a shell session"
          : "`" + shortened(execution.redacted(spec.command_text), kCommandShown) + "`";
  if (!spec.host.empty()) what += " on " + spec.host;
  return "agentty needs you: " + execution.redacted(reason) + "\n(" + what + ", execution " +
         execution.id() +
         ".) Open the link, take over the terminal, do it there, then release it to hand it "
         "back.";
}

std::string state_of(const ClientRequests::Answer& answer) {
  if (answer.error) return "failed";
  const json& action = answer.result.is_object() ? answer.result.value("action", json()) : json();
  if (action == "accept") return "accepted";
  if (action == "decline") return "declined";
  if (action == "cancel") return "cancelled";
  return "failed";
}

}  // namespace

HandoffElicitations::HandoffElicitations(
    session::Registry& registry, ClientRequests& requests,
    std::function<void(const json& notification)> notify,
    std::function<std::string(const std::string& execution_id)> terminal_url,
    std::function<void(const json& record)> audit)
    : registry_(registry),
      requests_(requests),
      notify_(std::move(notify)),
      terminal_url_(std::move(terminal_url)),
      audit_(std::move(audit)) {
  observer_token_ =
      registry_.add_observer([this](session::Execution& execution) { on_state_change(execution); });
}

HandoffElicitations::~HandoffElicitations() {
  registry_.remove_observer(observer_token_);
  // Their callbacks point here.
  for (auto& [execution_id, open] : open_)
    if (!open.request_id.empty()) requests_.abandon(open.request_id);
}

std::string HandoffElicitations::state(const std::string& execution_id) const {
  auto it = open_.find(execution_id);
  return it == open_.end() ? std::string() : it->second.state;
}

void HandoffElicitations::on_state_change(session::Execution& execution) {
  const auto& reason = execution.handoff_reason();
  if (auto it = open_.find(execution.id()); it != open_.end()) {
    if (handoff_over(execution)) {
      complete(it);
      return;
    }
    if (!reason || *reason == it->second.reason) return;
    complete(it);  // a new handoff: the old question is not the one to answer
  }
  if (client_can_ask_ && reason && !handoff_over(execution)) ask(execution);
}

void HandoffElicitations::ask(session::Execution& execution) {
  const std::string url = terminal_url_ ? terminal_url_(execution.id()) : std::string();
  if (url.empty()) return;  // no web server: nowhere to send the person
  const std::string execution_id = execution.id();
  const std::string& reason = *execution.handoff_reason();
  Open open;
  open.elicitation_id = execution_id + "-handoff-" + std::to_string(next_elicitation_++);
  open.reason = reason;
  json params = {{"mode", "url"},
                 {"elicitationId", open.elicitation_id},
                 {"url", url},
                 {"message", message_for(execution, reason)}};
  open.request_id = requests_.start("elicitation/create", std::move(params),
                                    [this, execution_id, elicitation_id = open.elicitation_id](
                                        const ClientRequests::Answer& answer) {
                                      on_answer(execution_id, elicitation_id, answer);
                                    });
  spdlog::info("asked the MCP client's person to take over {} ({})", execution_id,
               open.elicitation_id);
  record(execution_id, open);
  open_[execution_id] = std::move(open);
}

void HandoffElicitations::on_answer(const std::string& execution_id,
                                    const std::string& elicitation_id,
                                    const ClientRequests::Answer& answer) {
  auto it = open_.find(execution_id);
  if (it == open_.end() || it->second.elicitation_id != elicitation_id) return;
  it->second.request_id.clear();
  it->second.state = state_of(answer);
  spdlog::info("the MCP client answered the handoff of {}: {}", execution_id, it->second.state);
  record(execution_id, it->second);
  // A wait(until="released") looks at the answer (a decline ends it).
  if (auto execution = registry_.find(execution_id)) execution->changed().notify();
}

void HandoffElicitations::complete(std::map<std::string, Open>::iterator open) {
  Open done = std::move(open->second);
  open_.erase(open);
  if (!done.request_id.empty()) requests_.abandon(done.request_id);
  // A client that refused the request has nothing to close.
  if (done.state == "failed") return;
  if (notify_)
    notify_(make_notification("notifications/elicitation/complete",
                              {{"elicitationId", done.elicitation_id}}));
}

void HandoffElicitations::record(const std::string& execution_id, const Open& open) const {
  if (!audit_) return;
  audit_({{"kind", "client_elicitation"},
          {"execution_id", execution_id},
          {"elicitation_id", open.elicitation_id},
          {"state", open.state}});
}

}  // namespace agentty::mcp
