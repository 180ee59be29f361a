// TextStore: the explorer's append-only text cache. A file when a path is
// given (and can be created), else memory (slower to grow, same answers).
// Between calls the file is closed (suspend/resume), so an explored record
// holds no fd: records once kept one each for their whole life, 200 at most.
//
// Threading: owned by one Explorer, on its log's thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/unique_fd.hpp"

namespace agentty::session {

class TextStore {
 public:
  TextStore() = default;
  ~TextStore();
  TextStore(const TextStore&) = delete;
  TextStore& operator=(const TextStore&) = delete;

  // Creates the file at `path` (0600, O_EXCL, O_NOFOLLOW, removed by the
  // destructor); memory when path is empty or the file cannot be made.
  void open(const std::filesystem::path& path);
  std::uint64_t size() const { return size_; }

  // Closes the file until resume(); resume() opens it again and is false
  // when it is gone or shorter (the store is then empty, to be filled again).
  void suspend();
  bool resume();

  void append(std::string_view text);
  // Appends bytes [offset, offset + length) (clipped to size()) to out.
  void read(std::uint64_t offset, std::size_t length, std::string& out) const;
  void clear();

  // The whole stored text followed by `more` (the open line), for the
  // duration of one call: memory, or the file mapped read-only with `more`
  // written past its end (a copy if that fails).
  class View {
   public:
    View(const TextStore& store, std::string_view more);
    ~View();
    View(const View&) = delete;
    View& operator=(const View&) = delete;
    std::string_view text() const { return text_; }

   private:
    void* addr_ = nullptr;
    std::string copy_;
    std::string_view text_;
  };

 private:
  // The disk filled up: keep going in memory with what the file holds.
  void fall_back_to_memory(std::string_view rest);

  UniqueFd fd_;
  bool suspended_ = false;
  std::filesystem::path path_;
  std::string memory_;
  std::uint64_t size_ = 0;
};

}  // namespace agentty::session
