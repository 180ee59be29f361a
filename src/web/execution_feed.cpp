#include "web/execution_feed.hpp"

#include <algorithm>

#include "web/execution_summary.hpp"
#include "web/terminal_viewer.hpp"

namespace agentty::web {

ExecutionFeed::ExecutionFeed(std::shared_ptr<session::Execution> execution)
    : execution_(std::move(execution)) {}

ExecutionFeed::~ExecutionFeed() {
  if (listener_token_ != 0) execution_->remove_output_listener(listener_token_);
}

void ExecutionFeed::join(TerminalViewer* viewer) {
  if (listener_token_ == 0) {
    listener_token_ = execution_->add_output_listener(
        [this](std::string_view bytes, std::uint64_t start_seq) { on_output(bytes, start_seq); });
  }
  viewers_.push_back(viewer);
  last_state_key_ = state_key();
}

void ExecutionFeed::leave(TerminalViewer* viewer) {
  std::erase(viewers_, viewer);
  if (viewers_.empty() && listener_token_ != 0) {
    execution_->remove_output_listener(listener_token_);
    listener_token_ = 0;
  }
}

void ExecutionFeed::broadcast_state() {
  last_state_key_ = state_key();
  // A viewer may leave while being sent to: iterate a copy.
  auto viewers = viewers_;
  for (auto* viewer : viewers) viewer->send_state();
}

void ExecutionFeed::refresh_state() {
  if (state_key() != last_state_key_) broadcast_state();
}

void ExecutionFeed::on_output(std::string_view bytes, std::uint64_t start_seq) {
  if (bytes.empty() || viewers_.empty()) return;
  auto chunk = std::make_shared<const std::string>(bytes);
  auto viewers = viewers_;
  for (auto* viewer : viewers) viewer->send_output(chunk, start_seq);
}

std::string ExecutionFeed::state_key() {
  return wire::encode(viewer_state(*execution_, std::string()));
}

}  // namespace agentty::web
