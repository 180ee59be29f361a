#include "pty/pty_process.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <vector>

#include "base/errno_message.hpp"
#include "base/log.hpp"
#include "pty/input_probe.hpp"
#include "pty/pty_spawn.hpp"
#include "pty/supervisor_protocol.hpp"
#include "pty/terminal_session.hpp"

namespace agentty::pty {

namespace {
// Most read per turn of the loop. Each read is handed out as it comes, in
// calls of at most the consumer's output slice (set_output_slice): one near
// its pause (the screen model's pace) stops the reads within a small slice,
// where a whole chunk overshot its limit by up to 64 KiB (0.5 s of libvterm
// work for some floods).
constexpr std::size_t kReadChunk = PtyChannel::kMaxOutputSlice;
// After the supervisor is reaped, end of output (EIO) follows at once unless
// a process outside the program's group (`setsid cmd &`, `ssh -f`, a daemon
// that kept its fds) holds the slave open; its later output is not ours to
// wait for. So the channel ends once output has been quiet for kDrainQuiet
// after the reap (what the program printed last is read by then), and after
// kDrainGrace at most (such a process that keeps printing).
constexpr auto kDrainQuiet = std::chrono::milliseconds(200);
constexpr auto kDrainGrace = std::chrono::seconds(2);
// How long the destructor lets the supervisor reap the killed group before it
// kills the supervisor as well.
constexpr int kReapGraceMs = 2000;

bool is_aborted(const boost::system::error_code& ec) {
  return ec == boost::asio::error::operation_aborted;
}
}  // namespace

struct PtyProcess::Impl : std::enable_shared_from_this<Impl> {
  Impl(boost::asio::io_context& io, SpawnedPty spawned, UniqueFd pidfd, TerminalSize size)
      : master_(io, spawned.master.release()),
        pidfd_(io, pidfd.release()),
        drain_timer_(io),
        supervisor_(spawned.supervisor),
        program_(spawned.program),
        slave_device_(spawned.slave_device),
        size_(size),
        read_buffer_(std::make_unique_for_overwrite<char[]>(kReadChunk)) {}

  boost::asio::posix::stream_descriptor master_;
  boost::asio::posix::stream_descriptor pidfd_;
  boost::asio::steady_timer drain_timer_;
  pid_t supervisor_;
  pid_t program_;
  dev_t slave_device_;
  TerminalSize size_;
  ChannelEvents events_;
  // Not zeroed: reads overwrite it (a zeroed 64 KiB per execution was a
  // visible share of a short execute's CPU).
  std::unique_ptr<char[]> read_buffer_;
  std::string input_queue_;
  std::size_t input_offset_ = 0;
  bool write_waiting_ = false;
  bool output_ended_ = false;
  bool reaped_ = false;
  bool finished_ = false;
  bool destroyed_ = false;
  // True while on_output runs: a callback that destroys its PtyProcess must
  // not have its own std::function destroyed under it.
  bool in_output_callback_ = false;
  // pause_output(true): on_readable reads nothing until resumed, and notes
  // that the terminal was readable meanwhile.
  bool output_paused_ = false;
  std::size_t output_slice_ = kReadChunk;  // set_output_slice
  bool readable_while_paused_ = false;
  ExitStatus status_;
  std::chrono::steady_clock::time_point last_output_at_{};
  std::chrono::steady_clock::time_point reaped_at_{};

  void start(ChannelEvents events) {
    // The first read may hand output to a callback that destroys the owning
    // PtyProcess; `self` keeps this Impl alive until start() returns.
    auto self = shared_from_this();
    events_ = std::move(events);
    on_readable();
    if (!destroyed_ && !finished_) watch_supervisor();
  }

  // ---- output ----
  // The PTY hands out at most ~4 KiB per read(): the line discipline's
  // buffer. Its kernel worker refills that buffer only after a read empties
  // it, so each read is handed out at once: the consumers (log, screen,
  // recording) then work while the worker refills, where gathering 64 KiB
  // before handing it out left the worker idle through all of their work
  // (`cat` of a big file through execute: ~0.73x a raw read's rate gathered,
  // ~0.87x handed out per read, bench/pty_throughput_bench).
  // buffer_full: kReadChunk read, or the consumer paused (drain_now reads on).
  enum class ReadOutcome { would_block, buffer_full, ended };

  ReadOutcome read_available() {
    std::size_t total = 0;
    while (total < kReadChunk) {
      // The consumer may change the slice in a callback.
      ssize_t n = ::read(master_.native_handle(), read_buffer_.get(), output_slice_);
      if (n > 0) {
        total += static_cast<std::size_t>(n);
        hand_out(static_cast<std::size_t>(n));
        if (output_paused_ || destroyed_ || finished_) break;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadOutcome::would_block;
      // EIO: every slave fd is closed and the kernel has handed over all data.
      if (n < 0 && errno != EIO) spdlog::warn("pty {}: {}", program_, errno_message("read"));
      return ReadOutcome::ended;
    }
    return ReadOutcome::buffer_full;
  }

  // The `size` bytes just read into read_buffer_ (never 0).
  void hand_out(std::size_t size) {
    last_output_at_ = std::chrono::steady_clock::now();
    if (!events_.on_output || destroyed_) return;
    in_output_callback_ = true;
    events_.on_output(std::string_view(read_buffer_.get(), size));
    in_output_callback_ = false;
  }

  void on_readable() {
    if (destroyed_ || finished_) return;
    if (output_paused_) {
      readable_while_paused_ = true;
      return;
    }
    ReadOutcome outcome = read_available();
    if (destroyed_ || finished_) return;
    switch (outcome) {
      case ReadOutcome::would_block:
        // Drained to EAGAIN on this thread, so the next edge cannot be missed.
        return wait_readable();
      case ReadOutcome::buffer_full:
        // Let other handlers run before reading on.
        return boost::asio::post(master_.get_executor(),
                                 [self = shared_from_this()] { self->on_readable(); });
      case ReadOutcome::ended:
        output_ended_ = true;
        return maybe_finish();
    }
  }

  void wait_readable() {
    master_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                       [self = shared_from_this()](const boost::system::error_code& ec) {
                         if (!is_aborted(ec)) self->on_readable();
                       });
  }

  void pause_output(bool paused) {
    output_paused_ = paused;
    if (paused || !readable_while_paused_ || destroyed_ || finished_) return;
    readable_while_paused_ = false;
    boost::asio::post(master_.get_executor(), [self = shared_from_this()] { self->on_readable(); });
  }

  // Reads whatever is buffered right now without waiting (for the drain grace).
  void drain_now() {
    while (read_available() == ReadOutcome::buffer_full && !destroyed_ && !finished_) {
    }
  }

  // ---- exit ----
  void watch_supervisor() {
    pidfd_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                      [self = shared_from_this()](const boost::system::error_code& ec) {
                        if (!is_aborted(ec) && !self->destroyed_) self->on_supervisor_exit();
                      });
  }

  void on_supervisor_exit() {
    int wait_status = 0;
    pid_t pid;
    while ((pid = ::waitpid(supervisor_, &wait_status, WNOHANG)) < 0 && errno == EINTR) {
    }
    if (pid == 0) return watch_supervisor();  // spurious wake
    if (pid < 0) {
      spdlog::warn("pty {}: {}", program_, errno_message("waitpid"));
      wait_status = 0;
    }
    reaped_ = true;
    status_ = ExitStatus::from_wait_status(wait_status);
    if (output_ended_) return maybe_finish();
    reaped_at_ = std::chrono::steady_clock::now();
    wait_for_quiet_output();
  }

  // Until output has been quiet for kDrainQuiet (or kDrainGrace has passed
  // since the reap), then the output counts as ended.
  void wait_for_quiet_output() {
    auto give_up_at = reaped_at_ + kDrainGrace;
    drain_timer_.expires_at(
        std::min(std::max(last_output_at_, reaped_at_) + kDrainQuiet, give_up_at));
    drain_timer_.async_wait(
        [self = shared_from_this(), give_up_at](const boost::system::error_code& ec) {
          if (is_aborted(ec) || self->destroyed_ || self->finished_) return;
          self->drain_now();
          if (self->destroyed_ || self->finished_) return;
          auto now = std::chrono::steady_clock::now();
          if (now < give_up_at && now - self->last_output_at_ < kDrainQuiet)
            return self->wait_for_quiet_output();
          spdlog::info("pty {}: a process outside the program's group still holds the terminal",
                       self->program_);
          self->output_ended_ = true;
          self->maybe_finish();
        });
  }

  void maybe_finish() {
    if (!output_ended_ || !reaped_ || finished_) return;
    finished_ = true;
    drain_timer_.cancel();
    boost::system::error_code ignored;
    pidfd_.close(ignored);
    // Closing the master hangs up any straggler still holding the slave.
    master_.close(ignored);
    // An ended execution's record stays for reads (up to 200 of them), and
    // nothing reads or writes this terminal again: 64 KiB each otherwise.
    if (!in_output_callback_) read_buffer_.reset();
    std::string().swap(input_queue_);
    input_offset_ = 0;
    auto on_exit = std::move(events_.on_exit);
    events_ = {};
    if (on_exit) on_exit(status_);
  }

  // ---- input ----
  void write(std::string_view bytes) {
    if (finished_ || output_ended_) return;
    if (input_queue_.size() - input_offset_ + bytes.size() > PtyChannel::kMaxQueuedInput) {
      spdlog::warn("pty {}: input queue full ({} bytes); dropping {} bytes", program_,
                   PtyChannel::kMaxQueuedInput, bytes.size());
      return;
    }
    input_queue_.append(bytes);
    if (!write_waiting_) flush_input();
  }

  void flush_input() {
    while (input_offset_ < input_queue_.size()) {
      ssize_t n = ::write(master_.native_handle(), input_queue_.data() + input_offset_,
                          input_queue_.size() - input_offset_);
      if (n > 0) {
        input_offset_ += static_cast<std::size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return wait_writable();
      } else {
        spdlog::debug("pty {}: input dropped: {}", program_, errno_message("write"));
        break;
      }
    }
    input_queue_.clear();
    input_offset_ = 0;
  }

  void wait_writable() {
    write_waiting_ = true;
    master_.async_wait(boost::asio::posix::stream_descriptor::wait_write,
                       [self = shared_from_this()](const boost::system::error_code& ec) {
                         self->write_waiting_ = false;
                         if (ec || self->destroyed_ || self->finished_) return;
                         self->flush_input();
                       });
  }

  // ---- teardown ----
  // Kills the group, lets the supervisor reap it (so nothing is reparented
  // to init as a zombie), then makes sure the supervisor itself is gone.
  void kill_and_reap() {
    ::kill(-program_, SIGKILL);
    signal_session_members(supervisor_, SIGKILL);
    struct pollfd watch {
      pidfd_.native_handle(), POLLIN, 0
    };
    int ready;
    while ((ready = ::poll(&watch, 1, kReapGraceMs)) < 0 && errno == EINTR) {
    }
    if (ready <= 0) ::kill(supervisor_, SIGKILL);
    int wait_status = 0;
    while (::waitpid(supervisor_, &wait_status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }

  void shutdown() {
    destroyed_ = true;
    // Never called again; released with the Impl when its last handler ends.
    if (!in_output_callback_) events_ = {};
    if (!reaped_) kill_and_reap();
    boost::system::error_code ignored;
    drain_timer_.cancel();
    pidfd_.close(ignored);
    master_.close(ignored);
  }
};

Expected<std::unique_ptr<PtyProcess>> adopt_spawned(boost::asio::io_context& io, SpawnedPty spawned,
                                                    TerminalSize size) {
  // glibc 2.36's <sys/pidfd.h> lacks extern "C"; the raw syscall avoids it.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, spawned.supervisor, 0)));
  if (!pidfd) {
    std::string message = errno_message("pidfd_open");
    ::kill(-spawned.program, SIGKILL);
    ::kill(spawned.supervisor, SIGKILL);
    int wait_status = 0;
    while (::waitpid(spawned.supervisor, &wait_status, 0) < 0 && errno == EINTR) {
    }
    return make_error(message);
  }
  auto impl = std::make_unique<PtyProcess::Impl>(io, std::move(spawned), std::move(pidfd), size);
  return std::make_unique<PtyProcess>(std::move(impl));
}

Expected<std::unique_ptr<PtyProcess>> spawn_pty_process(boost::asio::io_context& io,
                                                        const SpawnOptions& options) {
  auto spawned = spawn_supervised(options);
  if (!spawned) return make_error(spawned.error());
  return adopt_spawned(io, std::move(spawned.value()), options.size);
}

PtyProcess::PtyProcess(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PtyProcess::~PtyProcess() {
  impl_->shutdown();
}

void PtyProcess::start(ChannelEvents events) {
  impl_->start(std::move(events));
}

void PtyProcess::write(std::string_view bytes) {
  impl_->write(bytes);
}

std::size_t PtyProcess::queued_input_bytes() const {
  return impl_->input_queue_.size() - impl_->input_offset_;
}

void PtyProcess::resize(TerminalSize size) {
  impl_->size_ = size;
  if (impl_->finished_) return;
  struct winsize window {};
  window.ws_col = size.cols;
  window.ws_row = size.rows;
  if (::ioctl(impl_->master_.native_handle(), TIOCSWINSZ, &window) != 0)
    spdlog::debug("pty {}: {}", impl_->program_, errno_message("ioctl(TIOCSWINSZ)"));
}

void PtyProcess::send_signal(int signo) {
  // Once the supervisor is reaped the group is empty and its id may be reused.
  if (impl_->reaped_) return;
  ::kill(-impl_->program_, signo);
  // What ends the execution ends what job control moved out of the group,
  // too (`set -m` jobs, GNU timeout's own group): the supervisor waits for
  // them (a hang-up is what a shell sends its jobs itself).
  const bool ends = signo == SIGTERM || signo == SIGHUP || signo == SIGKILL;
  if (ends) signal_session_members(impl_->supervisor_, signo, impl_->program_);
  // The program may have stopped its supervisor (`kill -STOP $PPID`), which
  // then never reaps what ends: the execution stayed running, and stop said
  // "not ended yet" for ever. Our unreaped child: its pid is still its own.
  if (ends) ::kill(impl_->supervisor_, SIGCONT);
  // A process stopped by ctrl-z takes the signal only once it runs again:
  // continue what was signalled, as `kill %job` in bash and systemd do.
  // Every signal stop sends is meant to end the program (a ctrl-z'd one
  // given SIGUSR1 waited out the grace and was said to ignore it); SIGKILL
  // ends a stopped process as it is.
  if (signo == SIGTERM || signo == SIGHUP)
    continue_stopped_members(impl_->supervisor_);
  else if (signo != SIGKILL)
    continue_stopped_members(impl_->supervisor_, impl_->program_);
}

std::optional<int> PtyProcess::process_id() const {
  return impl_->program_;
}

InputState PtyProcess::input_state() const {
  if (impl_->finished_) return InputState::busy;
  const auto state =
      probe_input_state({impl_->master_.native_handle(), impl_->slave_device_, impl_->supervisor_});
  // Output we have not read yet was written just now: the program may be
  // back at its prompt, but a caller that decides on quiet output (a wait's
  // timer running before the read handler) must not answer without it.
  // Looked at after the probe: a program that printed and then blocked
  // reading between a look before it and the probe ("awake", then the
  // prompt) was reported waiting with that output still unread.
  int unread = 0;
  if (::ioctl(impl_->master_.native_handle(), FIONREAD, &unread) == 0 && unread > 0)
    return InputState::busy;
  return state;
}

bool PtyProcess::resume_foreground() {
  if (impl_->finished_) return false;
  auto group = probe_foreground_group(impl_->master_.native_handle());
  return group && continue_stopped_members(impl_->supervisor_, *group) > 0;
}

std::optional<LineModes> PtyProcess::line_modes() const {
  if (impl_->finished_) return std::nullopt;
  return probe_line_modes(impl_->master_.native_handle());
}

std::optional<bool> PtyProcess::echo_enabled() const {
  auto modes = line_modes();
  return modes ? std::optional<bool>(modes->echo) : std::nullopt;
}

std::vector<std::string> PtyProcess::left_running() const {
  if (impl_->finished_) return {};
  return left_running_after(impl_->supervisor_, impl_->program_, 4);
}

TerminalSize PtyProcess::size() const {
  return impl_->size_;
}

bool PtyProcess::pause_output(bool paused) {
  impl_->pause_output(paused);
  return true;
}

void PtyProcess::set_output_slice(std::size_t max_bytes) {
  impl_->output_slice_ = clamp_output_slice(max_bytes);
}

std::optional<TerminalSize> PtyProcess::take_size_change() {
  if (impl_->finished_) return std::nullopt;
  struct winsize window {};
  if (::ioctl(impl_->master_.native_handle(), TIOCGWINSZ, &window) != 0) return std::nullopt;
  TerminalSize now{window.ws_col, window.ws_row};
  if (now == impl_->size_ || now.cols == 0 || now.rows == 0) return std::nullopt;
  impl_->size_ = now;
  return now;
}

bool PtyProcess::finished() const {
  return impl_->finished_;
}

void PtyProcess::end_with_program() {
  // The supervisor reaps the program, so it hangs up what is left (see
  // supervisor_protocol.hpp). Through the pidfd: the supervisor is our
  // child and not yet reaped, so the signal cannot reach another process.
  if (impl_->finished_ || impl_->reaped_) return;
  if (::syscall(SYS_pidfd_send_signal, impl_->pidfd_.native_handle(),
                supervisor::kEndWithProgramSignal, nullptr, 0) != 0)
    spdlog::warn("pty {}: {}", impl_->program_, errno_message("pidfd_send_signal"));
}

int PtyProcess::process_group() const {
  return impl_->program_;
}

std::optional<int> PtyProcess::foreground_process_group() const {
  if (impl_->finished_) return std::nullopt;
  return probe_foreground_group(impl_->master_.native_handle());
}

std::optional<std::string> PtyProcess::foreground_program() const {
  if (impl_->finished_) return std::nullopt;
  return probe_foreground_program(impl_->master_.native_handle());
}

std::optional<std::string> PtyProcess::reading_program() const {
  if (impl_->finished_) return std::nullopt;
  return probe_reading_program(
      {impl_->master_.native_handle(), impl_->slave_device_, impl_->supervisor_});
}

std::optional<bool> PtyProcess::program_in_foreground() const {
  const auto foreground = foreground_process_group();
  if (!foreground || impl_->finished_) return std::nullopt;
  return *foreground == process_group();
}

}  // namespace agentty::pty
