// Explorer: look inside an execution's whole retained output as text
// (stat, grep, read by line) without pulling it into an agent's context and
// without moving any cursor.
//
// Text cache: the log's bytes are converted to text (TextConverter, the same
// rules as text_view.hpp, with no page-boundary exception) in big streaming
// blocks, once, and appended to a cache: a file (created 0600, O_CLOEXEC,
// removed by the destructor; next to the spool unless a path is given), else
// memory (a RAM-only log is small). Each call
// first converts only what the log gained since the last call. The line still
// open (no LF yet) is taken as the last line; past 1 MiB its text goes to the
// cache as it grows (a CR then overwrites only what came after), so one
// endless line costs disk, not RAM. A sparse index (the text
// offset of every kIndexStride-th line) makes reads by line number cheap.
// When the log has evicted bytes the cache was built from (past the spool
// cap), the cache is rebuilt from the first whole line retained (after the
// first LF at or past first_retained_seq(): the line it cuts is dropped, as
// are an escape sequence or character it cuts; a cut just after a LF keeps
// the whole line after it): line numbers are counted
// from there, so they shift after an eviction.
//
// grep: PCRE2 (UTF, multiline, JIT when available) runs over the whole
// cache (mmap'd) as one subject rather than line by line; a match that runs
// past its line is confirmed against that line alone, so a pattern never
// matches across lines. Line numbers come from the sparse index. Each match
// carries its own context lines (overlapping contexts are repeated).
//
// On an event loop (the explore tool) the *_async calls do the same work in
// steps, at most kConvertBlock raw bytes converted or kSearchBlock text bytes
// searched each, and post to the loop between steps, so other calls and
// viewers are served meanwhile: converting a 390 MB output held the loop for
// 3.7 s, a grep over it for 0.5 s. They convert only what the log held when
// they began (a flood does not keep them going), and run one at a time per
// Explorer (the next waits), so a suspended grep's view of the cache stays
// valid. Hold the Explorer by shared_ptr across them: a spool-budget drop of
// the cache then only lets go of it.
//
// Threading: one Explorer per OutputLog, on the log's thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/change_signal.hpp"
#include "base/expected.hpp"
#include "session/output_log.hpp"

namespace agentty::session {

struct ExploreStat {
  std::uint64_t size_bytes = 0;      // text bytes (what grep and read see)
  std::uint64_t line_count = 0;      // an open last line counts
  std::uint64_t max_line_bytes = 0;  // without the LF
  std::uint64_t raw_bytes = 0;       // retained raw bytes the text comes from
  std::uint64_t first_retained_seq = 1;
  bool evicted = false;  // output before first_retained_seq is gone
  // Raw byte where line 1 begins: first_retained_seq, or after an eviction
  // just past the first LF retained (the cut line before it is skipped).
  std::uint64_t text_seq = 1;
  bool first_line_cut = false;  // evicted and no LF retained: line 1 lacks its start
  // The spool could not be read (out of fds): the counts cover only what
  // was converted before; empty otherwise. grep and read return it as error.
  std::string read_error;
};

struct ExploreLine {
  std::uint64_t line_number = 0;  // 1-based
  std::string text;               // without the LF
  bool truncated = false;         // cut at max_line_bytes (on a UTF-8 boundary)
};

struct GrepOptions {
  std::string pattern;  // PCRE2
  bool ignore_case = false;
  std::size_t before = 0;  // context lines
  std::size_t after = 0;
  std::size_t limit = 100;            // matches
  std::size_t max_bytes = 16384;      // all returned line text together
  std::size_t max_line_bytes = 1024;  // each returned line
  std::uint64_t start_line = 1;       // continue a capped grep here
};

struct GrepMatch {
  ExploreLine line;
  std::vector<ExploreLine> before;
  std::vector<ExploreLine> after;
};

struct GrepResult {
  std::vector<GrepMatch> matches;
  bool capped = false;                // limit or max_bytes stopped the search
  std::uint64_t next_start_line = 0;  // when capped: start_line to continue with
  std::uint64_t lines_searched = 0;
};

struct ExploreReadOptions {
  std::int64_t line_offset = 0;  // 0-based line index; negative counts from the end (-1: last)
  std::size_t limit = 100;       // lines
  std::size_t max_bytes = 16384;
  std::uint64_t byte_offset = 0;  // continue inside the first line (a long line)
};

struct ExploreReadResult {
  std::vector<ExploreLine> lines;
  std::int64_t next_line_offset = 0;   // line_offset for the next call
  std::uint64_t next_byte_offset = 0;  // non-zero: the line at next_line_offset was cut there
  bool capped = false;                 // max_bytes or limit stopped before the end
  bool at_end = false;                 // nothing after these lines (yet)
};

struct ExplorerOptions {
  // Text cache file. Empty: "<spool path>.text" when the log has a spool,
  // else memory.
  std::filesystem::path cache_path;
};

class Explorer {
 public:
  static constexpr std::uint64_t kIndexStride = 1024;
  static constexpr std::size_t kConvertBlock = 4 << 20;  // raw bytes converted per step
  static constexpr std::size_t kSearchBlock = 8 << 20;   // text bytes grep'd per step

  explicit Explorer(const OutputLog& log, ExplorerOptions options = {});
  ~Explorer();
  Explorer(const Explorer&) = delete;
  Explorer& operator=(const Explorer&) = delete;

  ExploreStat stat();
  // Bytes the text cache holds (disk, or memory for a RAM-only log); it
  // counts toward the total spool budget and goes with the Explorer.
  std::uint64_t cache_bytes() const;
  // Errors: an invalid pattern ("pattern: <PCRE2 message> at offset N ...").
  Expected<GrepResult> grep(const GrepOptions& options);
  Expected<ExploreReadResult> read(const ExploreReadOptions& options);

  // The same, yielding to the event loop between steps (see above).
  boost::asio::awaitable<ExploreStat> stat_async();
  boost::asio::awaitable<Expected<GrepResult>> grep_async(GrepOptions options);
  boost::asio::awaitable<Expected<ExploreReadResult>> read_async(ExploreReadOptions options);
  // The cache as the last call left it (no conversion): for an answer's
  // eviction fields and hints after an *_async call.
  ExploreStat cached_stat() const;

 private:
  struct Impl;
  struct GrepRun;
  class AsyncCall;
  std::unique_ptr<Impl> impl_;
  bool busy_ = false;  // an *_async call is in progress
  ChangeSignal idle_;  // notified when it ends
};

}  // namespace agentty::session
