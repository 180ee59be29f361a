// ViewerQueue: the frames waiting to be written to one viewer's socket.
//
// Output frames are shared (one `shared_ptr<const std::string>` per PTY chunk
// for all viewers) and bounded in bytes per viewer. A viewer that falls
// behind past the bound loses its queued output and is marked for resync: the
// socket owner then sends a fresh snapshot instead, so a slow or stalled
// viewer costs at most `max_output_bytes` and never slows the PTY or anyone
// else. While marked, new output is dropped too (the snapshot will cover it).
// Control frames (JSON) are small, rare and never dropped by overflow; a
// peer that makes the server queue more than kMaxControlFrames of them is
// misbehaving and `control_overflow()` says so.
//
// The frame being written is not in the queue (the socket owner holds it),
// so "one write in flight" and "bounded queue" are independent.
//
// Pure data structure; single-threaded like everything on the event loop.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>

namespace agentty::web {

struct ViewerFrame {
  std::shared_ptr<const std::string> bytes;
  bool binary = true;  // output and snapshots are binary; control JSON is text
  bool output = true;  // dropped on overflow
};

class ViewerQueue {
 public:
  static constexpr std::size_t kMaxControlFrames = 256;

  explicit ViewerQueue(std::size_t max_output_bytes) : max_output_bytes_(max_output_bytes) {}

  // Returns false when the frame was dropped (now or because a resync is pending).
  bool push_output(std::shared_ptr<const std::string> bytes);
  void push_control(std::string text);
  // A snapshot replaces everything queued: its text header and its binary redraw.
  void push_snapshot(std::string header, std::string redraw);

  bool empty() const { return frames_.empty(); }
  const ViewerFrame& front() const { return frames_.front(); }
  ViewerFrame pop();
  // Takes the first control frame out from behind queued output (a paused
  // viewer still gets refusals and state). Only while the front is output:
  // then no snapshot is queued (a snapshot drops all output), so every
  // control frame is a plain message, never a header separated from its redraw.
  std::optional<ViewerFrame> pop_control_behind_output();

  bool resync_needed() const { return resync_needed_; }
  // Marks the viewer for resync and drops queued output (a paused viewer that
  // lost bytes, an output gap).
  void drop_output();
  std::size_t queued_output_bytes() const { return output_bytes_; }
  std::size_t size() const { return frames_.size(); }
  bool control_overflow() const { return control_frames_ > kMaxControlFrames; }
  std::size_t overflow_count() const { return overflow_count_; }

 private:
  std::size_t max_output_bytes_;
  std::deque<ViewerFrame> frames_;
  std::size_t output_bytes_ = 0;
  std::size_t control_frames_ = 0;
  std::size_t overflow_count_ = 0;
  bool resync_needed_ = false;
};

}  // namespace agentty::web
