#include "mcp/client_requests.hpp"

#include <spdlog/spdlog.h>

#include <charconv>

namespace agentty::mcp {

namespace {

constexpr std::string_view kIdPrefix = "agentty-";

std::string id_text(std::uint64_t number) {
  return std::string(kIdPrefix) + std::to_string(number);
}

// The number in an id this server made, or nullopt for any other id.
std::optional<std::uint64_t> id_number(const json& id) {
  if (!id.is_string()) return std::nullopt;
  const auto& text = id.get_ref<const std::string&>();
  if (!text.starts_with(kIdPrefix)) return std::nullopt;
  std::uint64_t number = 0;
  const char* first = text.data() + kIdPrefix.size();
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, number);
  if (ec != std::errc() || end != last || first == last) return std::nullopt;
  return number;
}

}  // namespace

ClientRequests::ClientRequests(std::function<void(const json& message)> send)
    : send_(std::move(send)) {}

std::string ClientRequests::start(const std::string& method, json params, Callback on_answer) {
  if (pending_.size() >= kMaxPending) {
    auto oldest = pending_.begin();
    spdlog::warn("the MCP client has not answered {} requests; no longer waiting for {} ({})",
                 pending_.size(), id_text(oldest->first), oldest->second.method);
    // MCP timeouts: a sender that stops waiting SHOULD say so (the client
    // can close what it shows for it).
    send_(make_notification("notifications/cancelled",
                            {{"requestId", id_text(oldest->first)},
                             {"reason", "agentty stopped waiting: " + std::to_string(kMaxPending) +
                                            " newer requests are unanswered"}}));
    pending_.erase(oldest);
  }
  const std::uint64_t number = next_id_++;
  std::string id = id_text(number);
  pending_.emplace(number, Pending{method, std::move(on_answer)});
  send_({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  return id;
}

void ClientRequests::abandon(const std::string& id) {
  if (auto number = id_number(json(id))) pending_.erase(*number);
}

bool ClientRequests::on_response(const Response& response) {
  auto number = id_number(response.id);
  auto it = number ? pending_.find(*number) : pending_.end();
  if (it == pending_.end()) {
    if (response.error) {
      spdlog::warn("the MCP client answered {} with error {} ({}); no request of ours waits for it",
                   response.id.dump(), response.error->code, response.error->message);
    } else {
      spdlog::debug("ignored a response to {}: no request of ours waits for it",
                    response.id.dump());
    }
    return false;
  }
  // Out of the table before the callback runs: it may start requests.
  Pending request = std::move(it->second);
  pending_.erase(it);
  if (response.error) {
    spdlog::warn("the MCP client refused {} ({}): error {}: {}", request.method,
                 response.id.get<std::string>(), response.error->code, response.error->message);
  }
  if (request.on_answer) request.on_answer(Answer{response.result, response.error});
  return true;
}

}  // namespace agentty::mcp
