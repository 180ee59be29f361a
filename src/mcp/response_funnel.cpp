#include "mcp/response_funnel.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>

namespace agentty::mcp {

class ResponseFunnel::Batch {
 public:
  std::vector<std::string> responses;
  std::size_t bytes = 0;
  std::size_t awaited = 1;        // responses still to come, and 1 until it is closed
  std::vector<std::string> keys;  // ids answered in it: unanswered until it is sent
};

ResponseFunnel::ResponseFunnel(std::function<void(std::string line)> send)
    : send_(std::move(send)) {}

ResponseFunnel::BatchHandle ResponseFunnel::open_batch() {
  return std::make_shared<Batch>();
}

void ResponseFunnel::close_batch(const BatchHandle& batch) {
  one_less(batch);
}

bool ResponseFunnel::unanswered(const json& id) const {
  return !id.is_null() && pending_.count(id.dump()) > 0;
}

void ResponseFunnel::begin(const json& id, BatchHandle batch) {
  const std::string key = id.dump();
  if (pending_.count(key)) std::abort();  // the caller refuses a reused id first
  if (batch) {
    ++batch->awaited;
    batch->keys.push_back(key);
  }
  pending_.emplace(key, Pending{id, std::move(batch), false, {}});
}

void ResponseFunnel::answer(const json& id, std::string line) {
  finish(id.dump(), std::move(line));
}

void ResponseFunnel::drop(const json& id) {
  finish(id.dump(), std::nullopt);
}

void ResponseFunnel::respond(const json& id, const BatchHandle& batch, std::string line) {
  if (batch) ++batch->awaited;
  route(id, batch, std::move(line));
}

void ResponseFunnel::route(const json& id, const BatchHandle& batch, std::string line) {
  if (!id.is_null()) {
    const std::string key = id.dump();
    if (auto it = pending_.find(key); it != pending_.end()) {
      Pending& pending = it->second;
      if (batch && pending.batch == batch && pending.answered) {
        collect(batch, id, std::move(line));  // right after its answer, in the same array
        return;
      }
      auto& held = pending.held;
      if (!held.empty() && held.back().batch == batch && held.back().line == line) {
        ++held.back().count;
      } else {
        held.push_back(Held{std::move(line), batch, 1});
      }
      return;
    }
    if (batch) {  // later responses for this id wait for the batch's line
      pending_.emplace(key, Pending{id, batch, true, {}});
      batch->keys.push_back(key);
    }
  }
  if (batch) {
    collect(batch, id, std::move(line));
  } else {
    send_(std::move(line));
  }
}

void ResponseFunnel::finish(const std::string& key, std::optional<std::string> line) {
  auto it = pending_.find(key);
  if (it == pending_.end()) {  // never begun: nothing is held for it
    if (line) send_(std::move(*line));
    return;
  }
  Pending& pending = it->second;
  const json id = pending.id;
  if (!pending.batch) {
    auto held = std::move(pending.held);
    pending_.erase(it);
    if (line) send_(std::move(*line));
    release(id, std::move(held));
    return;
  }
  const BatchHandle batch = pending.batch;
  if (pending.answered) {  // answered twice (a handler that threw after answering): kept
    if (line) respond(id, batch, std::move(*line));
    return;
  }
  pending.answered = true;
  // What is held for this id in the same batch follows its answer there;
  // the rest waits for the batch's line.
  auto& held = pending.held;
  auto joins = std::stable_partition(held.begin(), held.end(),
                                     [&](const Held& h) { return h.batch != batch; });
  std::vector<Held> joining(std::make_move_iterator(joins), std::make_move_iterator(held.end()));
  held.erase(joins, held.end());
  // From here `pending` may be gone: the last collect sends the batch.
  if (line) {
    collect(batch, id, std::move(*line));
  } else {
    one_less(batch);
  }
  for (auto& h : joining)
    for (std::size_t i = 0; i < h.count; ++i) collect(batch, id, h.line);
}

void ResponseFunnel::release(const json& id, std::vector<Held> held) {
  for (auto& h : held)
    for (std::size_t i = 0; i < h.count; ++i) route(id, h.batch, h.line);
}

void ResponseFunnel::collect(const BatchHandle& batch, const json& id, std::string line) {
  if (batch->bytes + line.size() > kMaxBatchBytes) {
    line = serialize(make_error(
        id, rpc_error::internal_error,
        "Internal error: this response (" + std::to_string(line.size()) +
            " bytes) would take the batch's answer past " + std::to_string(kMaxBatchBytes >> 20) +
            " MiB, the most agentty sends in one line; the request was carried out and its "
            "response is left out. Send requests with large answers (read, screen, explore) on "
            "lines of their own."));
  }
  batch->bytes += line.size() + 1;
  batch->responses.push_back(std::move(line));
  one_less(batch);
}

void ResponseFunnel::one_less(const BatchHandle& batch) {
  if (batch->awaited == 0) std::abort();  // counted once per response, and once for the close
  if (--batch->awaited == 0) send_batch(batch);
}

void ResponseFunnel::send_batch(const BatchHandle& batch) {
  if (!batch->responses.empty()) {  // JSON-RPC: never an empty array
    std::string line;
    line.reserve(batch->bytes + 2);
    line += '[';
    for (std::size_t i = 0; i < batch->responses.size(); ++i) {
      if (i > 0) line += ',';
      line += batch->responses[i];
    }
    line += ']';
    batch->responses = {};
    send_(std::move(line));
  }
  const auto keys = std::move(batch->keys);
  batch->keys.clear();
  for (const auto& key : keys) {
    auto it = pending_.find(key);
    if (it == pending_.end() || it->second.batch != batch) continue;
    const json id = std::move(it->second.id);
    auto held = std::move(it->second.held);
    pending_.erase(it);
    release(id, std::move(held));
  }
}

}  // namespace agentty::mcp
