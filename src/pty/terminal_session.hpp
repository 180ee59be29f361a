// The processes of one terminal's session: everything whose session id is
// the supervisor's pid (the supervisor is the session leader of its PTY).
//
// Signalling the program's process group misses what job control moved out
// of it: `sleep 600 &` in an interactive shell runs in a group of its own, in
// the same session. When an execution is killed (SIGKILL after a grace, its
// PtyProcess destroyed, agentty shutting down), those would live on as
// orphans; killing the whole session ends them. A process that left the
// session (setsid: a daemon) is out of reach on purpose, as with any
// terminal.
//
// Each member is checked again through a pidfd before it is signalled, so a
// pid reused by an unrelated process between the scan and the signal is
// never hit. Threading: stateless; reads /proc.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace agentty::pty {

// The pids in session `session_id`, except `session_id` itself; empty if
// /proc cannot be read.
std::vector<pid_t> session_members(pid_t session_id);

// Sends `signo` to every member of the session (not its leader), except the
// members of process group `except_group` (already signalled as a group);
// returns how many were signalled.
int signal_session_members(pid_t session_id, int signo, pid_t except_group = 0);

// Whether `pid` ignores SIGHUP (nohup, trap "" HUP): it means to outlive
// its terminal.
bool ignores_hangup(pid_t pid);

// Sends SIGKILL to every member of the session that does not ignore SIGHUP;
// returns how many were signalled.
int kill_session_members_but_nohup(pid_t session_id);

// Sends SIGCONT to every member of the session that is stopped (ctrl-z), or
// only to those of process group `only_group` when it is given: a stopped
// process takes a signal that ends it only once it runs again. Only stopped
// ones: a shell continued right after a hang-up may miss the hang-up.
// Returns how many were continued.
int continue_stopped_members(pid_t session_id, pid_t only_group = 0);

// When `program` (started in session `session_id`) has ended but other
// members of the session live on (`server &`, a job the shell left), up to
// `max` of them as "name (pid N)"; empty while the program runs, when nothing
// is left, or when /proc cannot be read.
std::vector<std::string> left_running_after(pid_t session_id, pid_t program, std::size_t max);

}  // namespace agentty::pty
