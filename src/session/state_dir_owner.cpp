#include "session/state_dir_owner.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <vector>

#include "base/errno_message.hpp"
#include "base/private_dir.hpp"
#include "base/random_id.hpp"

namespace agentty::session {
namespace {

constexpr std::size_t kTagLength = 16;

std::filesystem::path lock_path(const std::filesystem::path& state_dir, const std::string& tag) {
  return state_dir / "owners" / (tag + ".lock");
}

// The tag of an entry named "<tag>-...", or empty.
std::string tag_of(const std::string& name) {
  if (name.size() <= kTagLength || name[kTagLength] != '-') return {};
  const bool hex = std::all_of(name.begin(), name.begin() + kTagLength, [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  return hex ? name.substr(0, kTagLength) : std::string();
}

// The lock of an owner that is gone, held while its files are removed; an
// invalid fd when the owner lives. `exists` says whether there was a file.
struct DeadOwner {
  bool dead = false;
  UniqueFd lock;
};

DeadOwner check_owner(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return {errno == ENOENT, UniqueFd()};
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return {};  // held: its server lives
  return {true, std::move(fd)};
}

// Makes STATE_DIR/owners/<tag>.lock, locked before it appears under that name.
Expected<UniqueFd> take_lock(const std::filesystem::path& state_dir, const std::string& tag) {
  if (auto made = ensure_private_dir(state_dir / "owners"); !made) return make_error(made.error());
  const auto temporary = state_dir / "owners" / ("." + tag + ".new");
  UniqueFd fd(::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return make_error(errno_message(("open " + temporary.string()).c_str()));
  if (::flock(fd.get(), LOCK_EX) != 0 ||
      ::rename(temporary.c_str(), lock_path(state_dir, tag).c_str()) != 0) {
    auto error = errno_message("lock the owner file");
    ::unlink(temporary.c_str());
    return make_error(error);
  }
  return fd;
}

}  // namespace

StateDirOwner::StateDirOwner(std::filesystem::path state_dir, std::string tag, UniqueFd lock)
    : state_dir_(std::move(state_dir)), tag_(std::move(tag)), lock_(std::move(lock)) {}

Expected<std::unique_ptr<StateDirOwner>> StateDirOwner::acquire(
    const std::filesystem::path& state_dir) {
  const std::string tag = random_hex(kTagLength / 2);
  auto lock = take_lock(state_dir, tag);
  if (!lock) return make_error(lock.error());
  return std::unique_ptr<StateDirOwner>(new StateDirOwner(state_dir, tag, std::move(lock).value()));
}

void StateDirOwner::keep_claim() {
  struct stat info {};
  if (::stat(lock_path(state_dir_, tag_).c_str(), &info) == 0) return;
  auto lock = take_lock(state_dir_, tag_);
  if (!lock) {
    if (lock.error() != claim_error_) {  // said once per reason, not at every execute
      spdlog::warn(
          "the state dir's owner file went and cannot be made again ({}); a server "
          "started later may remove this one's files",
          lock.error());
    }
    claim_error_ = lock.error();
    return;
  }
  claim_error_.clear();
  spdlog::info("state dir {} was removed while this server ran; its owner file is made again",
               state_dir_.string());
  lock_ = std::move(lock).value();
}

StateDirOwner::~StateDirOwner() {
  ::unlink(lock_path(state_dir_, tag_).c_str());
}

std::size_t StateDirOwner::sweep() const {
  std::map<std::string, std::vector<std::filesystem::path>> by_owner;
  for (const char* dir : kOwnedDirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(state_dir_ / dir, ec)) {
      const std::string tag = tag_of(entry.path().filename().string());
      if (!tag.empty() && tag != tag_) by_owner[tag].push_back(entry.path());
    }
  }
  // Lock files whose server is gone and left nothing behind go too.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(state_dir_ / "owners", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == kTagLength + 5 && name.ends_with(".lock")) {
      const std::string tag = tag_of(name.substr(0, kTagLength) + "-");
      if (!tag.empty() && tag != tag_) by_owner.try_emplace(tag);
    }
  }
  std::size_t removed = 0;
  for (const auto& [tag, paths] : by_owner) {
    const auto lock = lock_path(state_dir_, tag);
    DeadOwner owner = check_owner(lock);
    if (!owner.dead) continue;
    for (const auto& path : paths) {
      std::error_code ignored;
      if (std::filesystem::remove_all(path, ignored) > 0) ++removed;
    }
    // Last, while still holding its lock: a sweeper that finds no lock file
    // knows the owner is gone.
    ::unlink(lock.c_str());
  }
  if (removed > 0)
    spdlog::info("removed {} files left in {} by agentty servers that are gone", removed,
                 state_dir_.string());
  return removed;
}

}  // namespace agentty::session
