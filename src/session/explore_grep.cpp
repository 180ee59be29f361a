// Explorer's grep (PCRE2 over the mapped cache, a window per step) and the
// *_async calls that yield to the event loop between steps.

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

#include "base/pcre2_handles.hpp"
#include "session/explore_impl.hpp"

namespace agentty::session {
namespace {}  // namespace

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR message[256];
  pcre2_get_error_message(code, message, sizeof message);
  return reinterpret_cast<const char*>(message);
}

Expected<Pcre2Code> compile(const GrepOptions& options) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  // USE_OFFSET_LIMIT: a grep searches one window per step (GrepRun). UCP:
  // \w, \b and [[:alpha:]] know non-ASCII letters, as wait(match) does.
  const std::uint32_t flags = PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | PCRE2_USE_OFFSET_LIMIT |
                              (options.ignore_case ? PCRE2_CASELESS : 0u);
  Pcre2Code code(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(options.pattern.data()),
                               options.pattern.size(), flags, &error_code, &error_offset, nullptr));
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

// One grep, searched a window of at most kSearchBlock text bytes per step
// (ending at a line's start; PCRE2's offset limit keeps matches starting
// inside it while lookarounds still see the whole text).
struct Explorer::GrepRun {
  GrepRun(const Impl& impl_in, const GrepOptions& options_in)
      : impl(impl_in), options(options_in), view(impl.store, impl.open_line()) {}

  // Compiles the pattern and finds where the search starts.
  Expected<void> start() {
    auto compiled = compile(options);
    if (!compiled) return make_error(compiled.error());
    code = std::move(*compiled);
    match_data.reset(pcre2_match_data_create_from_pattern(code.get(), nullptr));
    match_context.reset(pcre2_match_context_create(nullptr));
    first_line = options.start_line > 0 ? options.start_line - 1 : 0;
    pos = static_cast<std::size_t>(
        std::min<std::uint64_t>(impl.line_start(first_line), text().size()));
    return {};
  }

  std::string_view text() const { return view.text(); }  // the whole text, open line included

  // Searches the next window; true when the grep is over (result final).
  Expected<bool> step() {
    const std::string_view subject = text();
    if (pos >= subject.size()) return finish();
    std::size_t window_end = std::min(subject.size(), pos + Explorer::kSearchBlock);
    if (window_end < subject.size()) {
      const void* lf = std::memchr(subject.data() + window_end, '\n', subject.size() - window_end);
      window_end = lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - subject.data()) + 1
                      : subject.size();
    }
    pcre2_set_offset_limit(match_context.get(), window_end);
    while (pos < window_end) {
      const int rc =
          pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), pos,
                      PCRE2_NO_UTF_CHECK, match_data.get(), match_context.get());
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
          pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(subject.data() + line_begin),
                      line_end - line_begin, 0, PCRE2_NO_UTF_CHECK, match_data.get(),
                      nullptr) < 0) {
        continue;
      }
      if (!take_match(line_begin)) return true;
    }
    pos = std::max(pos, window_end);
    return pos >= subject.size() ? finish() : false;
  }

  // Adds the match on the line starting at `line_begin`; false when a cap
  // stopped the grep.
  bool take_match(std::size_t line_begin) {
    const std::uint64_t line =
        line_begin < text().size() ? impl.line_of(line_begin, text()) : impl.completed_lines;
    GrepMatch match;
    if (result.matches.size() < options.limit) match = impl.build_match(line_begin, line, options);
    if (result.matches.size() >= options.limit ||
        (!result.matches.empty() && used + text_bytes(match) > options.max_bytes)) {
      result.capped = true;
      result.next_start_line = line + 1;
      result.lines_searched = line - first_line;
      return false;
    }
    used += text_bytes(match);
    result.matches.push_back(std::move(match));
    return true;
  }

  bool finish() {
    result.lines_searched = impl.line_count() > first_line ? impl.line_count() - first_line : 0;
    return true;
  }

  const Impl& impl;
  const GrepOptions& options;
  const TextStore::View view;
  Pcre2Code code;
  Pcre2MatchData match_data;
  Pcre2MatchContext match_context;
  std::uint64_t first_line = 0;
  std::size_t pos = 0;  // text offset where the search goes on; a line's start
  std::size_t used = 0;
  GrepResult result;
};

Expected<GrepResult> Explorer::Impl::grep(const GrepOptions& options) {
  GrepRun run(*this, options);
  if (auto started = run.start(); !started) return make_error(started.error());
  for (;;) {
    auto done = run.step();
    if (!done) return make_error(done.error());
    if (*done) return std::move(run.result);
  }
}

// One *_async call: waits its turn, brings the cache up to the output the
// log held when it began (a block per step), and ends the call's hold on
// the cache file and buffers when it goes.
class Explorer::AsyncCall {
 public:
  explicit AsyncCall(Explorer& explorer) : explorer_(explorer) {}
  ~AsyncCall() {
    if (!holding_) return;
    explorer_.impl_->end_sync();
    explorer_.impl_->store.suspend();
    explorer_.busy_ = false;
    explorer_.idle_.notify();
  }
  AsyncCall(const AsyncCall&) = delete;
  AsyncCall& operator=(const AsyncCall&) = delete;

  // False when the calling coroutine was cancelled (its answer is not sent).
  boost::asio::awaitable<bool> begin() {
    while (explorer_.busy_) {
      const auto far = std::chrono::steady_clock::now() + std::chrono::hours(24);
      if (co_await explorer_.idle_.wait_until(far) == ChangeSignal::Wake::cancelled)
        co_return false;
    }
    explorer_.busy_ = holding_ = true;
    auto& impl = *explorer_.impl_;
    const std::uint64_t until = impl.log.latest_seq();
    impl.begin_sync();
    while (!impl.sync_step(until)) {
      if (!co_await yield()) co_return false;
    }
    co_return true;
  }

  // Lets the loop run what is ready; false when the call was cancelled.
  // Named locals, no temporaries inside co_await expressions: GCC 12 can
  // destroy those twice.
  static boost::asio::awaitable<bool> yield() {
    const auto executor = co_await boost::asio::this_coro::executor;
    co_await boost::asio::post(executor, boost::asio::use_awaitable);
    const auto state = co_await boost::asio::this_coro::cancellation_state;
    co_return state.cancelled() == boost::asio::cancellation_type::none;
  }

 private:
  Explorer& explorer_;
  bool holding_ = false;
};

namespace {

Error cancelled_error() {
  return make_error("cancelled: the call was cancelled before it finished");
}

}  // namespace

boost::asio::awaitable<ExploreStat> Explorer::stat_async() {
  AsyncCall call(*this);
  co_await call.begin();
  co_return impl_->cached_stat();
}

boost::asio::awaitable<Expected<GrepResult>> Explorer::grep_async(GrepOptions options) {
  AsyncCall call(*this);
  if (!co_await call.begin()) co_return cancelled_error();
  if (!impl_->read_failure.empty()) co_return make_error(impl_->read_failure);
  GrepRun run(*impl_, options);
  if (auto started = run.start(); !started) co_return make_error(started.error());
  for (;;) {
    auto done = run.step();
    if (!done) co_return make_error(done.error());
    if (*done) co_return std::move(run.result);
    if (!co_await AsyncCall::yield()) co_return cancelled_error();
  }
}

boost::asio::awaitable<Expected<ExploreReadResult>> Explorer::read_async(
    ExploreReadOptions options) {
  AsyncCall call(*this);
  if (!co_await call.begin()) co_return cancelled_error();
  if (!impl_->read_failure.empty()) co_return make_error(impl_->read_failure);
  co_return impl_->read(options);
}

}  // namespace agentty::session
