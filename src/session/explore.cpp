#include "session/explore.hpp"

#include "base/utf8.hpp"
#include "session/explore_impl.hpp"

namespace agentty::session {

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
    byte_offset += utf8_next_char_start(head, 0);  // onto a character boundary
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
  return impl_->cached_stat();
}

ExploreStat Explorer::cached_stat() const {
  return impl_->cached_stat();
}

Expected<GrepResult> Explorer::grep(const GrepOptions& options) {
  const SuspendAfterCall suspend{impl_->store};
  impl_->sync();
  if (!impl_->read_failure.empty()) return make_error(impl_->read_failure);
  return impl_->grep(options);
}

Expected<ExploreReadResult> Explorer::read(const ExploreReadOptions& options) {
  const SuspendAfterCall suspend{impl_->store};
  impl_->sync();
  if (!impl_->read_failure.empty()) return make_error(impl_->read_failure);
  return impl_->read(options);
}

}  // namespace agentty::session
