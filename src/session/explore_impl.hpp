// Explorer's state, shared by explore.cpp (conversion, reads by line) and
// explore_grep.cpp (grep and the event-loop calls). Internal to the session
// layer: include only from those two files.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.hpp"
#include "session/explore.hpp"
#include "session/text_store.hpp"
#include "session/text_view.hpp"

namespace agentty::session {
namespace explore_detail {

inline constexpr std::size_t kConvertBlock = Explorer::kConvertBlock;
inline constexpr std::size_t kLineChunk = 64 << 10;  // reads while walking lines
// An open line (no LF yet) longer than this goes to the store as it is, so a
// program printing one endless line does not grow the explorer's memory.
inline constexpr std::size_t kMaxOpenLineBytes = 1 << 20;

inline std::uint64_t count_lf(const char* data, std::size_t size) {
  return static_cast<std::uint64_t>(std::count(data, data + size, '\n'));
}

}  // namespace explore_detail

using namespace explore_detail;

struct Explorer::Impl {
  Impl(const OutputLog& log_in, ExplorerOptions options_in)
      : log(log_in), options(std::move(options_in)) {
    store.open(options.cache_path);
  }

  const OutputLog& log;
  ExplorerOptions options;
  // The text: every completed line, each ending in LF, then the start of the
  // last line when it outgrew kMaxOpenLineBytes or the log is complete.
  TextStore store;
  TextConverter converter;          // holds the rest of the last line (open_line)
  std::uint64_t start_seq = 1;      // first retained raw byte when the cache was built
  std::uint64_t text_seq = 1;       // raw byte where line 1 begins
  bool first_line_cut = false;      // line 1 lost its start to eviction (no LF to skip to)
  bool seeking_line = false;        // after an eviction: text_seq not found yet
  std::uint64_t converted_seq = 1;  // raw bytes before this are converted
  bool finished = false;            // log complete and converter flushed
  std::uint64_t completed_lines = 0;
  std::uint64_t max_line = 0;
  std::vector<std::uint64_t> index{0};  // text offset of line k * kIndexStride
  std::uint64_t last_line_begin = 0;    // text offset where the last (open) line begins
  // This call could not read the log's spool (out of fds): what was
  // converted stays, the rest is converted by a later call. Empty otherwise.
  std::string read_failure;

  const std::string& open_line() const { return converter.open_line(); }
  std::uint64_t text_size() const { return store.size() + open_line().size(); }
  std::uint64_t line_count() const {
    return completed_lines + (text_size() > last_line_begin ? 1 : 0);
  }

  void reset(std::uint64_t from_seq) {
    store.clear();
    converter = TextConverter(log.charsets_at(from_seq));
    start_seq = converted_seq = text_seq = from_seq;
    seeking_line = from_seq > 1;
    first_line_cut = false;
    finished = false;
    completed_lines = max_line = last_line_begin = 0;
    index.assign(1, 0);
  }

  // After an eviction the first retained byte is most likely inside a line
  // (and maybe inside an escape sequence or a character): the text starts
  // after the first LF instead. With no LF retained, the cut line is kept.
  // A cut that fell just after a LF left a whole line: it stays.
  void seek_first_line() {
    seeking_line = false;
    if (log.retained_starts_a_line()) return;
    for (std::uint64_t seq = start_seq; seq < log.latest_seq();) {
      const std::uint64_t to = std::min<std::uint64_t>(log.latest_seq(), seq + kConvertBlock);
      log.copy_range(seq, to, raw_buffer);
      if (!log.read_error().empty()) {
        read_failure = log.read_error();
        seeking_line = true;
        return;
      }
      if (const void* lf = std::memchr(raw_buffer.data(), '\n', raw_buffer.size())) {
        text_seq = converted_seq =
            seq + static_cast<std::uint64_t>(static_cast<const char*>(lf) - raw_buffer.data()) + 1;
        return;
      }
      seq = to;
    }
    first_line_cut = true;
  }

  // Counts the lines `text` completes and appends them to the store.
  void take(std::string_view text) {
    std::uint64_t line_begin = last_line_begin;
    std::size_t from = 0;
    while (from < text.size()) {
      const void* lf = std::memchr(text.data() + from, '\n', text.size() - from);
      if (lf == nullptr) break;
      const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(lf) - text.data());
      const std::uint64_t end = store.size() + at;
      max_line = std::max(max_line, end - line_begin);
      line_begin = end + 1;
      if (++completed_lines % kIndexStride == 0) index.push_back(line_begin);
      from = at + 1;
    }
    last_line_begin = line_begin;
    store.append(text);
  }

  // Start of a call: the cache file may be gone (made again), and output it
  // was built from may have been evicted (line numbers count from the first
  // whole line retained, so it is built again).
  void begin_sync() {
    read_failure.clear();
    if (!store.resume()) reset(log.first_retained_seq());
    if (log.first_retained_seq() > start_seq) reset(log.first_retained_seq());
  }

  // Converts at most one block towards `until_seq` (clipped to the log's
  // end); true once there. Between the steps of one call the log may evict
  // more (a flood past its cap): the cache is built again only when bytes
  // it still needs are gone, so a call never chases the flood.
  bool sync_step(std::uint64_t until_seq) {
    if (log.first_retained_seq() > converted_seq) reset(log.first_retained_seq());
    if (seeking_line) seek_first_line();
    if (!read_failure.empty()) return true;  // the call ends with the error
    const std::uint64_t target = std::min(until_seq, log.latest_seq());
    if (converted_seq < target) {
      const std::uint64_t to = std::min<std::uint64_t>(target, converted_seq + kConvertBlock);
      log.copy_range(converted_seq, to, raw_buffer);
      // Converting nothing here cached an empty text for good.
      if (!log.read_error().empty()) {
        read_failure = log.read_error();
        return true;
      }
      text_buffer.clear();
      converter.feed(raw_buffer, text_buffer);
      if (converter.open_line().size() > kMaxOpenLineBytes) converter.take_open_line(text_buffer);
      take(text_buffer);
      converted_seq = to;
      if (converted_seq < target) return false;
    }
    if (log.complete() && !finished && converted_seq == log.latest_seq()) {
      text_buffer.clear();
      converter.finish(text_buffer);
      take(text_buffer);
      finished = true;
      converter = TextConverter();  // its open line's capacity: up to the longest line
    }
    return true;
  }

  // Kept only within one call: an explored execution otherwise held ~8 MiB
  // (a block each) for as long as its record, 200 of them at most.
  void end_sync() {
    std::string().swap(raw_buffer);
    std::string().swap(text_buffer);
  }

  void sync() {
    begin_sync();
    while (!sync_step(UINT64_MAX)) {
    }
    end_sync();
  }

  ExploreStat cached_stat() const {
    ExploreStat stat;
    stat.size_bytes = text_size();
    stat.line_count = line_count();
    stat.max_line_bytes = std::max<std::uint64_t>(max_line, text_size() - last_line_begin);
    // The cache's: what its line numbers count from (the log may have
    // evicted more while an async call converted).
    stat.first_retained_seq = start_seq;
    stat.text_seq = text_seq;
    stat.first_line_cut = first_line_cut;
    stat.raw_bytes = converted_seq - start_seq;
    stat.evicted = start_seq > 1;
    stat.read_error = read_failure;
    return stat;
  }

  std::string raw_buffer, text_buffer;  // reused across blocks: fresh memory costs page faults

  // 0-based line holding text offset `offset` of the stored text.
  std::uint64_t line_of(std::uint64_t offset, std::string_view stored) const {
    if (offset >= stored.size()) return completed_lines;
    const std::size_t k = static_cast<std::size_t>(
        std::upper_bound(index.begin(), index.end(), offset) - index.begin() - 1);
    return k * kIndexStride + count_lf(stored.data() + index[k], offset - index[k]);
  }

  // Text bytes [offset, offset + length) of store + open line, appended to out.
  void read_text(std::uint64_t offset, std::size_t length, std::string& out) const {
    const std::uint64_t end = std::min<std::uint64_t>(text_size(), offset + length);
    if (offset >= end) return;
    if (offset < store.size()) {
      const std::uint64_t stop = std::min(end, store.size());
      store.read(offset, static_cast<std::size_t>(stop - offset), out);
      offset = stop;
    }
    if (offset < end) {
      out.append(open_line(), static_cast<std::size_t>(offset - store.size()),
                 static_cast<std::size_t>(end - offset));
    }
  }

  // Text offset where 0-based line `line` begins (text_size() past the end).
  std::uint64_t line_start(std::uint64_t line) const {
    if (line >= completed_lines) return line == completed_lines ? last_line_begin : text_size();
    std::uint64_t offset = index[line / kIndexStride];
    std::uint64_t skip = line % kIndexStride;
    std::string chunk;
    while (skip > 0) {
      chunk.clear();
      store.read(offset, kLineChunk, chunk);
      std::size_t at = 0;
      while (skip > 0) {
        const void* lf = std::memchr(chunk.data() + at, '\n', chunk.size() - at);
        if (lf == nullptr) break;
        at = static_cast<std::size_t>(static_cast<const char*>(lf) - chunk.data()) + 1;
        --skip;
      }
      offset += skip > 0 ? chunk.size() : at;
    }
    return offset;
  }

  // Start of the line `lines` lines before the one starting at `offset`.
  std::uint64_t back_lines(std::uint64_t offset, std::size_t lines) const {
    if (lines == 0) return offset;
    std::string chunk;
    std::uint64_t end = offset;  // offset - 1 is the LF ending the previous line
    std::size_t found = 0;
    while (end > 0) {
      const std::uint64_t from = end > kLineChunk ? end - kLineChunk : 0;
      chunk.clear();
      read_text(from, static_cast<std::size_t>(end - from), chunk);
      for (std::size_t i = chunk.size(); i-- > 0;) {
        if (chunk[i] == '\n' && from + i + 1 < offset && ++found == lines) return from + i + 1;
      }
      end = from;
    }
    return 0;
  }

  // Reads the line at `offset` (keeping at most `cap` bytes) and moves offset
  // past its LF. Returns the full length of the line from offset.
  std::uint64_t next_line(std::uint64_t& offset, std::size_t cap, std::string& text) const {
    text.clear();
    std::uint64_t length = 0;
    std::string chunk;
    for (;;) {
      chunk.clear();
      read_text(offset + length, kLineChunk, chunk);
      if (chunk.empty()) break;
      const void* lf = std::memchr(chunk.data(), '\n', chunk.size());
      const std::size_t part =
          lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - chunk.data()) : chunk.size();
      if (text.size() < cap) text.append(chunk, 0, std::min(part, cap - text.size()));
      length += part;
      if (lf) {
        offset += length + 1;
        if (length > text.size()) text.resize(complete_utf8_prefix(text));
        return length;
      }
    }
    offset += length;
    if (length > text.size()) text.resize(complete_utf8_prefix(text));
    return length;
  }

  ExploreLine line_at(std::uint64_t& offset, std::uint64_t number, std::size_t cap) const {
    ExploreLine line;
    line.line_number = number;
    line.truncated = next_line(offset, cap, line.text) > line.text.size();
    return line;
  }

  GrepMatch build_match(std::uint64_t line_offset, std::uint64_t line,
                        const GrepOptions& options) const;
  Expected<GrepResult> grep(const GrepOptions& options);
  ExploreReadResult read(const ExploreReadOptions& options);
};

}  // namespace agentty::session
