// The contract between spawn_supervised() (in agentty) and the
// agentty-supervisor program it starts for every local PTY program.
//
// agentty starts the supervisor with posix_spawn (vfork semantics: no copy of
// agentty's page tables, which grow with every retained execution) as
//   agentty-supervisor --supervise PROGRAM [ARGS...]
// in a new session (setsid), with the PTY slave on fds 0, 1 and 2, the write
// end of the status pipe on kStatusFd and nothing else open; its environment
// and working directory are the program's; every signal is blocked and at its
// default disposition.
//
// The supervisor makes the slave its controlling terminal, becomes a child
// subreaper, forks the program into a process group of its own that is the
// terminal's foreground group, and exits with the program's wait status once
// the program and its whole group are gone (see supervisor_main.cpp).
//
// The status pipe carries fixed-size StatusMessages, one write() each (atomic
// below PIPE_BUF): the program's pid, or the stage and errno of a failure. It
// reaches end of file once the program has exec'd.
#pragma once

#include <cstdint>

namespace agentty::pty::supervisor {

inline constexpr int kStatusFd = 3;
inline constexpr const char* kModeFlag = "--supervise";
inline constexpr const char* kProgramName = "agentty-supervisor";

enum class Stage : std::int32_t { program_pid, setsid, controlling_tty, chdir, fork, exec };

struct StatusMessage {
  Stage stage;
  std::int32_t value;  // the program's pid, or an errno
};

}  // namespace agentty::pty::supervisor
