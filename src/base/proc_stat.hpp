// The fields of /proc/PID/stat that agentty reads (Linux): one parser for the
// input probe, session kills, the foreground group and server liveness.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace agentty {

struct ProcStat {
  char state = '?';  // R, S, D, T, Z, X, ...
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  pid_t tpgid = 0;               // the controlling terminal's foreground group, or -1
  std::uint64_t start_time = 0;  // clock ticks after boot
};

// "pid (comm) state ppid pgrp session tty_nr tpgid ... starttime ...". comm
// may hold spaces and parentheses, so the fields count from the last ')'.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// `dir` is a process's or a thread's /proc directory ("/proc/42",
// "/proc/42/task/43"); nullopt when it is gone or unreadable.
std::optional<ProcStat> read_proc_stat(const std::string& dir);
std::optional<ProcStat> read_proc_stat(pid_t pid);

}  // namespace agentty
