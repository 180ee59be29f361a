// Formats an environment failure as "<syscall>: <strerror> (errno N)", and
// when the cause is one of agentty's resource limits, what the operator can
// do about it: an fd or process limit is the usual cause of a failed start on
// a busy machine, and "Bad file descriptor" or "make build" sent people the
// wrong way (audit 34).
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace agentty {

namespace errno_detail {

inline std::string current_limit(int resource) {
  rlimit limit{};
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return "";
  return ", now " + std::to_string(limit.rlim_cur);
}

}  // namespace errno_detail

// Out of file descriptors: said whatever the syscall, since any of them can
// meet the limit. Empty for every other error.
inline std::string fd_limit_hint(int err) {
  if (err == EMFILE)
    return "; agentty has as many files open as its limit allows (ulimit -n" +
           errno_detail::current_limit(RLIMIT_NOFILE) +
           "): close sessions and stop programs it no longer needs, or restart it with a "
           "higher limit";
  if (err == ENFILE)
    return "; the system's table of open files is full (sysctl fs.file-max): end programs "
           "or raise that limit";
  return "";
}

inline std::string errno_message(const char* syscall, int err = errno) {
  return std::string(syscall) + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")" +
         fd_limit_hint(err);
}

// For fork, clone and posix_spawn, where EAGAIN and ENOMEM mean a limit on
// processes or memory, not a passing condition.
inline std::string process_start_message(const char* syscall, int err) {
  std::string message = errno_message(syscall, err);
  if (err == EAGAIN)
    message += "; the limit on processes was reached (ulimit -u" +
               errno_detail::current_limit(RLIMIT_NPROC) +
               " for this user, or pids.max of agentty's cgroup): let programs end or stop "
               "some, or raise the limit";
  else if (err == ENOMEM)
    message +=
        "; the system (or agentty's cgroup) is out of memory: stop programs or free "
        "memory";
  return message;
}

// execve's E2BIG: the program's arguments and environment together are past
// ARG_MAX (one string past 128 KiB, execute names that one itself). Not a
// missing program, nor a broken agentty-supervisor.
inline std::string arguments_too_long_message(const char* syscall) {
  return errno_message(syscall, E2BIG) +
         "; the program's arguments and environment together are more than the system lets a "
         "program start with (ARG_MAX, " +
         std::to_string(::sysconf(_SC_ARG_MAX)) +
         " bytes here). Nothing was started: pass long text through stdin or a file instead "
         "of arguments or environment variables";
}

}  // namespace agentty
