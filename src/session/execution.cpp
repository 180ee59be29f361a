#include "session/execution.hpp"

#include <algorithm>
#include <csignal>
#include <utility>

#include "session/explore.hpp"
#include "session/recorder.hpp"
#include "session/redactor.hpp"
#include "session/shell_integration.hpp"

namespace agentty::session {

namespace {
using std::chrono::duration_cast;
using std::chrono::milliseconds;
}  // namespace

std::string to_string(ExecutionStatus status) {
  switch (status) {
    case ExecutionStatus::running:
      return "running";
    case ExecutionStatus::completed:
      return "completed";
    case ExecutionStatus::timed_out:
      return "timed_out";
    case ExecutionStatus::stopped:
      return "stopped";
    case ExecutionStatus::failed_to_start:
      return "failed_to_start";
    case ExecutionStatus::failed:
      return "failed";
  }
  return "unknown";
}

std::string to_string(ExecutionKind kind) {
  return kind == ExecutionKind::session ? "session" : "command";
}

bool is_terminal(ExecutionStatus status) {
  return status != ExecutionStatus::running;
}

Execution::Execution(boost::asio::io_context& io, std::string id, ExecutionSpec spec,
                     Options options, SteadyTime started)
    : io_(io),
      id_(std::move(id)),
      spec_(std::move(spec)),
      options_(std::move(options)),
      log_(options_.log),
      feeder_(spec_.size, options_.scrollback_lines),
      started_at_(std::chrono::system_clock::now() -
                  std::chrono::duration_cast<std::chrono::system_clock::duration>(
                      std::chrono::steady_clock::now() - started)),
      started_steady_(started),
      agent_size_(spec_.size),
      timeout_timer_(io),
      force_kill_timer_(io),
      hangup_again_timer_(io),
      screen_pace_timer_(io) {}

Execution::~Execution() {
  timeout_timer_.cancel();
  force_kill_timer_.cancel();
  hangup_again_timer_.cancel();
  screen_pace_timer_.cancel();
  channel_.reset();   // a live channel kills its process group
  explorer_.reset();  // it reads log_, which goes next
}

void Execution::attach(std::unique_ptr<pty::PtyChannel> channel,
                       std::unique_ptr<Redactor> redactor) {
  channel_ = std::move(channel);
  redactor_ = std::move(redactor);
  if (redactor_) input_redactor_ = std::make_unique<Redactor>(*redactor_);
  channel_->start(pty::ChannelEvents{
      [this](std::string_view bytes) { on_output(bytes); },
      [this](pty::ExitStatus status) { on_exit(status); },
  });
  channel_->on_input_state_change([this] { changed_.notify(); });  // waits for input look again
  arm_timeout();
  state_changed();
}

void Execution::fail_to_start(std::string reason) {
  failure_reason_ = std::move(reason);
  status_ = ExecutionStatus::failed_to_start;
  ended_at_ = std::chrono::system_clock::now();
  ended_steady_ = std::chrono::steady_clock::now();
  log_.mark_complete();
  state_changed();
}

std::optional<int> Execution::process_id() const {
  return channel_ ? channel_->process_id() : std::nullopt;
}

milliseconds Execution::duration() const {
  auto end = ended_steady_.value_or(std::chrono::steady_clock::now());
  return duration_cast<milliseconds>(end - started_steady_);
}

std::optional<milliseconds> Execution::idle() const {
  if (!last_output_steady_) return std::nullopt;
  return duration_cast<milliseconds>(std::chrono::steady_clock::now() - *last_output_steady_);
}

milliseconds Execution::quiet() const {
  auto now = std::chrono::steady_clock::now();
  auto latest = std::max(last_output_steady_.value_or(SteadyTime::min()),
                         last_input_steady_.value_or(SteadyTime::min()));
  if (latest == SteadyTime::min()) return duration();
  return duration_cast<milliseconds>(now - latest);
}

void Execution::advance_cursor(std::uint64_t next_seq) {
  if (next_seq > cursor_) cursor_ = next_seq;
}

std::shared_ptr<Explorer> Execution::explorer() {
  if (!explorer_) explorer_ = std::make_shared<Explorer>(log_);
  return explorer_;
}

std::uint64_t Execution::text_cache_bytes() const {
  return explorer_ ? explorer_->cache_bytes() : 0;
}

void Execution::drop_text_cache() {
  explorer_.reset();
}

std::uint64_t Execution::retained_bytes() const {
  return log_.latest_seq() - log_.first_retained_seq() + text_cache_bytes();
}

std::string Execution::redacted(std::string_view text) const {
  return text_redaction_ ? text_redaction_(text) : std::string(text);
}

int Execution::add_output_listener(OutputListener listener) {
  int token = next_listener_token_++;
  listeners_.emplace(token, std::move(listener));
  return token;
}

void Execution::remove_output_listener(int token) {
  listeners_.erase(token);
}

void Execution::on_output(std::string_view bytes) {
  if (redactor_) {
    std::string safe = redactor_->process(bytes);
    if (!safe.empty()) append_output(safe);
  } else {
    append_output(bytes);
  }
}

void Execution::append_output(std::string_view bytes) {
  follow_size_set_inside();
  refeed_screen();  // before the log holds these bytes too
  std::uint64_t start = log_.latest_seq();
  log_.append(bytes);
  feeder_.on_output(bytes);
  write_screen_replies();
  pace_screen();
  follow_screen_lag();
  if (shell_) {
    shell_->on_output(bytes, start);
    // A remote terminal's probe finds the session by its shell's pid.
    if (auto pid = shell_->session_shell_pid(); pid && channel_)
      channel_->identify_session_shell(*pid);
  }
  if (recorder_) recorder_->output(bytes);
  // A listener may remove itself while being called: iterate over a copy of the keys.
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    auto current = it++;
    current->second(bytes, start);
  }
  auto now = std::chrono::steady_clock::now();
  last_output_steady_ = now;
  last_output_at_ = std::chrono::system_clock::now();
  changed_.notify();
}

void Execution::on_exit(pty::ExitStatus status) {
  if (redactor_) {
    std::string rest = redactor_->finish();
    if (!rest.empty()) append_output(rest);
  }
  if (input_redactor_ && recorder_) {
    std::string rest = input_redactor_->finish();
    if (!rest.empty()) recorder_->input(rest, last_input_source_ == InputSource::human);
  }
  log_.mark_complete();
  log_.flush();
  release_running_state();
  exit_status_ = status;
  ended_at_ = std::chrono::system_clock::now();
  ended_steady_ = std::chrono::steady_clock::now();
  auto transport_failure = failure_source_ ? failure_source_() : std::nullopt;
  if (transport_failure) {
    status_ = ExecutionStatus::failed;
    failure_reason_ = std::move(*transport_failure);
  } else if (timed_out_) {
    status_ = ExecutionStatus::timed_out;
  } else if (stop_requested_) {
    status_ = ExecutionStatus::stopped;
  } else {
    status_ = ExecutionStatus::completed;
  }
  timeout_timer_.cancel();
  force_kill_timer_.cancel();
  hangup_again_timer_.cancel();
  held_by_.reset();
  login_hold_ = false;
  if (shell_) shell_->on_exit();
  state_changed();
}

// Ended executions are kept for later reads (up to max_retained of them),
// so what only served the running program goes: the recording's fd (a
// server at a low fd limit ran out after ~100 of them), the log's RAM copy of
// what its spool holds, and the screen feeder's copies (up to ~2 MB after a
// flood: a RAM ring of 1 MiB, a queue of up to 1 MiB or a simulator of
// scrollback rows).
void Execution::release_running_state() {
  recorder_.reset();
  spec_.startup_files.reset();
  log_.release_ram();
  screen_pace_timer_.cancel();
  screen_pace_scheduled_ = false;
  output_paused_ = false;
  if (feeder_.has_screen() && feeder_.lagging()) return settle_screen();
  screen_from_log_ = feeder_.finish();
}

// What feeder_.finish() let go of, given again from the log before a look.
void Execution::refeed_screen() {
  if (!screen_from_log_) return;
  screen_from_log_ = false;
  feeder_.on_output(log_.copy_range(log_.first_retained_seq(), log_.latest_seq()));
  feeder_.take_replies();  // the program has ended: nobody to answer
}

const Screen& Execution::screen() {
  follow_size_set_inside();
  refeed_screen();
  if (screen_settling_) {  // a caller that could not wait: the rest at once
    screen_settling_ = false;
    screen_pace_timer_.cancel();
    screen_pace_scheduled_ = false;
  }
  feeder_.catch_up();
  const Screen& screen = feeder_.screen();
  // A screen rebuilt for a look at an ended execution is kept frozen too.
  if (finished() && !screen.frozen()) feeder_.finish();
  return screen;
}

ScreenModes Execution::screen_modes() {
  return screen().modes();
}

pty::TerminalSize Execution::size() const {
  return channel_ ? channel_->size() : spec_.size;
}

// A program that sizes its own terminal (`stty cols 50`) wraps its output at
// that size: the screen model and the recording follow, before the bytes
// printed after it. Checked per output chunk (one ioctl) and on each look.
void Execution::follow_size_set_inside() {
  if (!channel_) return;
  const pty::TerminalSize before = sizes_.empty() ? spec_.size : sizes_.back().second;
  auto changed = channel_->take_size_change();
  if (!changed) return;
  record_size(before, *changed);
  refeed_screen();
  feeder_.resize(*changed);
  if (recorder_) recorder_->resize(changed->cols, changed->rows);
}

void Execution::resize(pty::TerminalSize size, InputSource source) {
  if (source == InputSource::agent) agent_size_ = size;
  if (source == InputSource::agent && held()) return;  // the holder decides the size
  refeed_screen();
  feeder_.resize(size);
  record_size(this->size(), size);
  if (channel_ && !channel_->finished()) channel_->resize(size);
  if (recorder_) recorder_->resize(size.cols, size.rows);
  changed_.notify();
}

// The bytes from the next one on are written at `after`.
void Execution::record_size(pty::TerminalSize before, pty::TerminalSize after) {
  constexpr std::size_t kMaxSizes = 64;
  if (before == after) return;
  const std::uint64_t from = log_.latest_seq() + 1;
  if (sizes_.empty()) sizes_.emplace_back(1, before);
  if (sizes_.back().first == from) sizes_.pop_back();  // changed again before any byte
  sizes_.emplace_back(from, after);
  if (sizes_.size() > kMaxSizes) sizes_.erase(sizes_.begin());
}

TerminalSizes Execution::sizes_over(std::uint64_t begin, std::uint64_t end) const {
  auto terminal = [](pty::TerminalSize size) { return TextTerminal{size.cols, size.rows}; };
  if (sizes_.empty()) return {{0, terminal(size())}};
  if (begin < sizes_.front().first) return {};  // before the changes kept
  auto at = sizes_.begin();
  while (std::next(at) != sizes_.end() && std::next(at)->first <= begin) ++at;
  TerminalSizes sizes{{0, terminal(at->second)}};
  for (++at; at != sizes_.end() && at->first < end; ++at)
    sizes.push_back({static_cast<std::size_t>(at->first - begin), terminal(at->second)});
  return sizes;
}

TextStart Execution::text_start(std::uint64_t seq) const {
  // Enough lines to fill a big terminal's rows, cheap to convert per page.
  constexpr std::uint64_t kLookback = 64 * 1024;
  if (seq <= 1) return TextStart::top_left();
  if (last_text_start_ && last_text_start_->first == seq) return last_text_start_->second;
  std::uint64_t from = std::max(seq > kLookback ? seq - kLookback : 1, log_.first_retained_seq());
  if (from >= seq) return {};
  std::string before = log_.copy_range(from, seq);
  TextStart start = TextStart::top_left();
  if (from > 1) {  // from a line start, the row not known
    const std::size_t line = before.find('\n');
    if (line == std::string::npos) return {};
    before.erase(0, line + 1);
    from += line + 1;
    start = {};
  }
  const TerminalSizes sizes = sizes_over(from, seq);
  if (sizes.empty()) return {};
  last_text_start_.emplace(seq, text_start_after(before, log_.charsets_at(from), sizes, start));
  return last_text_start_->second;
}

std::vector<std::string> Execution::left_running() const {
  if (finished() || !channel_ || kind() == ExecutionKind::session) return {};
  return channel_->left_running();
}

Expected<void> Execution::stop(int signo, milliseconds force_after, InputSource source) {
  if (source == InputSource::agent && held_by_) {
    return make_error(
        "held: a human has taken over this execution; it was not stopped. "
        "Wait with wait(until=\"released\") and try again.");
  }
  if (finished()) return {};
  stop_requested_ = true;
  channel_->send_signal(signo);
  if (signo == SIGHUP && spec_.kind == ExecutionKind::session) arm_hangup_again();
  if (signo != SIGKILL) arm_force_kill(force_after);
  return {};
}

std::optional<std::string> Execution::signal_note(int signo) const {
  return channel_ ? channel_->signal_note(signo) : std::nullopt;
}

void Execution::kill_now() {
  if (finished() || !channel_) return;
  stop_requested_ = true;
  channel_->send_signal(SIGKILL);
}

void Execution::set_failure_source(std::function<std::optional<std::string>()> source) {
  failure_source_ = std::move(source);
}

void Execution::set_state_observer(std::function<void(Execution&)> observer) {
  state_observer_ = std::move(observer);
}

void Execution::set_shell_integration(std::unique_ptr<ShellIntegration> shell) {
  shell_ = std::move(shell);
  // The channel may have delivered output already (start() reads what is
  // there): let the integration see the log from its first byte.
  if (shell_ && log_.latest_seq() > 1) shell_->on_output(log_.copy_range(1, log_.latest_seq()), 1);
}

void Execution::set_recorder(std::unique_ptr<Recorder> recorder) {
  recorder_ = std::move(recorder);
}

void Execution::arm_timeout() {
  if (spec_.timeout.count() > 0) arm_timeout(spec_.timeout);
}

void Execution::arm_timeout(std::chrono::steady_clock::duration after) {
  timeout_timer_.expires_after(after);
  timeout_timer_.async_wait([this, self = weak_from_this()](boost::system::error_code ec) {
    // Held: due at the takeover itself, it runs at the release (timeout_left_).
    if (ec || self.expired() || finished() || held_by_) return;
    timed_out_ = true;
    channel_->send_signal(SIGTERM);
    arm_force_kill(options_.kill_grace);
  });
}

// bash misses a hang-up that comes while readline draws its prompt (it
// handles it, then waits for input again, until the grace's SIGKILL); a
// second one ends it at once.
void Execution::arm_hangup_again() {
  hangup_again_timer_.expires_after(milliseconds(300));
  hangup_again_timer_.async_wait([this, self = weak_from_this()](boost::system::error_code ec) {
    if (ec || self.expired() || finished()) return;
    channel_->send_signal(SIGHUP);
  });
}

void Execution::arm_force_kill(milliseconds after) {
  force_kill_timer_.expires_after(after);
  force_kill_timer_.async_wait([this, self = weak_from_this()](boost::system::error_code ec) {
    if (ec || self.expired() || finished()) return;
    force_killed_ = true;
    channel_->send_signal(SIGKILL);
  });
}

void Execution::state_changed() {
  changed_.notify();
  if (state_observer_) state_observer_(*this);
}

}  // namespace agentty::session
