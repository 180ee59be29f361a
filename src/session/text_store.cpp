#include "session/text_store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace agentty::session {

void TextStore::open(const std::filesystem::path& path) {
  if (path.empty()) return;
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;  // memory instead
  fd_.reset(fd);
  path_ = path;
}

TextStore::~TextStore() {
  if (fd_ || suspended_) ::unlink(path_.c_str());
}

void TextStore::suspend() {
  if (fd_) {
    fd_.reset();
    suspended_ = true;
  }
}

bool TextStore::resume() {
  if (!suspended_) return true;
  suspended_ = false;
  fd_.reset(::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  struct stat st {};
  if (fd_ && ::fstat(fd_.get(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) >= size_)
    return true;
  fd_.reset();
  open(path_);  // made again, empty
  memory_.clear();
  size_ = 0;
  return false;
}

void TextStore::append(std::string_view text) {
  if (!fd_) {
    memory_.append(text);
    size_ = memory_.size();
    return;
  }
  while (!text.empty()) {
    const ssize_t n = ::pwrite(fd_.get(), text.data(), text.size(), static_cast<off_t>(size_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fall_back_to_memory(text);
    text.remove_prefix(static_cast<std::size_t>(n));
    size_ += static_cast<std::uint64_t>(n);
  }
}

void TextStore::read(std::uint64_t offset, std::size_t length, std::string& out) const {
  if (offset >= size_) return;
  length = static_cast<std::size_t>(std::min<std::uint64_t>(length, size_ - offset));
  if (!fd_) {
    out.append(memory_, static_cast<std::size_t>(offset), length);
    return;
  }
  const std::size_t base = out.size();
  out.resize(base + length);
  std::size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd_.get(), out.data() + base + done, length - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(base + done);
}

void TextStore::clear() {
  memory_.clear();
  size_ = 0;
  if (fd_ && ::ftruncate(fd_.get(), 0) != 0) fd_.reset();
}

void TextStore::fall_back_to_memory(std::string_view rest) {
  std::string all;
  read(0, static_cast<std::size_t>(size_), all);
  ::unlink(path_.c_str());
  fd_.reset();
  memory_ = std::move(all);
  memory_.append(rest);
  size_ = memory_.size();
}

bool TextStore::write_all_at(int fd, std::string_view text, std::uint64_t offset) {
  while (!text.empty()) {
    const ssize_t n = ::pwrite(fd, text.data(), text.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

TextStore::View::View(const TextStore& store, std::string_view more) {
  if (!store.fd_ || store.size_ + more.size() == 0) {
    if (more.empty()) {
      text_ = store.memory_;
    } else {
      copy_ = store.memory_;
      copy_.append(more);
      text_ = copy_;
    }
    return;
  }
  const std::uint64_t size = store.size_ + more.size();
  void* addr = write_all_at(store.fd_.get(), more, store.size_)
                   ? ::mmap(nullptr, size, PROT_READ, MAP_SHARED, store.fd_.get(), 0)
                   : MAP_FAILED;
  if (addr == MAP_FAILED) {
    store.read(0, static_cast<std::size_t>(store.size_), copy_);
    copy_.append(more);
    text_ = copy_;
    return;
  }
  addr_ = addr;
  text_ = std::string_view(static_cast<const char*>(addr), size);
}

TextStore::View::~View() {
  if (addr_) ::munmap(addr_, text_.size());
}

}  // namespace agentty::session
