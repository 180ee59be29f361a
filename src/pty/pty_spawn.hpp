// PtySpawn: the fork/exec half of PtyProcess, with no event loop in it.
//
// spawn_supervised() opens a PTY and starts the supervisor, the program
// agentty-supervisor (see supervisor_protocol.hpp and supervisor_main.cpp),
// with posix_spawn: a session leader and controlling process of the PTY and a
// child subreaper, which forks the program into a process group of its own
// that is the terminal's foreground group. A status pipe carries the
// program's pid, or the stage and errno of a failure (setsid, TIOCSCTTY,
// chdir, fork, exec), back to the caller; it reaches end of file once the
// program has exec'd. On failure the supervisor and the program are reaped
// before returning, so nothing is left running or as a zombie.
//
// The supervisor waits until the program has ended and no other process is
// left in the terminal's session (its group, or a job in a group of its own;
// not one that left the session with setsid, nor one that ignores SIGHUP),
// then exits with the program's wait status: the same exit code, or the same
// fatal signal re-raised with core dumps disabled.
//
// The program starts with default signal dispositions, an empty signal mask,
// and only fds 0, 1 and 2 (the PTY slave) open. Nothing is forked from
// agentty itself: posix_spawn's vfork semantics keep the cost of a spawn flat
// however much memory the retained executions hold.
//
// start_supervised() and SpareSupervisor::start_program() return as soon as
// the supervisor knows what to run; the exec is awaited through
// StartingProgram, without blocking on an event loop. spawn_supervised()
// blocks until then (tests, benchmarks).
//
// Threading: call it from any one thread.
#pragma once

#include <sys/types.h>

#include <optional>

#include "base/expected.hpp"
#include "base/unique_fd.hpp"
#include "pty/pty_process.hpp"
#include "pty/starting_program.hpp"

namespace agentty::pty {

// Starts the supervisor; the program is then on its way (see StartingProgram).
Expected<StartingProgram> start_supervised(const SpawnOptions& options);
// The same, waited for (blocking).
Expected<SpawnedPty> spawn_supervised(const SpawnOptions& options);

// A supervisor started ahead of need on a fresh PTY (`agentty-supervisor
// --spare`): it has set up the session and controlling terminal and waits for
// the program to run. start_program() sends it the program, environment and
// directory and then behaves as start_supervised(): the expensive part of a spawn
// (opening a PTY, exec'ing the supervisor, its start-up) is already done.
// Destroying an unused spare kills and reaps it. Move-only.
class SpareMaker;

class SpareSupervisor {
 public:
  // Returns at once; the supervisor starts up in the background. Forked by
  // `maker` when given, else spawned.
  static Expected<SpareSupervisor> start(SpareMaker* maker = nullptr);

  SpareSupervisor(SpareSupervisor&& other) noexcept;
  SpareSupervisor& operator=(SpareSupervisor&&) = delete;
  ~SpareSupervisor();

  // Gives this spare the program (consumed either way); it is then on its
  // way. nullopt: the spare had ended (killed from outside) and nothing ran;
  // start it another way. Blocks for a forked spare's pid if it has not
  // said it yet: wait for control_fd() to be readable first to avoid that.
  std::optional<Expected<StartingProgram>> start_program(const SpawnOptions& options) &&;

  // Waits for a forked spare's pid (its maker sends it after the fork);
  // -1 if it never will (the maker ended, or could not fork it).
  pid_t pid();
  // Whether its pid, the first word on control_fd(), was read.
  bool announced() const { return announced_; }
  int control_fd() const { return control_.get(); }

 private:
  bool await_pid();
  SpareSupervisor(UniqueFd master, UniqueFd control, pid_t pid, dev_t slave_device);
  UniqueFd master_;
  UniqueFd control_;  // a socket: the instruction out, status messages back
  pid_t pid_ = -1;
  bool announced_ = false;  // its pid, the first word on control_, was read
  dev_t slave_device_ = 0;
};

// A running `agentty-supervisor --spare-maker` (see supervisor_protocol.hpp):
// it makes spares by forking itself, which costs a fraction of exec'ing a
// supervisor (no image to load, no start-up) and happens in that process,
// not on the caller's thread. Each spare is the caller's own child. Destroying
// the maker ends and reaps it (its spares live on). Move-only.
class SpareMaker {
 public:
  static Expected<SpareMaker> start();
  SpareMaker(SpareMaker&& other) noexcept;
  SpareMaker& operator=(SpareMaker&&) = delete;
  ~SpareMaker();

  // Asks for a spare on the PTY slave `slave`, controlled through the socket
  // `control` (both stay the caller's to close); returns without waiting for
  // the fork. The maker sends the pid on `control`. An error means the maker
  // has ended: start spares another way.
  Expected<void> make(int slave, int control);
  // Whether a make() failed: the maker has ended. A spare that could not be
  // started for want of fds on agentty's side leaves the maker usable.
  bool ended() const { return ended_; }

  pid_t pid() const { return pid_; }

 private:
  SpareMaker(UniqueFd socket, pid_t pid);
  UniqueFd socket_;  // SOCK_SEQPACKET: requests out, nothing back
  pid_t pid_ = -1;
  bool ended_ = false;
};

// The environment a spawned program sees, as "KEY=value" strings: the parent's
// environment without COLUMNS and LINES (the PTY has its own size), then
// TERM=xterm-256color, the pagers as cat (kAgentPagerVariables, with
// agent_defaults), then the overlay, which wins over all of them.
std::vector<std::string> build_environment(const SpawnOptions& options);

// Watches a spawned program from the loop (PtyProcess takes ownership).
Expected<std::unique_ptr<PtyProcess>> adopt_spawned(boost::asio::io_context& io, SpawnedPty spawned,
                                                    TerminalSize size);

}  // namespace agentty::pty
