// PtyLauncher: starts local PTY programs, keeping one spare supervisor ready.
//
// Why: most of an execution's start-up latency is not the program but the
// machinery around it: opening a PTY, exec'ing agentty-supervisor and its
// start-up (~2 ms on a small VM, as much as `/bin/echo` itself). A spare
// (SpareSupervisor) has done all of that before the request arrives; launch()
// hands it the program. The next spare is made when the owner says a program
// has ended (prepare_spare), off the caller's path. A launch while no spare is
// ready spawns as spawn_pty_process() does. No spare exists before the first
// program has ended, so a server that never runs a local program has none.
//
// Spares are forked by a SpareMaker (`agentty-supervisor --spare-maker`),
// started with the first spare: forking that small process costs a fraction
// of exec'ing a supervisor (on a small VM ~0.5 ms against ~1.5 ms, most of it
// the kernel's exec and a static binary's start-up), and the fork runs in the
// maker, not on this loop. A launch with no spare waiting also has the maker
// fork one and uses it at once. A maker that fails (killed from outside) is
// dropped, and spares are exec'd from then on.
//
// Semantics are those of spawn_pty_process(): same environment, directory,
// size, process layout and error messages. A spare that died (killed from
// outside) is noticed before use and replaced.
//
// Threading: the owning io_context's thread only. Destruction kills and
// reaps the spare; a posted refill that runs after destruction does nothing,
// and so does a launch that resumes after it (the program it was starting
// is ended with it).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>

#include "base/expected.hpp"
#include "pty/pty_process.hpp"
#include "pty/pty_spawn.hpp"

namespace agentty::pty {

class PtyLauncher {
 public:
  // `keep_spare` false: every launch spawns afresh (--no-spare-terminal,
  // AGENTTY_NO_SPARE_TERMINAL).
  PtyLauncher(boost::asio::io_context& io, bool keep_spare = true);
  ~PtyLauncher();
  PtyLauncher(const PtyLauncher&) = delete;
  PtyLauncher& operator=(const PtyLauncher&) = delete;

  // Starts the program. The loop keeps running while it starts (a spare's pid
  // still on its way, the program's exec): only this coroutine waits.
  boost::asio::awaitable<Expected<std::unique_ptr<PtyProcess>>> launch(SpawnOptions options);

  // Makes a spare if there is none, after everything already queued on the
  // loop. The owner calls it when a launched program has ended: made while
  // the program starts, the spare's exec competes with it for the CPU (and on
  // a 2-core VM cost more than it saved); made once the answer is on its way,
  // it is ready for the agent's next call.
  void prepare_spare();

  // The waiting spare's supervisor pid, if any (tests).
  std::optional<pid_t> spare_pid();
  // The spare maker's pid, if one runs (tests).
  std::optional<pid_t> maker_pid() const;

 private:
  class Launching;
  void refill();
  // Runs the program in `spare`; nullopt if the spare had ended (nothing ran).
  boost::asio::awaitable<std::optional<Expected<std::unique_ptr<PtyProcess>>>> run_in(
      SpareSupervisor spare, const SpawnOptions& options);
  // Waits (on the loop) until `starting` has said everything, then adopts it.
  boost::asio::awaitable<std::optional<Expected<std::unique_ptr<PtyProcess>>>> finish(
      StartingProgram starting, TerminalSize size);
  // A spare forked by the maker; nullopt without a working maker.
  std::optional<SpareSupervisor> fork_spare();
  void drop_maker(const std::string& why);

  boost::asio::io_context& io_;
  bool keep_spare_;
  // Declared before spare_: destroyed after it (a spare does not need it).
  std::optional<SpareMaker> maker_;
  bool maker_failed_ = false;  // then spares are exec'd, as without one
  std::optional<SpareSupervisor> spare_;
  bool refill_scheduled_ = false;
  // Launches in progress. A refill due meanwhile waits for them to finish:
  // when a call arrives before the refill ran (the client answered fast), the
  // launch forks its own spare, and a second fork at once would compete with
  // its program for the CPU.
  int launching_ = 0;
  bool refill_deferred_ = false;
  std::shared_ptr<PtyLauncher*> self_;  // cleared on destruction, for posted refills
};

}  // namespace agentty::pty
