#include "session/explore.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstring>

#include "session/text_store.hpp"
#include "session/text_view.hpp"

namespace agentty::session {
namespace {

constexpr std::size_t kConvertBlock = 4 << 20;  // raw bytes converted per step
constexpr std::size_t kLineChunk = 64 << 10;    // reads while walking lines
// An open line (no LF yet) longer than this goes to the store as it is, so a
// program printing one endless line does not grow the explorer's memory.
constexpr std::size_t kMaxOpenLineBytes = 1 << 20;

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

// Length of `text` without a UTF-8 sequence cut short at its end (a line
// kept up to a byte cap may end inside a character).
std::size_t without_cut_character(std::string_view text) {
  std::size_t lead = text.size();
  for (int back = 0; back < 4 && lead > 0; ++back) {
    const auto byte = static_cast<unsigned char>(text[--lead]);
    if ((byte & 0xc0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t needed = byte < 0x80 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return lead + needed > text.size() ? lead : text.size();
  }
  return text.size();
}

std::uint64_t count_lf(const char* data, std::size_t size) {
  return static_cast<std::uint64_t>(std::count(data, data + size, '\n'));
}

}  // namespace

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

  const std::string& open_line() const { return converter.open_line(); }
  std::uint64_t text_size() const { return store.size() + open_line().size(); }
  std::uint64_t line_count() const {
    return completed_lines + (text_size() > last_line_begin ? 1 : 0);
  }

  void reset(std::uint64_t from_seq) {
    store.clear();
    converter = TextConverter();
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

  void sync() {
    if (!store.resume()) reset(log.first_retained_seq());
    if (log.first_retained_seq() > start_seq) reset(log.first_retained_seq());
    if (seeking_line) seek_first_line();
    while (converted_seq < log.latest_seq()) {
      const std::uint64_t to =
          std::min<std::uint64_t>(log.latest_seq(), converted_seq + kConvertBlock);
      log.copy_range(converted_seq, to, raw_buffer);
      text_buffer.clear();
      converter.feed(raw_buffer, text_buffer);
      if (converter.open_line().size() > kMaxOpenLineBytes) converter.take_open_line(text_buffer);
      take(text_buffer);
      converted_seq = to;
    }
    if (log.complete() && !finished) {
      text_buffer.clear();
      converter.finish(text_buffer);
      take(text_buffer);
      finished = true;
      converter = TextConverter();  // its open line's capacity: up to the longest line
    }
    // Kept only within one call: an explored execution otherwise held ~8 MiB
    // (a block each) for as long as its record, 200 of them at most.
    std::string().swap(raw_buffer);
    std::string().swap(text_buffer);
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
        if (length > text.size()) text.resize(without_cut_character(text));
        return length;
      }
    }
    offset += length;
    if (length > text.size()) text.resize(without_cut_character(text));
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

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR message[256];
  pcre2_get_error_message(code, message, sizeof message);
  return reinterpret_cast<const char*>(message);
}

Expected<std::unique_ptr<pcre2_code, CodeDeleter>> compile(const GrepOptions& options) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  const std::uint32_t flags =
      PCRE2_UTF | PCRE2_MULTILINE | (options.ignore_case ? PCRE2_CASELESS : 0u);
  std::unique_ptr<pcre2_code, CodeDeleter> code(
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(options.pattern.data()), options.pattern.size(),
                    flags, &error_code, &error_offset, nullptr));
  if (!code) {
    return make_error("pattern: " + pcre2_message(error_code) + " at offset " +
                      std::to_string(error_offset) +
                      "; fix the regular expression (PCRE2 syntax) or escape it");
  }
  pcre2_jit_compile(code.get(),
                    PCRE2_JIT_COMPLETE);  // without JIT PCRE2 interprets: slower, same answers
  return code;
}

std::size_t text_bytes(const GrepMatch& match) {
  std::size_t bytes = match.line.text.size();
  for (const auto& line : match.before) bytes += line.text.size();
  for (const auto& line : match.after) bytes += line.text.size();
  return bytes;
}

}  // namespace

Expected<GrepResult> Explorer::Impl::grep(const GrepOptions& options) {
  auto code = compile(options);
  if (!code) return make_error(code.error());
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match_data(
      pcre2_match_data_create_from_pattern(code->get(), nullptr));
  GrepResult result;
  const std::uint64_t first_line = options.start_line > 0 ? options.start_line - 1 : 0;
  const TextStore::View view(store, open_line());
  const std::string_view stored = view.text();  // the whole text, the open line included
  std::size_t used = 0;
  // Searches subject[from..] (whose byte 0 is text offset `base`) in one
  // PCRE2 call per match; false when a cap stopped the grep.
  auto search = [&](std::string_view subject, std::size_t from,
                    std::uint64_t base) -> Expected<bool> {
    std::size_t pos = from;
    while (pos < subject.size()) {
      const int rc =
          pcre2_match(code->get(), reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(),
                      pos, PCRE2_NO_UTF_CHECK, match_data.get(), nullptr);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0)
        return make_error("pattern: matching failed: " + pcre2_message(rc) +
                          "; simplify the regular expression");
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_data.get());
      const std::size_t start = ovector[0], end = ovector[1];
      const void* lf_before =
          start > pos ? ::memrchr(subject.data() + pos, '\n', start - pos) : nullptr;
      const std::size_t line_begin =
          lf_before
              ? static_cast<std::size_t>(static_cast<const char*>(lf_before) - subject.data()) + 1
              : pos;
      const void* lf_after = std::memchr(subject.data() + start, '\n', subject.size() - start);
      const std::size_t line_end =
          lf_after ? static_cast<std::size_t>(static_cast<const char*>(lf_after) - subject.data())
                   : subject.size();
      pos = line_end + 1;
      // A match running past its line is confirmed on that line alone.
      if (end > line_end &&
          pcre2_match(code->get(), reinterpret_cast<PCRE2_SPTR>(subject.data() + line_begin),
                      line_end - line_begin, 0, PCRE2_NO_UTF_CHECK, match_data.get(),
                      nullptr) < 0) {
        continue;
      }
      const std::uint64_t line =
          base + line_begin < stored.size() ? line_of(base + line_begin, stored) : completed_lines;
      GrepMatch match;
      if (result.matches.size() < options.limit)
        match = build_match(base + line_begin, line, options);
      if (result.matches.size() >= options.limit ||
          (!result.matches.empty() && used + text_bytes(match) > options.max_bytes)) {
        result.capped = true;
        result.next_start_line = line + 1;
        result.lines_searched = line - first_line;
        return false;
      }
      used += text_bytes(match);
      result.matches.push_back(std::move(match));
    }
    return true;
  };
  const std::uint64_t offset = line_start(first_line);
  if (offset < stored.size()) {
    auto more = search(stored, static_cast<std::size_t>(offset), 0);
    if (!more) return make_error(more.error());
    if (!*more) return result;
  }
  result.lines_searched = line_count() > first_line ? line_count() - first_line : 0;
  return result;
}

GrepMatch Explorer::Impl::build_match(std::uint64_t line_offset, std::uint64_t line,
                                      const GrepOptions& options) const {
  GrepMatch match;
  const std::size_t cap = options.max_line_bytes;
  std::uint64_t offset = line_offset;
  match.line = line_at(offset, line + 1, cap);
  for (std::size_t i = 0; i < options.after && offset < text_size(); ++i) {
    match.after.push_back(line_at(offset, line + 2 + i, cap));
  }
  const std::size_t before =
      static_cast<std::size_t>(std::min<std::uint64_t>(options.before, line));
  offset = back_lines(line_offset, before);
  for (std::size_t i = 0; i < before; ++i) {
    match.before.push_back(line_at(offset, line - before + 1 + i, cap));
  }
  return match;
}

ExploreReadResult Explorer::Impl::read(const ExploreReadOptions& options) {
  ExploreReadResult result;
  const std::uint64_t total = line_count();
  std::uint64_t line = 0;
  if (options.line_offset >= 0) {
    line = static_cast<std::uint64_t>(options.line_offset);
  } else {
    const std::uint64_t back = static_cast<std::uint64_t>(-(options.line_offset + 1)) + 1;
    line = back >= total ? 0 : total - back;
  }
  result.next_line_offset = static_cast<std::int64_t>(line);
  if (line >= total) {
    result.at_end = true;
    return result;
  }
  std::uint64_t offset = line_start(line);
  std::uint64_t byte_offset = 0;
  if (options.byte_offset > 0) {
    std::uint64_t probe = offset;
    std::string ignored;
    byte_offset = std::min(options.byte_offset, next_line(probe, 0, ignored));
    std::string head;
    read_text(offset + byte_offset, 4, head);
    for (std::size_t i = 0; i < head.size() && (static_cast<unsigned char>(head[i]) & 0xc0) == 0x80;
         ++i) {
      ++byte_offset;  // onto a character boundary
    }
    offset += byte_offset;
  }
  std::size_t used = 0;
  while (result.lines.size() < options.limit && line < total) {
    const std::size_t budget = options.max_bytes > used ? options.max_bytes - used : 0;
    const std::uint64_t line_offset = offset;
    ExploreLine item;
    item.line_number = line + 1;
    const std::uint64_t length = next_line(offset, budget, item.text);
    if (item.text.size() < length) {  // cut: continue inside this line next time
      if (item.text.empty() && result.lines.empty()) {
        offset = line_offset;
        next_line(offset, 4, item.text);  // always progress by a character
      }
      item.truncated = true;
      result.next_line_offset = static_cast<std::int64_t>(line);
      result.next_byte_offset = byte_offset + item.text.size();
      if (!item.text.empty()) result.lines.push_back(std::move(item));
      result.capped = true;
      return result;
    }
    used += item.text.size();
    result.lines.push_back(std::move(item));
    ++line;
    byte_offset = 0;
  }
  result.next_line_offset = static_cast<std::int64_t>(line);
  result.capped = line < total;
  result.at_end = line >= total;
  return result;
}

namespace {

std::filesystem::path default_cache_path(const OutputLog& log, const ExplorerOptions& options) {
  if (!options.cache_path.empty() || log.spool_path().empty()) return options.cache_path;
  return log.spool_path().string() + ".text";
}

}  // namespace

Explorer::Explorer(const OutputLog& log, ExplorerOptions options) {
  options.cache_path = default_cache_path(log, options);
  impl_ = std::make_unique<Impl>(log, std::move(options));
}

Explorer::~Explorer() = default;

std::uint64_t Explorer::cache_bytes() const {
  return impl_->store.size();
}

namespace {

// Each call opens the cache file again and closes it when done (see suspend).
struct SuspendAfterCall {
  TextStore& store;
  ~SuspendAfterCall() { store.suspend(); }
};

}  // namespace

ExploreStat Explorer::stat() {
  const SuspendAfterCall suspend{impl_->store};
  impl_->sync();
  ExploreStat stat;
  stat.size_bytes = impl_->text_size();
  stat.line_count = impl_->line_count();
  stat.max_line_bytes =
      std::max<std::uint64_t>(impl_->max_line, impl_->text_size() - impl_->last_line_begin);
  stat.first_retained_seq = impl_->log.first_retained_seq();
  stat.text_seq = impl_->text_seq;
  stat.first_line_cut = impl_->first_line_cut;
  stat.raw_bytes = impl_->log.latest_seq() - stat.first_retained_seq;
  stat.evicted = stat.first_retained_seq > 1;
  return stat;
}

Expected<GrepResult> Explorer::grep(const GrepOptions& options) {
  const SuspendAfterCall suspend{impl_->store};
  impl_->sync();
  return impl_->grep(options);
}

Expected<ExploreReadResult> Explorer::read(const ExploreReadOptions& options) {
  const SuspendAfterCall suspend{impl_->store};
  impl_->sync();
  return impl_->read(options);
}

}  // namespace agentty::session
