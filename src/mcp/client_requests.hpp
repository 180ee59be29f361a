// ClientRequests: the requests agentty sends to its MCP client (server to
// client, e.g. elicitation/create) and the matching of the client's answers.
//
// Each request gets an id of this server's choosing ("agentty-1", ...: a
// string, so it is never confused with a number the client picked for its
// own requests). start() sends it and returns at once; the answer, a result
// or the client's error, reaches the request's callback later, on the loop,
// from on_response(). Nothing ever blocks on the client: a tool call that
// sent a request answers without waiting for it.
//
// A response that never comes must cost nothing for long: the owner
// abandons a request it no longer cares about (its callback is dropped, a
// later answer to it is ignored), and at most kMaxPending wait at once; past
// that the oldest is given up and cancelled (notifications/cancelled, as MCP
// asks of a sender that stops waiting). Answers with an id nobody waits for
// (abandoned, unknown, or an error the client could not tie to a request,
// `"id": null`) are logged and ignored: JSON-RPC never answers a response.
//
// Threading: everything on the one I/O event loop.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "mcp/json_rpc.hpp"

namespace agentty::mcp {

class ClientRequests {
 public:
  static constexpr std::size_t kMaxPending = 64;

  // The client's answer: its result, or its error (result null then).
  struct Answer {
    json result;
    std::optional<ResponseError> error;
  };
  using Callback = std::function<void(const Answer& answer)>;

  // `send` writes one JSON-RPC message to the client.
  explicit ClientRequests(std::function<void(const json& message)> send);

  // Sends `method` with `params`; `on_answer` runs when the client answers.
  // Returns the request's id (for abandon()).
  std::string start(const std::string& method, json params, Callback on_answer);
  // The answer to `id` is no longer wanted; a later one is ignored.
  void abandon(const std::string& id);
  // Hands a response to the request it answers; false when none waits for
  // it (the response is ignored).
  bool on_response(const Response& response);

  std::size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    std::string method;
    Callback on_answer;
  };

  std::function<void(const json&)> send_;
  std::uint64_t next_id_ = 1;
  // By the number in the id, so the oldest comes first.
  std::map<std::uint64_t, Pending> pending_;
};

}  // namespace agentty::mcp
