#include "web/viewer_queue.hpp"

#include <algorithm>
#include <cassert>

namespace agentty::web {

bool ViewerQueue::push_output(std::shared_ptr<const std::string> bytes) {
  if (resync_needed_) return false;
  if (output_bytes_ + bytes->size() > max_output_bytes_) {
    ++overflow_count_;
    drop_output();
    return false;
  }
  output_bytes_ += bytes->size();
  frames_.push_back(ViewerFrame{std::move(bytes), true, true});
  return true;
}

void ViewerQueue::push_control(std::string text) {
  ++control_frames_;
  frames_.push_back(
      ViewerFrame{std::make_shared<const std::string>(std::move(text)), false, false});
}

void ViewerQueue::push_snapshot(std::string header, std::string redraw) {
  drop_output();
  resync_needed_ = false;
  push_control(std::move(header));
  // The redraw is not `output`: a later overflow must not separate it from its header.
  frames_.push_back(
      ViewerFrame{std::make_shared<const std::string>(std::move(redraw)), true, false});
}

ViewerFrame ViewerQueue::pop() {
  assert(!frames_.empty());
  ViewerFrame frame = std::move(frames_.front());
  frames_.pop_front();
  if (frame.output) {
    output_bytes_ -= frame.bytes->size();
  } else if (!frame.binary) {
    --control_frames_;
  }
  return frame;
}

std::optional<ViewerFrame> ViewerQueue::pop_control_behind_output() {
  if (frames_.empty() || !frames_.front().output) return std::nullopt;
  auto control = std::find_if(frames_.begin(), frames_.end(),
                              [](const ViewerFrame& frame) { return !frame.binary; });
  if (control == frames_.end()) return std::nullopt;
  ViewerFrame frame = std::move(*control);
  frames_.erase(control);
  --control_frames_;
  return frame;
}

void ViewerQueue::drop_output() {
  resync_needed_ = true;
  std::erase_if(frames_, [](const ViewerFrame& frame) { return frame.output; });
  output_bytes_ = 0;
}

}  // namespace agentty::web
