// What an SSH host's kernel says about the program on one of our remote
// terminals: the script that asks it (run by RemoteInputProbe on a PTY-less
// exec channel of the same connection) and the reading of its answer.
//
// Finding the terminal: every session channel of one SSH connection is
// started by the same server process (OpenSSH's per-connection sshd), which
// is also the probe's parent; the program's shell is a child of it and leads
// the terminal's session. The probe looks among those children for
//  - a remote command: the one whose command line (before its shell execs
//    the last command) or environment (after; every process the command
//    starts inherits it) holds AGENTTY_TERMINAL=<tag>, which the command line
//    agentty sends exports (ssh_channel.cpp);
//  - a session's login shell: the same tag in LC_AGENTTY_TERMINAL, sent as
//    an environment request (sshd passes LC_* by default on Debian and
//    RHEL), else the pid its prompt hook reported ($$ in the D marks);
//  - failing those, the one child leading a terminal whose environment may
//    not be read: a bare `sudo cmd` (or su, passwd) is the leader itself,
//    as both shells exec their last command, and it is root's. Two such
//    terminals on one connection are not told apart (not found).
// and answers with that leader's pid, so later probes skip the search.
//
// From the leader's /proc/PID/stat: the terminal (tty_nr, a /dev/pts device)
// and its foreground process group (tpgid); from `stty -a` on that terminal
// (the login user owns it) its ICANON and ECHO modes, which say a password
// prompt where the program itself cannot be seen (sudo, su: root's). For each
// member of that group in the leader's session: its name, its state, which of fds 0-2
// are the terminal, and per thread its state, /proc/<tid>/syscall (number and
// first argument, with whether that argument is an fd on the terminal, and an
// epoll instance's registered fds from fdinfo) and /proc/<tid>/wchan. The
// same for up to 16 processes started from the terminal's session that left
// it (setsid; `su user -c CMD` (util-linux) runs CMD so, on the same
// terminal, while su waits in the foreground): for them /dev/tty is not the
// terminal. The script needs sh, awk, ls, (for the first search) grep and
// (for the modes only) stty; it prints lines, and the decision is made here,
// where it is tested:
//  - a thread blocked reading the terminal (read/readv on it; poll/select
//    while it holds the terminal on fd 0-2, as the fd set in its memory
//    cannot be read from a shell; epoll_wait with the terminal registered for
//    input) means reading_input;
//  - where /proc/<tid>/syscall cannot be read (ptrace rules: Yama's
//    ptrace_scope >= 1 forbids it for processes that are not our
//    descendants) the kernel function it sleeps in (wchan) says the same,
//    less exactly: n_tty_read, or a poll/select/epoll wait or wait_woken
//    while holding the terminal on fd 0-2;
//  - a process outside the session counts only when it reads: the terminal
//    itself (not /dev/tty) read, or a wait while the terminal is its
//    standard input (fd 0; a daemon logging to it polls other things);
//  - every member stopped: suspended; no member: busy; a sleeping thread
//    that neither file explains: unknown (the caller guesses).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pty/pty_channel.hpp"

namespace agentty::pty {

// The probe's sh script: finds the terminal by `terminal_tag` unless
// `leader` (its session leader's pid) is known. Fed to `sh -s` on stdin, so
// no shell quoting of the login shell's kind is involved.
std::string remote_input_script(std::string_view terminal_tag, std::optional<int> leader);

struct RemoteInputReport {
  enum class Outcome {
    answered,     // `state` is the kernel's answer (unknown: it could not tell)
    unsupported,  // not Linux, no /proc, no awk, a terminal not under /dev/pts
    not_found,    // no terminal with that tag or leader under this connection
    malformed,    // cut short or not the probe's output
  };
  Outcome outcome = Outcome::malformed;
  InputState state = InputState::unknown;
  std::optional<int> leader;            // the terminal's session leader, once found
  std::optional<int> foreground_group;  // the terminal's (tpgid), once found
  std::optional<LineModes> line_modes;  // the terminal's, once found (no stty: nullopt)
  // Names (comm), as PtyChannel::foreground_program and reading_program say
  // them: the foreground group's leader, and the process seen reading.
  std::optional<std::string> foreground_program;
  std::optional<std::string> reading_program;
  std::string detail;  // unsupported: why, in the script's words
};

RemoteInputReport read_remote_input_report(std::string_view output);

}  // namespace agentty::pty
