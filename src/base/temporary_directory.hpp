// TemporaryDirectory: a directory that is removed, with everything in it,
// when its owner lets go of it (e.g. a session's generated rc files, needed
// only while its shell runs: a long-lived server left one per `open`).
#pragma once

#include <filesystem>
#include <system_error>
#include <utility>

namespace agentty {

class TemporaryDirectory {
 public:
  explicit TemporaryDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace agentty
