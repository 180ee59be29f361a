#include "session/recording_retention.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <system_error>
#include <vector>

namespace agentty::session {

namespace {

struct RecordingFile {
  std::filesystem::path path;
  std::chrono::nanoseconds modified;  // since the epoch
  std::uint64_t bytes = 0;
  bool keep = false;
};

std::vector<RecordingFile> list_recordings(const std::filesystem::path& dir,
                                           const std::set<std::string>& keep) {
  std::vector<RecordingFile> files;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return files;
  for (const auto& entry : it) {
    if (entry.path().extension() != ".cast") continue;
    // One stat per file: this runs over hundreds of files.
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;  // removed meanwhile
    RecordingFile file;
    file.path = entry.path();
    file.modified =
        std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec);
    file.bytes = static_cast<std::uint64_t>(st.st_size);
    file.keep = keep.contains(entry.path().stem().string());
    files.push_back(std::move(file));
  }
  std::sort(files.begin(), files.end(),
            [](const RecordingFile& a, const RecordingFile& b) { return a.modified < b.modified; });
  return files;
}

}  // namespace

RecordingPruneResult prune_recordings(const std::filesystem::path& dir,
                                      const RecordingLimits& limits,
                                      const std::set<std::string>& keep, std::size_t incoming,
                                      std::size_t headroom) {
  RecordingPruneResult result;
  auto files = list_recordings(dir, keep);
  std::uint64_t bytes = 0;
  for (const auto& file : files) bytes += file.bytes;
  std::size_t count = files.size();
  std::size_t max_files = limits.max_files > incoming ? limits.max_files - incoming : 0;
  if (count > max_files) max_files -= std::min(headroom, max_files);
  for (const auto& file : files) {
    if (count <= max_files && bytes <= limits.max_bytes) break;
    if (file.keep) continue;
    std::error_code ec;
    const bool removed = std::filesystem::remove(file.path, ec);
    if (ec) continue;  // cannot delete it (permissions): leave it, try the next one
    --count;           // deleted, by us or by another server sharing the directory
    bytes -= file.bytes;
    if (removed) {
      ++result.files_removed;
      result.bytes_removed += file.bytes;
    }
  }
  result.files_kept = count;
  result.bytes_kept = bytes;
  return result;
}

RecordingRetention::RecordingRetention(std::filesystem::path dir, RecordingLimits limits)
    : dir_(std::move(dir)), limits_(limits) {}

bool RecordingRetention::fits_without_scan() const {
  if (!scanned_ || added_ >= kMaxAddedBetweenScans) return false;
  if (std::chrono::steady_clock::now() - scanned_at_ >= kRescanInterval) return false;
  if (scanned_files_ + added_ + 1 > limits_.max_files) return false;
  std::uint64_t bytes = scanned_bytes_;
  for (const auto& size : added_sizes_) bytes += *size;
  return bytes <= limits_.max_bytes;
}

void RecordingRetention::make_room(const std::function<std::set<std::string>()>& live) {
  if (fits_without_scan()) {
    ++added_;
    return;
  }
  const auto result = prune_recordings(dir_, limits_, live ? live() : std::set<std::string>{}, 1,
                                       limits_.max_files / 10);
  scanned_ = true;
  scanned_at_ = std::chrono::steady_clock::now();
  scanned_files_ = result.files_kept;
  scanned_bytes_ = result.bytes_kept;
  added_ = 1;
  added_sizes_.clear();
}

void RecordingRetention::track_size(std::shared_ptr<const std::uint64_t> bytes) {
  if (bytes) added_sizes_.push_back(std::move(bytes));
}

}  // namespace agentty::session
