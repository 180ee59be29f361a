#include "base/private_dir.hpp"

#include "base/errno_message.hpp"
#include "base/fd_io.hpp"
#include "base/random_id.hpp"
#include "base/unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace agentty {

namespace fs = std::filesystem;

namespace {

// Makes the parents (mode as the umask says: they are not ours alone) and
// `dir` itself with 0700; whether it was made.
Expected<bool> make_dir(const fs::path& dir) {
  std::error_code ec;
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) == 0) {
    // The umask may have taken bits from 0700 too (077 is usual; 0277 is not).
    if (::chmod(dir.c_str(), 0700) != 0) return make_error(errno_message("chmod"));
    return true;
  }
  if (errno != EEXIST)
    return make_error("cannot create " + dir.string() + ": " + errno_message("mkdir"));
  return false;
}

// How `dir` is named in an error: with where it leads when it is a symlink.
std::string described(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_symlink(dir, ec)) return dir.string();
  auto target = fs::read_symlink(dir, ec);
  return dir.string() + " (a symlink to " + (ec ? std::string("?") : target.string()) + ")";
}

}  // namespace

void make_open_file_private(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == ::geteuid() &&
      (info.st_mode & 0777) != 0600)
    ::fchmod(fd, 0600);
}

Expected<void> ensure_private_dir(const fs::path& dir) {
  auto made = make_dir(dir);
  if (!made) return make_error(made.error());
  if (*made) return {};
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0)
    return make_error("cannot use " + described(dir) + ": " + errno_message("stat"));
  if (!S_ISDIR(info.st_mode)) return make_error(described(dir) + " is not a directory");
  if (info.st_uid != ::geteuid()) {
    return make_error(described(dir) + " belongs to another user (uid " +
                      std::to_string(info.st_uid) + "); remove it or choose another --state-dir");
  }
  struct stat link {};
  if (::lstat(dir.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    // Never made private through a link: it may lead to a shared directory
    // of ours (/tmp for root), which must keep its mode.
    if ((info.st_mode & 077) == 0) return {};
    return make_error(described(dir) + " is open to other users; make its target private " +
                      "(chmod 700) or point the link to a directory of its own");
  }
  if ((info.st_mode & 07777) != 0700 && ::chmod(dir.c_str(), 0700) != 0) {
    return make_error("cannot make " + dir.string() + " private: " + errno_message("chmod"));
  }
  return {};
}

Expected<std::string> make_private_dir_if_missing(const fs::path& dir) {
  auto made = make_dir(dir);
  if (!made) return make_error(made.error());
  if (*made) return std::string();
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return make_error(errno_message("stat"));
  if (!S_ISDIR(info.st_mode)) return make_error(dir.string() + " is not a directory");
  if (info.st_uid != ::geteuid())
    return dir.string() + " belongs to another user (uid " + std::to_string(info.st_uid) + ")";
  // Sticky (/tmp): others cannot replace what we put there.
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (info.st_mode & S_ISVTX) == 0)
    return dir.string() + " is writable by other users";
  return std::string();
}

Expected<void> write_private_file(const fs::path& path, std::string_view text) {
  auto temporary = path;
  temporary += ".new-" + random_hex(8);
  return write_private_file(path, text, temporary);
}

Expected<void> write_private_file(const fs::path& path, std::string_view text,
                                  const fs::path& temporary) {
  ::unlink(temporary.c_str());  // left by a writer that crashed before its rename
  UniqueFd fd(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return make_error("cannot write " + path.string() + ": " + errno_message("open"));
  ::fchmod(fd.get(), 0600);  // the umask may have taken bits we need
  if (auto written = write_all(fd.get(), text); !written) {
    ::unlink(temporary.c_str());
    return make_error("cannot write " + path.string() + ": " + written.error());
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    auto error = errno_message("rename");
    ::unlink(temporary.c_str());
    return make_error("cannot write " + path.string() + ": " + error);
  }
  return {};
}

}  // namespace agentty
