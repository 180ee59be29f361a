// InputProbe: guesses whether the program on a local PTY is waiting for
// terminal input, from what the kernel shows in /proc.
//
// The foreground process group of the terminal (tcgetpgrp on the master) is
// the one that may read it. Each of its processes is looked up among the
// descendants of the PTY's supervisor (/proc/<pid>/task/<tid>/children; a full
// /proc scan when that file is missing), and each of their threads is checked:
// state 'S' and /proc/<tid>/syscall showing a read-family call (read, readv)
// on an fd whose device is the PTY slave (or /dev/tty, which is the slave for
// these processes: password prompts read it), or a wait-for-readiness call
// (poll, ppoll, select, pselect6, epoll_wait, epoll_pwait) whose read set holds
// such an fd, means "reading_input". The read set is the call's pollfd array
// or fd_set, read from the process's memory (process_vm_readv, allowed on a
// descendant), or the epoll instance's fds from /proc/<pid>/fdinfo: so an
// event loop waiting on a timer or a socket (node, asyncio, curl, man's
// pipeline) while it holds the terminal on fd 0-2 is busy. Only when the set
// cannot be read does holding the slave on fd 0, 1 or 2 count as reading. A
// shell blocked in wait4 is busy, but its child in the same foreground group
// may be the reader, so every member counts: any reader makes the answer
// reading_input. So does a descendant that left the terminal's session
// (setsid; `su user -c CMD` runs CMD so) and reads the slave itself (not
// /dev/tty, which is no longer the slave for it). A group whose every
// process is stopped (state 'T': ctrl-z with no job-control shell above to
// take the terminal back) is `suspended`.
//
// Fallbacks: no /proc, or an architecture whose syscall numbers are not known
// here (only x86_64 and aarch64 are), gives `unknown`; so does a member whose
// /proc/<tid>/syscall may not be read (it needs ptrace access: an agentty
// that is not root has none to a set-user-ID program such as su, sudo or
// passwd at its password prompt, to another user's process, or under Yama's
// ptrace_scope 2 to any) when no other member is seen reading. A foreground group with no live
// member gives `busy`.
//
// Cost: a few small /proc reads per foreground process (bounded to
// kMaxProcesses processes and kMaxThreads threads each, plus a read of a
// waiting thread's fd set); no ptrace attach, no blocking. Safe to call on
// each response from the event loop thread.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "pty/pty_channel.hpp"

namespace agentty::pty {

struct InputProbeTarget {
  int master_fd = -1;      // the PTY master (tcgetpgrp/tcgetattr work on it)
  dev_t slave_device = 0;  // st_rdev of the PTY slave
  pid_t supervisor = -1;   // root of the process tree to search
};

// `reader`, when given, is set to the pid of the process seen reading (with
// reading_input): an editor git started, not git, the group's leader.
InputState probe_input_state(const InputProbeTarget& target, pid_t* reader = nullptr);

// The name (/proc/PID/comm) of the process seen reading the terminal;
// nullopt when none is (busy, unknown) or it has gone.
std::optional<std::string> probe_reading_program(const InputProbeTarget& target);

// The terminal's ICANON and ECHO flags; nullopt if tcgetattr fails.
std::optional<LineModes> probe_line_modes(int master_fd);

// The terminal's foreground process group; nullopt if there is none.
std::optional<pid_t> probe_foreground_group(int master_fd);

// The name (/proc/PID/comm) of that group's leader; nullopt if there is no
// group or the leader has gone (a pipeline whose first command ended).
std::optional<std::string> probe_foreground_program(int master_fd);

}  // namespace agentty::pty
