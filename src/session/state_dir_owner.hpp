// StateDirOwner: which server made a file in a STATE_DIR that several
// servers may share, so that a later server can remove what a dead one left
// (killed with SIGKILL, a crash: no destructor ran) without ever touching a
// live server's files.
//
// Each server takes a tag (16 random hex digits) and holds an flock on
// STATE_DIR/owners/<tag>.lock for its whole life. The kernel drops the lock
// when the process dies, however it dies; the fd is O_CLOEXEC, so programs the
// server starts do not inherit it (agentty never forks without exec). The
// lock file is made under a temporary name, locked, then renamed into place,
// so no sweeper ever sees it unlocked while its owner lives.
//
// The files a server makes in spool/, sessions/ and scripts/ are named
// "<tag>-...". sweep() removes every such entry whose owner is gone: its
// lock file can be locked, or there is none (the owner removed it last when
// it exited, or a sweeper did after removing its files). Entries without a
// tag (made by an older agentty) are left alone, and so are recordings, which
// outlive their server on purpose (bounded by their own retention).
//
// Threading: one per server, on the loop; sweep() is synchronous (a few
// directory listings at start-up).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/expected.hpp"
#include "base/unique_fd.hpp"

namespace agentty::session {

class StateDirOwner {
 public:
  // The directories whose entries carry an owner's tag.
  static constexpr const char* kOwnedDirs[] = {"spool", "sessions", "scripts"};

  // Takes a new tag and its lock under `state_dir`. Errors name the syscall.
  static Expected<std::unique_ptr<StateDirOwner>> acquire(const std::filesystem::path& state_dir);
  ~StateDirOwner();  // removes the lock file, then lets go of the lock
  StateDirOwner(const StateDirOwner&) = delete;
  StateDirOwner& operator=(const StateDirOwner&) = delete;

  const std::string& tag() const { return tag_; }
  // `name` as this server names what it makes in an owned directory.
  std::string owned_name(std::string_view name) const { return tag_ + "-" + std::string(name); }

  // Makes the lock file again (same tag) if it is gone: a state dir deleted
  // by hand takes it along, and a server started afterwards would take this
  // one for gone and sweep the files it makes from then on. A stat when
  // nothing is wrong; called before each new owned name is handed out.
  void keep_claim();

  // Removes the entries of owners that are gone, and their lock files;
  // returns how many entries it removed.
  std::size_t sweep() const;

 private:
  StateDirOwner(std::filesystem::path state_dir, std::string tag, UniqueFd lock);

  std::filesystem::path state_dir_;
  std::string tag_;
  UniqueFd lock_;
  std::string claim_error_;  // why keep_claim could not make the lock, as last warned
};

}  // namespace agentty::session
