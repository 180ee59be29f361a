#include "session/text_store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "base/fd_io.hpp"

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
  std::size_t written = 0;
  auto stored = pwrite_all(fd_.get(), text, static_cast<off_t>(size_), &written);
  size_ += written;
  if (!stored) fall_back_to_memory(text.substr(written));
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
  out.resize(base + pread_all(fd_.get(), out.data() + base, length, static_cast<off_t>(offset)));
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
  void* addr = pwrite_all(store.fd_.get(), more, static_cast<off_t>(store.size_))
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
