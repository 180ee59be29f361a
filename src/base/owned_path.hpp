// OwnedPath: a file or directory this process made for one purpose, removed
// (with everything in it) when the last owner lets go of it: a checked
// script kept as long as the execution that runs it is on record, a
// session's generated rc files needed only while its shell runs. Header-only;
// removal errors are ignored, since the path may already be gone.
#pragma once

#include <filesystem>
#include <system_error>
#include <utility>

namespace agentty {

class OwnedPath {
 public:
  explicit OwnedPath(std::filesystem::path path) : path_(std::move(path)) {}
  OwnedPath(const OwnedPath&) = delete;
  OwnedPath& operator=(const OwnedPath&) = delete;
  ~OwnedPath() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace agentty
