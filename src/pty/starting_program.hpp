// StartingProgram: a local program between "its supervisor was told what to
// run" and "it has exec'd (or could not)".
//
// Both ways of starting a program end here: a freshly spawned supervisor
// (status pipe) and a spare one given its instruction (control socket). The
// status channel says the program's pid, or the stage and errno of a
// failure, and reaches end of file once the program has exec'd.
//
// Why a type of its own: the exec can take milliseconds (more on a loaded
// machine or a slow filesystem), and agentty's one event loop must not block
// on it. read_available() never blocks, so a caller on the loop waits for
// status_fd() to be readable between calls (PtyLauncher::launch), while a
// caller with no loop simply blocks (wait_blocking(): tests, benchmarks).
//
// Destroying it unfinished (its caller went away, the loop shut down) kills
// and reaps the supervisor, so nothing is left running or as a zombie.
// Threading: one thread at a time. Move-only.
#pragma once

#include <sys/types.h>

#include <array>
#include <optional>
#include <string>

#include "base/expected.hpp"
#include "base/unique_fd.hpp"
#include "pty/pty_process.hpp"
#include "pty/supervisor_protocol.hpp"

namespace agentty::pty {

// Why a fresh start (not a spare) gave neither a pid nor a failure.
inline constexpr const char* kSupervisorEndedEarly =
    "the PTY supervisor ended before starting the program";

struct SpawnedPty {
  UniqueFd master;         // O_NONBLOCK | O_CLOEXEC
  pid_t supervisor = -1;   // our child; the caller must reap it
  pid_t program = -1;      // == its process group id
  dev_t slave_device = 0;  // st_rdev of the PTY slave
};

class StartingProgram {
 public:
  // `from_spare`: a spare that ends before saying anything ran nothing, and
  // finish() says so (nullopt) instead of failing.
  // `options`: what was asked (failures are described with its program and cwd).
  StartingProgram(UniqueFd master, dev_t slave_device, pid_t supervisor, UniqueFd status,
                  const SpawnOptions& options, bool from_spare);
  StartingProgram(StartingProgram&& other) noexcept;
  StartingProgram& operator=(StartingProgram&&) = delete;
  ~StartingProgram();

  // The fd to wait on for readability between read_available() calls.
  int status_fd() const { return status_.get(); }
  // Reads whatever the channel holds, without blocking; true once it has
  // reached end of file (everything is said).
  bool read_available();
  // Blocks until read_available() is true.
  void wait_blocking();
  // Once everything is said: the program, or why it did not start (its
  // supervisor then reaped). nullopt: a spare that had ended before its
  // instruction reached it; nothing ran, start the program another way.
  std::optional<Expected<SpawnedPty>> finish() &&;

 private:
  void take(const supervisor::StatusMessage& message);

  UniqueFd master_;
  dev_t slave_device_ = 0;
  pid_t supervisor_ = -1;  // ours to reap until finish() hands it over
  UniqueFd status_;
  std::string program_name_;  // argv[0] and cwd, for failure messages
  std::string cwd_;
  bool from_spare_ = false;
  bool ended_ = false;  // end of file seen
  pid_t program_ = -1;
  std::optional<supervisor::StatusMessage> failure_;
  std::array<char, sizeof(supervisor::StatusMessage)> partial_{};
  std::size_t partial_size_ = 0;
};

// Ends a child that may be blocked forever and reaps it; reaps one that ends
// by itself. (Both block only for as long as the kernel takes.)
void kill_and_reap(pid_t pid);
void reap_blocking(pid_t pid);

}  // namespace agentty::pty
