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
// Threading: a free function with no state; touches only the filesystem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

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
// max_bytes bytes remain. A missing directory is not an error.
RecordingPruneResult prune_recordings(const std::filesystem::path& dir,
                                      const RecordingLimits& limits,
                                      const std::set<std::string>& keep, std::size_t incoming = 1);

}  // namespace agentty::session
