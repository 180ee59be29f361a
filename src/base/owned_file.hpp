// OwnedFile: a file this process made for one purpose and removes when the
// last owner lets go of it (e.g. a checked script, kept as long as the
// execution that runs it is on record). Header-only; removal errors are
// ignored, since the file may already be gone.
#pragma once

#include <filesystem>
#include <system_error>
#include <utility>

namespace agentty {

class OwnedFile {
 public:
  explicit OwnedFile(std::filesystem::path path) : path_(std::move(path)) {}
  OwnedFile(const OwnedFile&) = delete;
  OwnedFile& operator=(const OwnedFile&) = delete;
  ~OwnedFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace agentty
