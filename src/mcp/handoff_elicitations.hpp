// HandoffElicitations: a handoff reaches the person in their MCP client.
//
// When an execution comes to need a person (the handoff tool, an SSH login
// held for one) and the client declared URL elicitation
// (capabilities.elicitation.url), this sends the client elicitation/create in
// URL mode: a fresh elicitationId, the execution's terminal_url, and a
// message with the reason and the command. When the handoff is over (the
// person took over and released it, or the execution ended) it sends
// notifications/elicitation/complete with the same id. Form mode is never
// used: a handoff is for passwords, which must not pass through the client.
// No terminal_url (no web server): nothing is sent.
//
// It follows executions through a registry observer, so every path that
// starts a handoff is covered. At most one elicitation per execution is
// open; a handoff with a new reason completes the old one and asks again.
// What the client answered (accept, decline, cancel, or an error) is kept
// until the handoff is over, for the agent (state()), and wakes the
// execution's waiters. Each question and each answer is also one audit
// record ({kind:"client_elicitation", execution_id, elicitation_id,
// state}), so the operator sees who was asked and what they said.
//
// Threading: everything on the one I/O event loop.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "mcp/client_requests.hpp"
#include "session/registry.hpp"

namespace agentty::mcp {

class HandoffElicitations {
 public:
  // `notify` sends one notification to the client; `terminal_url` may be
  // empty, or answer "" (no web server); `audit` (may be empty) writes one
  // audit record.
  HandoffElicitations(session::Registry& registry, ClientRequests& requests,
                      std::function<void(const json& notification)> notify,
                      std::function<std::string(const std::string& execution_id)> terminal_url,
                      std::function<void(const json& record)> audit = {});
  ~HandoffElicitations();
  HandoffElicitations(const HandoffElicitations&) = delete;
  HandoffElicitations& operator=(const HandoffElicitations&) = delete;

  // From initialize: whether the client declared URL elicitation.
  void set_client_can_ask(bool can) { client_can_ask_ = can; }
  bool client_can_ask() const { return client_can_ask_; }

  // The open elicitation of an execution: "asked" (no answer yet),
  // "accepted", "declined", "cancelled", or "failed" (the client answered
  // with an error); "" when none is open.
  std::string state(const std::string& execution_id) const;

 private:
  struct Open {
    std::string elicitation_id;
    std::string request_id;  // "" once answered
    std::string reason;      // the handoff reason it was asked for
    std::string state = "asked";
  };

  void on_state_change(session::Execution& execution);
  void ask(session::Execution& execution);
  void on_answer(const std::string& execution_id, const std::string& elicitation_id,
                 const ClientRequests::Answer& answer);
  void complete(std::map<std::string, Open>::iterator open);
  void record(const std::string& execution_id, const Open& open) const;

  session::Registry& registry_;
  ClientRequests& requests_;
  std::function<void(const json&)> notify_;
  std::function<std::string(const std::string&)> terminal_url_;
  std::function<void(const json&)> audit_;
  bool client_can_ask_ = false;
  std::uint64_t next_elicitation_ = 1;
  std::map<std::string, Open> open_;  // by execution_id
  int observer_token_ = 0;
};

}  // namespace agentty::mcp
