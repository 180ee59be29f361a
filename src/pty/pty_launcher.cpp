#include "pty/pty_launcher.hpp"

#include <boost/asio/post.hpp>

#include <string>

#include "base/log.hpp"

namespace agentty::pty {

PtyLauncher::PtyLauncher(boost::asio::io_context& io, bool keep_spare)
    : io_(io), keep_spare_(keep_spare), self_(std::make_shared<PtyLauncher*>(this)) {}

PtyLauncher::~PtyLauncher() {
  *self_ = nullptr;
}

Expected<std::unique_ptr<PtyProcess>> PtyLauncher::launch(const SpawnOptions& options) {
  if (auto spare = std::exchange(spare_, std::nullopt)) {
    if (auto ran = run_in(std::move(*spare), options)) return std::move(*ran);
    spdlog::info("the spare PTY supervisor had ended; starting one for this program");
  }
  // Forked and used at once: cheaper than exec'ing a supervisor.
  if (auto forked = fork_spare()) {
    if (auto ran = run_in(std::move(*forked), options)) return std::move(*ran);
  }
  return spawn_pty_process(io_, options);
}

std::optional<Expected<std::unique_ptr<PtyProcess>>> PtyLauncher::run_in(
    SpareSupervisor spare, const SpawnOptions& options) {
  auto ran = std::move(spare).run(options);
  if (!ran) return std::nullopt;
  if (!*ran) return make_error(ran->error());
  return adopt_spawned(io_, std::move(ran->value()), options.size);
}

std::optional<SpareSupervisor> PtyLauncher::fork_spare() {
  if (!maker_) return std::nullopt;
  auto forked = SpareSupervisor::start(&*maker_);
  if (!forked) {
    drop_maker(forked.error());
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
