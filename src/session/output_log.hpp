// OutputLog: every byte a PTY produced, addressed by a position (seq) that
// starts at 1 and only grows.
//
// Storage: a RAM ring keeps the newest `ram_bytes`; a spool file on disk keeps
// everything up to `spool_cap_bytes` (written in large batches off the hot
// path), so a byte evicted from RAM is still readable. Only past the spool cap
// is output gone for good ("evicted"): the spool then keeps the newest bytes
// as a ring of its own, and `first_retained_seq()` moves forward.
//
// Pages: read() never splits a UTF-8 character, an escape sequence, or a
// CR LF pair, and prefers to end a capped page just after a newline, so
// consecutive pages concatenate to the whole, raw and as text.
//
// Cost: append() is a memcpy into the ring; the spool is written with pwrite
// once at least 256 KiB (or half the ring) is unflushed, and on flush(). The
// spool file is created 0600, O_CLOEXEC, O_EXCL when the first batch goes out
// (a log that never outgrows a batch has no file; its directory is made
// again if it went), and removed by the destructor. When it cannot be
// created or written (a full disk, a read-only state dir) the log keeps only
// its RAM ring, removes the file, logs an error once, and spool_error() says
// why, for the tools to tell the agent.
//
// Threading: used only on the I/O event loop (no locking).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/expected.hpp"
#include "base/unique_fd.hpp"
#include "session/charset_index.hpp"

namespace agentty::session {

struct OutputLogOptions {
  std::size_t ram_bytes = 1 << 20;               // RAM ring capacity
  std::uint64_t spool_cap_bytes = 100ull << 20;  // 0: no spool, RAM only
  std::filesystem::path spool_path;              // empty: no spool file
};

struct LogPage {
  std::uint64_t start_seq = 1;  // position of the first byte returned
  std::uint64_t next_seq = 1;   // position just past the last byte returned
  std::string bytes;            // raw bytes [start_seq, next_seq)
  bool capped = false;          // max_bytes cut the page; more is available from next_seq
  bool evicted = false;         // part of the requested range is gone for good
  // The spool could not be read (out of fds): nothing from start_seq on is
  // returned, though it is kept; why, or empty.
  std::string read_error;
};

class OutputLog {
 public:
  explicit OutputLog(OutputLogOptions options = {});
  ~OutputLog();
  OutputLog(const OutputLog&) = delete;
  OutputLog& operator=(const OutputLog&) = delete;

  void append(std::string_view bytes);
  // Writes what is still only in RAM to the spool, if it has a file yet
  // (called on idle and at exit).
  void flush();
  // No more bytes will come: a trailing incomplete character or escape
  // sequence is then returned as it is instead of being held back.
  void mark_complete();
  bool complete() const { return complete_; }

  std::uint64_t latest_seq() const { return latest_seq_; }  // just past the newest byte
  std::uint64_t first_retained_seq() const;
  // After an eviction: the byte just before first_retained_seq() was a LF, so
  // the retained output starts with a whole line (false when nothing was
  // evicted). The log keeps that one byte as it overwrites it.
  bool retained_starts_a_line() const;
  std::uint64_t total_bytes() const { return latest_seq_ - 1; }
  // The most bytes the log can hold: the spool's cap while it is in use,
  // else the RAM ring's. Past it the oldest bytes are evicted.
  std::uint64_t retention_capacity() const;

  // Bytes from `since_seq` on, at most `max_bytes` (a single character or
  // escape sequence longer than max_bytes is returned whole so a cursor always
  // progresses). An incomplete character or escape sequence at the very end
  // is held back until it completes or the log is marked complete. A
  // since_seq before first_retained_seq() starts there with evicted=true; one
  // past latest_seq() returns an empty page at latest_seq().
  LogPage read(std::uint64_t since_seq, std::size_t max_bytes) const;
  // The newest `lines` lines (a trailing partial line counts as one). When
  // they hold more than max_bytes, the newest bytes are kept, cut at a safe
  // boundary, and capped is set (the missing part is before start_seq).
  // evicted: fewer lines than asked were left because of eviction.
  LogPage tail_lines(std::size_t lines, std::size_t max_bytes) const;
  // Raw copy of [from, to) clamped to what is retained; for explore and search.
  // Empty when the part on the spool could not be read: read_error() then
  // says why (until the next copy).
  std::string copy_range(std::uint64_t from, std::uint64_t to) const;
  // The same into `out` (replacing its contents), so a caller copying many
  // blocks reuses one buffer instead of faulting in fresh memory each time.
  void copy_range(std::uint64_t from, std::uint64_t to, std::string& out) const;

  // The character sets in use at `seq` (a page's start_seq), from the bytes
  // before it: pass it to to_text with the page (see CharsetIndex for the
  // cost, and for a position inside a sequence or after an eviction).
  Charsets charsets_at(std::uint64_t seq) const { return charsets_.at(*this, seq); }

  // Stops the spool from growing (a budget shared by all logs ran out): it
  // keeps the bytes it holds as a ring, so from now on the newest bytes
  // replace the oldest, which become evicted; when everything so far still
  // fits in RAM, the spool is dropped and the RAM ring alone keeps the newest.
  // Appends never block or fail because of it. Idempotent.
  void freeze_spool();
  // Once complete and wholly on the spool: gives the RAM ring's pages back,
  // and reads come from the spool file (the page cache) from then on. An
  // ended execution kept for later reads then holds no RAM for its output,
  // and no fd: the file is closed, and each read opens it again.
  // No-op otherwise (no spool file, or part of the ring not on it).
  void release_ram();
  // The latest_seq() at freeze_spool(), 0 when the spool was never frozen.
  std::uint64_t spool_frozen_at() const;

  const std::filesystem::path& spool_path() const { return options_.spool_path; }
  // Why the spool is not in use ("cannot write the spool file PATH: CAUSE"),
  // or empty. The log then keeps only its RAM ring.
  const std::string& spool_error() const;
  // Why the last copy_range could not read the spool ("cannot read the spool
  // file PATH: CAUSE"), or empty.
  const std::string& read_error() const;

 private:
  struct Impl;
  OutputLogOptions options_;
  std::uint64_t latest_seq_ = 1;
  bool complete_ = false;
  Impl* impl_;
  mutable CharsetIndex charsets_;  // a cache of what the bytes say
};

}  // namespace agentty::session
