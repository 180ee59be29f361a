#include "web/execution_feed.hpp"

#include <algorithm>

#include "web/execution_summary.hpp"
#include "web/terminal_viewer.hpp"

namespace agentty::web {

ExecutionFeed::ExecutionFeed(boost::asio::io_context& io,
                             std::shared_ptr<session::Execution> execution,
                             const WebOptions& options)
    : execution_(std::move(execution)),
      stream_rate_(static_cast<double>(options.stream_rate_bytes)),
      stream_burst_(static_cast<double>(options.stream_burst_bytes)),
      flood_interval_(options.flood_snapshot_interval),
      budget_(stream_burst_),
      budget_at_(std::chrono::steady_clock::now()),
      flood_timer_(io) {}

ExecutionFeed::~ExecutionFeed() {
  *alive_ = false;
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

void ExecutionFeed::execution_removed() {
  auto viewers = viewers_;
  for (auto* viewer : viewers) viewer->execution_removed();
}

void ExecutionFeed::refill_budget() {
  auto now = std::chrono::steady_clock::now();
  double seconds = std::chrono::duration<double>(now - budget_at_).count();
  budget_ = std::min(stream_burst_, budget_ + seconds * stream_rate_);
  budget_at_ = now;
}

void ExecutionFeed::on_output(std::string_view bytes, std::uint64_t start_seq) {
  if (bytes.empty() || viewers_.empty()) return;
  refill_budget();
  budget_ -= static_cast<double>(bytes.size());
  bytes_this_interval_ += bytes.size();
  if (flooding_) return;
  if (budget_ < 0) {
    // Not forwarded: the viewers' next chunk is a gap, repaired by snapshots.
    flooding_ = true;
    bytes_this_interval_ = 0;
    arm_flood_timer();
    return;
  }
  auto chunk = std::make_shared<const std::string>(bytes);
  auto viewers = viewers_;
  for (auto* viewer : viewers) viewer->send_output(chunk, start_seq);
}

void ExecutionFeed::arm_flood_timer() {
  flood_timer_.expires_after(flood_interval_);
  flood_timer_.async_wait([this, alive = alive_](boost::system::error_code ec) {
    if (!ec && *alive) on_flood_tick();
  });
}

void ExecutionFeed::on_flood_tick() {
  auto viewers = viewers_;
  for (auto* viewer : viewers) viewer->request_resync();
  auto interval_bytes = std::chrono::duration<double>(flood_interval_).count() * stream_rate_;
  if (static_cast<double>(bytes_this_interval_) <= interval_bytes || execution_->finished()) {
    flooding_ = false;  // the snapshots just requested end the flood for every viewer
    refill_budget();
    budget_ = std::max(budget_, 0.0);
    return;
  }
  bytes_this_interval_ = 0;
  arm_flood_timer();
}

std::string ExecutionFeed::state_key() {
  return wire::encode(viewer_state(*execution_, std::string()));
}

}  // namespace agentty::web
