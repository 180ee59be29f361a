// PtyProcess: the local PtyChannel. Runs a program under a fresh PTY
// (forkpty) in its own session, watched from the one Asio event loop.
//
// Process layout: the forked child becomes the session leader and controlling
// process of the PTY, but it is a tiny supervisor, not the program: it forks
// the program into its own process group (made the terminal's foreground
// group), becomes a child subreaper, and stays alive until that process group
// is empty. So a background job that outlives the shell keeps the execution
// running and is not hung up when the shell exits, and the PTY's lifetime is
// the process group's lifetime (a session's shell: end_with_program). The
// supervisor exits with the program's own status (re-raising a fatal
// signal), which is what on_exit reports.
//
// Between fork and exec only async-signal-safe calls are made: everything
// (argv, envp, cwd) is prepared before fork.
//
// Events: output is read up to 64 KiB per turn of the loop from the O_NONBLOCK
// master and handed out in calls of up to the consumer's output slice (a
// pause stops it within one);
// exit is noticed through a pidfd on the supervisor (no SIGCHLD handler, no
// blocking wait on the loop). on_exit fires once the supervisor is reaped AND
// the master has reported EIO (every slave fd closed, all data handed over),
// so output written just before exit is never lost. Only a process that left
// the program's group (a daemon, another job) can hold the slave past the
// supervisor; after a 2 s grace whatever is buffered is read and on_exit
// fires anyway, and the master is closed, which hangs that process up.
//
// Input: write() queues and never blocks; past 16 MiB not yet accepted by the
// terminal, further input is dropped with a warning.
//
// Destruction of a live PtyProcess sends SIGKILL to the process group, lets
// the supervisor reap it (up to 2 s, then SIGKILL to the supervisor too) and
// reaps the supervisor, blocking briefly: nothing is left behind, no zombie,
// and no callback fires afterwards.
//
// Errors from spawn_pty_process are messages a person can act on:
// "cwd '/nope': No such file or directory",
// "cannot run 'nosuchprog': No such file or directory (execvp)".
#pragma once

#include <boost/asio/io_context.hpp>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "pty/pty_channel.hpp"

namespace agentty::pty {

// The pager variables an agent's command gets set to `cat`: PAGER, and
// those programs read before it (a MANPAGER=less in the server's own
// environment made `man ls` wait in less for keys).
inline constexpr std::array<const char*, 5> kAgentPagerVariables = {
    "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "PSQL_PAGER"};

struct SpawnOptions {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::string cwd;                         // empty: inherit
  std::map<std::string, std::string> env;  // overlay on the parent environment
  TerminalSize size;
  // Agent commands get the pagers as cat (kAgentPagerVariables) unless `env`
  // sets them.
  bool agent_defaults = true;
  // The program's standard input: a read-only file holding these bytes, in
  // place of the terminal (stdout and stderr stay on it). nullopt: the
  // terminal, as for every other program.
  std::optional<std::string> stdin_data;
};

class PtyProcess;

// Starts the program. Errors (bad cwd, program not found, fork failure) are
// returned as messages a person can act on; nothing is left running then.
Expected<std::unique_ptr<PtyProcess>> spawn_pty_process(boost::asio::io_context& io,
                                                        const SpawnOptions& options);

class PtyProcess final : public PtyChannel {
 public:
  ~PtyProcess() override;

  void start(ChannelEvents events) override;
  void write(std::string_view bytes) override;
  std::size_t queued_input_bytes() const override;
  void resize(TerminalSize size) override;
  void send_signal(int signo) override;
  std::optional<int> process_id() const override;
  InputState input_state() const override;
  bool resume_foreground() override;
  std::optional<bool> echo_enabled() const override;
  std::optional<LineModes> line_modes() const override;
  std::vector<std::string> left_running() const override;
  std::optional<std::string> foreground_program() const override;
  std::optional<std::string> reading_program() const override;
  std::optional<bool> program_in_foreground() const override;
  TerminalSize size() const override;
  std::optional<TerminalSize> take_size_change() override;
  bool finished() const override;
  bool pause_output(bool paused) override;
  void set_output_slice(std::size_t max_bytes) override;

  // The program's process group id (== its pid).
  int process_group() const;
  // For an interactive shell (a session): the terminal's life is the
  // program's, as a terminal window closes with its shell. Once the program
  // ends, the supervisor (which reaps it) hangs up what it left on the
  // terminal (a job in the foreground when the shell was killed,
  // `sleep 600 &` left by `exit`): SIGHUP, SIGCONT to the stopped, SIGKILL
  // after a grace unless it ignores SIGHUP (nohup). Without it those kept the session running with
  // no shell: every later execute(session=) was refused or typed into them.
  void end_with_program();
  // The terminal's current foreground process group, if any.
  std::optional<int> foreground_process_group() const;

  struct Impl;
  explicit PtyProcess(std::unique_ptr<Impl> impl);

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace agentty::pty
