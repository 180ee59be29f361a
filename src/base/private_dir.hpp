// Private directories and files: what agentty keeps in its state directory
// (session rc files a shell sources, spools, scripts it runs, recordings, the
// web secret) must be neither readable nor writable by other users, whatever
// the umask it was started with. A umask of 000 (some service managers and
// containers) made every directory 0777 and every rc file 0666: another user
// could rewrite a session's bashrc before bash sourced it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/expected.hpp"

namespace agentty {

// `dir` (its parents made as usual) as a directory of ours with mode 0700:
// made so if missing, and an existing one with other bits is set back to
// 0700; one of another user is refused. A symlink is followed to a private
// directory of ours (an operator may move recordings to a bigger disk), and
// refused, naming where it points, when it leads anywhere else; its target's
// mode is never changed (it may be /tmp). For directories agentty names
// itself (STATE_DIR/spool, sessions ...).
Expected<void> ensure_private_dir(const std::filesystem::path& dir);

// `dir` made with mode 0700 if missing (parents as usual); an existing one
// is left as it is: the operator chose it (a --state-dir may be a shared
// directory). Returns what makes an existing one unsafe for the caller to
// warn about: other users may write into it, or it belongs to another user
// (who could replace what we keep there); empty when neither.
Expected<std::string> make_private_dir_if_missing(const std::filesystem::path& dir);

// An open file of ours (a log someone may have made with looser
// permissions) set to 0600. Left as it is when it is not a regular file
// (/dev/null, /dev/stderr) or not ours: chmod would change it for everyone.
void make_open_file_private(int fd);

// Writes `text` to `path` as a new 0600 file, replacing (by rename) whatever
// was there: a file with looser permissions, a symlink.
Expected<void> write_private_file(const std::filesystem::path& path, std::string_view text);

// The same through a temporary file the caller names (one it can recognise
// and sweep if a writer crashes before the rename; any file already there
// is replaced).
Expected<void> write_private_file(const std::filesystem::path& path, std::string_view text,
                                  const std::filesystem::path& temporary);

}  // namespace agentty
