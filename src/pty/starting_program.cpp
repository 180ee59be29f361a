#include "pty/starting_program.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "base/errno_message.hpp"

namespace agentty::pty {

using supervisor::Stage;
using supervisor::StatusMessage;

namespace {

std::string describe_failure(const StatusMessage& message, const std::string& program,
                             const std::string& cwd) {
  int err = message.value;
  switch (message.stage) {
    case Stage::exec:
      if (err == E2BIG) return arguments_too_long_message("execvp");
      return "cannot run '" + program + "': " + std::strerror(err) + " (execvp)";
    case Stage::chdir:
      return "cwd '" + cwd + "': " + std::strerror(err);
    case Stage::setsid:
      return errno_message("setsid", err);
    case Stage::controlling_tty:
      return errno_message("ioctl(TIOCSCTTY)", err);
    case Stage::fork:
      return process_start_message("fork", err);
    case Stage::stdin_file:
      return errno_message("giving the program its stdin (dup2)", err);
    case Stage::program_pid:
      break;
  }
  return "unexpected status from the PTY supervisor";
}

}  // namespace

void reap_blocking(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  reap_blocking(pid);
}

StartingProgram::StartingProgram(UniqueFd master, dev_t slave_device, pid_t supervisor,
                                 UniqueFd status, const SpawnOptions& options, bool from_spare)
    : master_(std::move(master)),
      slave_device_(slave_device),
      supervisor_(supervisor),
      status_(std::move(status)),
      program_name_(options.argv.empty() ? std::string() : options.argv[0]),
      cwd_(options.cwd),
      from_spare_(from_spare) {
  // Reads never block: a caller on the loop waits for readability instead.
  int flags = ::fcntl(status_.get(), F_GETFL);
  if (flags >= 0) ::fcntl(status_.get(), F_SETFL, flags | O_NONBLOCK);
}

StartingProgram::StartingProgram(StartingProgram&& other) noexcept
    : master_(std::move(other.master_)),
      slave_device_(other.slave_device_),
      supervisor_(std::exchange(other.supervisor_, -1)),
      status_(std::move(other.status_)),
      program_name_(std::move(other.program_name_)),
      cwd_(std::move(other.cwd_)),
      from_spare_(other.from_spare_),
      ended_(other.ended_),
      program_(other.program_),
      failure_(other.failure_),
      partial_(other.partial_),
      partial_size_(other.partial_size_) {}

StartingProgram::~StartingProgram() {
  // Unfinished: whoever waited for it went away. Its program may be about to
  // run; end the supervisor, which takes the program's group with it.
  if (supervisor_ <= 0) return;
  if (program_ > 0) ::kill(-program_, SIGKILL);
  kill_and_reap(supervisor_);
}

void StartingProgram::take(const StatusMessage& message) {
  if (message.stage == Stage::program_pid) {
    program_ = message.value;
  } else if (!failure_) {
    failure_ = message;
  }
}

bool StartingProgram::read_available() {
  while (!ended_) {
    ssize_t n =
        ::read(status_.get(), partial_.data() + partial_size_, partial_.size() - partial_size_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (n <= 0) {
      ended_ = true;  // end of file (or an error: nothing more will come)
      break;
    }
    partial_size_ += static_cast<std::size_t>(n);
    if (partial_size_ < partial_.size()) continue;
    StatusMessage message{};
    std::memcpy(&message, partial_.data(), sizeof message);
    partial_size_ = 0;
    take(message);
  }
  return true;
}

void StartingProgram::wait_blocking() {
  while (!read_available()) {
    struct pollfd readable {
      status_.get(), POLLIN, 0
    };
    ::poll(&readable, 1, -1);
  }
}

std::optional<Expected<SpawnedPty>> StartingProgram::finish() && {
  pid_t supervisor = std::exchange(supervisor_, -1);
  if (from_spare_ && program_ <= 0 && !failure_) {
    // Killed before its instruction reached it: nothing ran.
    kill_and_reap(supervisor);
    return std::nullopt;
  }
  if (failure_ || program_ <= 0) {
    // The supervisor ends by itself once the failed program is reaped.
    reap_blocking(supervisor);
    return make_error(failure_ ? describe_failure(*failure_, program_name_, cwd_)
                               : std::string(kSupervisorEndedEarly));
  }
  int flags = ::fcntl(master_.get(), F_GETFL);
  ::fcntl(master_.get(), F_SETFL, flags | O_NONBLOCK);
  SpawnedPty spawned;
  spawned.master = std::move(master_);
  spawned.supervisor = supervisor;
  spawned.program = program_;
  spawned.slave_device = slave_device_;
  return spawned;
}

}  // namespace agentty::pty
