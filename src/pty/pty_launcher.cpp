#include "pty/pty_launcher.hpp"

#include <fcntl.h>
#include <poll.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <string>

#include "base/log.hpp"

namespace agentty::pty {

PtyLauncher::PtyLauncher(boost::asio::io_context& io, bool keep_spare)
    : io_(io), keep_spare_(keep_spare), self_(std::make_shared<PtyLauncher*>(this)) {}

PtyLauncher::~PtyLauncher() {
  *self_ = nullptr;
}

namespace {

constexpr const char* kShuttingDown = "agentty is shutting down; nothing was started";

// Until `fd` is readable (or in error: the read that follows says which).
// A descriptor of its own (a dup) is registered, so closing it leaves `fd`.
boost::asio::awaitable<void> readable(int fd) {
  auto executor = co_await boost::asio::this_coro::executor;
  int watched = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (watched < 0) {
    struct pollfd wait {  // out of fds: block rather than fail the start
      fd, POLLIN, 0
    };
    ::poll(&wait, 1, -1);
    co_return;
  }
  boost::asio::posix::stream_descriptor descriptor(executor, watched);
  boost::system::error_code ignored;
  co_await descriptor.async_wait(boost::asio::posix::descriptor_base::wait_read,
                                 boost::asio::redirect_error(boost::asio::use_awaitable, ignored));
}

}  // namespace

// Counts a launch in progress; the last one to finish makes a deferred refill.
class PtyLauncher::Launching {
 public:
  explicit Launching(PtyLauncher& launcher) : alive_(launcher.self_) { ++launcher.launching_; }
  ~Launching() {
    PtyLauncher* launcher = *alive_;
    if (!launcher || --launcher->launching_ > 0 || !launcher->refill_deferred_) return;
    launcher->refill_deferred_ = false;
    launcher->prepare_spare();
  }
  Launching(const Launching&) = delete;
  Launching& operator=(const Launching&) = delete;

 private:
  std::shared_ptr<PtyLauncher*> alive_;
};

boost::asio::awaitable<Expected<std::unique_ptr<PtyProcess>>> PtyLauncher::launch(
    SpawnOptions options) {
  auto alive = self_;  // this launcher, while it exists
  const Launching launching(*this);
  if (auto spare = std::exchange(spare_, std::nullopt)) {
    if (auto ran = co_await run_in(std::move(*spare), options)) co_return std::move(*ran);
    if (!*alive) co_return make_error(kShuttingDown);
    spdlog::info("the spare PTY supervisor had ended; starting one for this program");
  }
  // Forked and used at once: cheaper than exec'ing a supervisor.
  if (auto forked = fork_spare()) {
    if (auto ran = co_await run_in(std::move(*forked), options)) co_return std::move(*ran);
    if (!*alive) co_return make_error(kShuttingDown);
  }
  auto starting = start_supervised(options);
  if (!starting) co_return make_error(starting.error());
  auto ran = co_await finish(std::move(starting.value()), options.size);
  if (!ran) co_return make_error(kSupervisorEndedEarly);
  co_return std::move(*ran);
}

boost::asio::awaitable<std::optional<Expected<std::unique_ptr<PtyProcess>>>> PtyLauncher::run_in(
    SpareSupervisor spare, const SpawnOptions& options) {
  // A spare the maker has just been asked for says its pid once forked.
  if (!spare.announced()) co_await readable(spare.control_fd());
  auto starting = std::move(spare).start_program(options);
  if (!starting) co_return std::nullopt;
  if (!*starting) co_return make_error(starting->error());
  co_return co_await finish(std::move(starting->value()), options.size);
}

boost::asio::awaitable<std::optional<Expected<std::unique_ptr<PtyProcess>>>> PtyLauncher::finish(
    StartingProgram starting, TerminalSize size) {
  auto& io = io_;  // the loop outlives the launcher
  auto alive = self_;
  while (!starting.read_available()) co_await readable(starting.status_fd());
  // Destroyed meanwhile: `starting` ends the program on its way out.
  if (!*alive) co_return make_error(kShuttingDown);
  auto spawned = std::move(starting).finish();
  if (!spawned) co_return std::nullopt;
  if (!*spawned) co_return make_error(spawned->error());
  co_return adopt_spawned(io, std::move(spawned->value()), size);
}

std::optional<SpareSupervisor> PtyLauncher::fork_spare() {
  if (!maker_) return std::nullopt;
  auto forked = SpareSupervisor::start(&*maker_);
  if (!forked) {
    // Out of fds for the spare's PTY is no fault of the maker's: dropping
    // it made every later start exec a supervisor, for the server's life.
    if (maker_->ended()) drop_maker(forked.error());
    return std::nullopt;
  }
  return std::move(forked.value());
}

void PtyLauncher::drop_maker(const std::string& why) {
  spdlog::warn("the PTY spare maker failed ({}); supervisors are exec'd from now on", why);
  maker_.reset();
  maker_failed_ = true;
}

std::optional<pid_t> PtyLauncher::spare_pid() {
  if (!spare_) return std::nullopt;
  return spare_->pid();
}

std::optional<pid_t> PtyLauncher::maker_pid() const {
  if (!maker_) return std::nullopt;
  return maker_->pid();
}

void PtyLauncher::prepare_spare() {
  if (!keep_spare_ || spare_ || refill_scheduled_) return;
  refill_scheduled_ = true;
  // Posted twice: behind whatever the ending program queued (the waiting
  // call's resumption, which sends its response).
  boost::asio::post(io_, [self = self_] {
    if (!*self) return;
    boost::asio::post((*self)->io_, [self] {
      if (*self) (*self)->refill();
    });
  });
}

void PtyLauncher::refill() {
  refill_scheduled_ = false;
  if (spare_) return;
  if (launching_ > 0) {
    refill_deferred_ = true;
    return;
  }
  if (!maker_ && !maker_failed_) {
    if (auto made = SpareMaker::start()) {
      maker_.emplace(std::move(made.value()));
    } else {
      drop_maker(made.error());
    }
  }
  if (auto forked = fork_spare()) {
    spare_.emplace(std::move(*forked));
    return;
  }
  auto started = SpareSupervisor::start();
  if (!started) {
    // Launches still work without a spare; say why they are slower.
    spdlog::warn("cannot start a spare PTY supervisor: {}", started.error());
    return;
  }
  spare_.emplace(std::move(started.value()));
}

}  // namespace agentty::pty
