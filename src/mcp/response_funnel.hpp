// ResponseFunnel: the one way McpServer's responses reach the client, and
// the order in which they reach it.
//
// A client matches responses to requests by id alone. A request being
// carried out is begun here and stays unanswered until its own response (or
// nothing: a cancelled call) has reached the client; any other response for
// its id meanwhile (the refusal of a request reusing the id, an error for a
// line carrying it) is held back until then, so the first request gets its
// own answer first and answers for one id leave in the order the requests
// came.
//
// A batch (a JSON array of messages, MCP 2025-03-26) collects the responses
// to its messages and goes out as one line, a JSON array, once the last of
// them is in: nothing at all when there is none (only notifications, or
// every call cancelled). Until that line is sent every id answered in it
// counts as unanswered. A response held back for an id answered earlier in
// the same batch joins the array right after that answer (waiting for the
// array would be waiting for itself). A batch's line is bounded
// (kMaxBatchBytes): a response past the bound is replaced by an error that
// says so, never dropped silently.
//
// Threading: everything on the one I/O loop, as McpServer.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json_rpc.hpp"

namespace agentty::mcp {

class ResponseFunnel {
 public:
  class Batch;
  using BatchHandle = std::shared_ptr<Batch>;

  // The most a batch's answer holds (its responses' bytes): a batch of
  // `read` calls must not build a line of gigabytes.
  static constexpr std::size_t kMaxBatchBytes = 32 << 20;

  // `send` writes one line to the client.
  explicit ResponseFunnel(std::function<void(std::string line)> send);

  // A batch whose messages are handled next; close it once all were.
  BatchHandle open_batch();
  void close_batch(const BatchHandle& batch);

  // Whether a response for `id` has yet to reach the client.
  bool unanswered(const json& id) const;
  // The request with `id` is carried out; its response goes into `batch`
  // (null: on a line of its own). `id` must not be unanswered.
  void begin(const json& id, BatchHandle batch);
  // The response of the request begun with `id`.
  void answer(const json& id, std::string line);
  // The request begun with `id` ends without a response (it was cancelled).
  void drop(const json& id);
  // A response to a message that was not begun (a refusal, an error for an
  // unreadable line); `id` may be null.
  void respond(const json& id, const BatchHandle& batch, std::string line);

 private:
  struct Held {
    std::string line;
    BatchHandle batch;
    std::size_t count;  // equal responses in a row: a flood of duplicates is one entry
  };
  // An id whose response has not reached the client.
  struct Pending {
    json id;
    BatchHandle batch;      // where its response goes; null: a line of its own
    bool answered = false;  // its response is in `batch`, which waits for others
    std::vector<Held> held;
  };

  // `line` (for which `batch`, if any, already counts) goes out now, or is
  // held back while a response for `id` has yet to reach the client.
  void route(const json& id, const BatchHandle& batch, std::string line);
  // The response (none: cancelled) of the request pending at `key`.
  void finish(const std::string& key, std::optional<std::string> line);
  void release(const json& id, std::vector<Held> held);
  void collect(const BatchHandle& batch, const json& id, std::string line);
  void one_less(const BatchHandle& batch);
  void send_batch(const BatchHandle& batch);

  std::function<void(std::string)> send_;
  std::map<std::string, Pending> pending_;  // by id (its JSON text)
};

}  // namespace agentty::mcp
