// InputProbe: guesses whether the program on a local PTY is waiting for
// terminal input, from what the kernel shows in /proc.
//
// The foreground process group of the terminal (tcgetpgrp on the master) is
// the one that may read it. Each of its processes is looked up among the
// descendants of the PTY's supervisor (/proc/<pid>/task/<tid>/children; a full
// /proc scan when that file is missing), and each of their threads is checked:
// state 'S' and /proc/<tid>/syscall showing a read-family call (read, readv)
// on an fd whose device is the PTY slave (or /dev/tty, which is the slave for
// these processes: password prompts read it), or a wait-for-readiness call (poll,
// select, pselect6, ppoll, epoll_wait, epoll_pwait) while the process has the
// slave open on fd 0, 1 or 2, means "reading_input". A shell blocked in wait4
// is busy, but its child in the same foreground group may be the reader, so
// every member counts: any reader makes the answer reading_input.
//
// Fallbacks: no /proc, or an architecture whose syscall numbers are not known
// here (only x86_64 and aarch64 are), gives `unknown`; a foreground group with
// no live member gives `busy`. Poll-family calls are a best effort: the
// probe does not read the fd sets, so a program polling a socket while it
// holds the terminal counts as reading.
//
// Cost: a few small /proc reads per foreground process (bounded to
// kMaxProcesses processes and kMaxThreads threads each); no ptrace, no
// blocking. Safe to call on each response from the event loop thread.
#pragma once

#include <sys/types.h>

#include <optional>

#include "pty/pty_channel.hpp"

namespace agentty::pty {

struct InputProbeTarget {
  int master_fd = -1;      // the PTY master (tcgetpgrp/tcgetattr work on it)
  dev_t slave_device = 0;  // st_rdev of the PTY slave
  pid_t supervisor = -1;   // root of the process tree to search
};

InputState probe_input_state(const InputProbeTarget& target);

// The terminal's ECHO flag (false at a password prompt); nullopt if tcgetattr fails.
std::optional<bool> probe_echo_enabled(int master_fd);

// The terminal's foreground process group; nullopt if there is none.
std::optional<pid_t> probe_foreground_group(int master_fd);

}  // namespace agentty::pty
