// Recording retention: keeps the asciicast recordings directory
// (STATE_DIR/recordings) within a file count and a byte budget, so recordings
// never grow the disk without bound.
//
// Recordings outlive their execution's record on purpose: they are what an
// operator reviews after the fact, long after `cleanup` or retention removed
// the record. So they are not deleted with the record; instead, before a new
// recording starts, the oldest files (by modification time, so a recording
// still being written is deleted last) are deleted until both limits hold
// with room for the new one. Files of executions that are still running
// (`keep`) are never deleted; they still count toward the limits.
//
// Only regular files named *.cast are considered; other files are left alone.
// Several servers may share one state directory: each prunes the shared
// directory the same way (oldest first), which is why modification time, not
// this server's own list, decides the order.
//
// prune_recordings() scans and stats every file, which costs about a
// millisecond per execution start with a few hundred recordings.
// RecordingRetention, one per server, keeps the same limits without that:
// it scans at most every kRescanInterval or kMaxAddedBetweenScans starts,
// and in between adds up the last scan's totals and the current sizes of the
// recordings this server created since, as their Recorders count them
// (stat'ing each of them at every start cost ~0.25 ms of an execute here). Another server's new
// files sharing the directory are noticed at the next scan. At the file limit a scan deletes a
// tenth of max_files beyond what the new recording needs: a server that had run max_files
// executions otherwise scanned (and stat'ed every file) at every start, which made execute ~3 ms
// slower after 500 of them.
//
// Threading: prune_recordings() has no state and touches only the
// filesystem; a RecordingRetention is used on one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace agentty::session {

struct RecordingLimits {
  std::uint64_t max_bytes = 1ull << 30;  // all *.cast files together
  std::size_t max_files = 500;
};

struct RecordingPruneResult {
  std::size_t files_removed = 0;
  std::uint64_t bytes_removed = 0;
  std::size_t files_kept = 0;
  std::uint64_t bytes_kept = 0;
};

// Deletes the oldest *.cast files in `dir` (except `keep`, by file stem =
// execution id) until at most max_files - `incoming` files and at most
// max_bytes bytes remain; when the count forces deletions, `headroom` more go,
// so that the next starts fit without a scan. A missing directory is not an
// error.
RecordingPruneResult prune_recordings(const std::filesystem::path& dir,
                                      const RecordingLimits& limits,
                                      const std::set<std::string>& keep, std::size_t incoming = 1,
                                      std::size_t headroom = 0);

class RecordingRetention {
 public:
  static constexpr std::chrono::seconds kRescanInterval{2};
  static constexpr std::size_t kMaxAddedBetweenScans = 64;

  RecordingRetention(std::filesystem::path dir, RecordingLimits limits);

  // Makes room for a new recording (call before creating it); `live` is
  // asked, only when a scan is due, for the ids whose recordings must never
  // be deleted.
  void make_room(const std::function<std::set<std::string>()>& live);
  // The bytes written so far to the recording just made room for
  // (Recorder::size_counter); one that is not tracked counts as empty until
  // the next scan.
  void track_size(std::shared_ptr<const std::uint64_t> bytes);

 private:
  bool fits_without_scan() const;

  std::filesystem::path dir_;
  RecordingLimits limits_;
  bool scanned_ = false;
  std::chrono::steady_clock::time_point scanned_at_;
  std::size_t scanned_files_ = 0;    // kept by the last scan
  std::uint64_t scanned_bytes_ = 0;  // their bytes then
  std::size_t added_ = 0;            // recordings made room for since the last scan
  std::vector<std::shared_ptr<const std::uint64_t>> added_sizes_;  // their sizes
};

}  // namespace agentty::session
