// The system calls a program blocks in while it waits for input, by number as
// /proc/<tid>/syscall reports them, for the architectures whose numbers are
// known here. Shared by the local probe (our own architecture) and the SSH
// host probe (the host's, which may differ from ours).
#pragma once

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>

namespace agentty::pty {

// Where the call keeps the fds it waits on: read (arg0), a pollfd array
// (arg0, count arg1), a read fd_set (arg1, highest fd + 1 in arg0), an epoll
// instance (arg0).
enum class WaitCall { other, read, poll, select, epoll };

namespace wait_syscall_detail {
template <std::size_t N>
bool has(const long (&calls)[N], long nr) {
  return std::find(std::begin(calls), std::end(calls), nr) != std::end(calls);
}
}  // namespace wait_syscall_detail

// nullopt when `arch` (`uname -m`) is not one whose numbers are known here.
inline std::optional<WaitCall> classify_wait_call(std::string_view arch, long nr) {
  using wait_syscall_detail::has;
  if (arch == "x86_64") {
    static constexpr long read[] = {0 /*read*/, 19 /*readv*/};
    static constexpr long poll[] = {7 /*poll*/, 271 /*ppoll*/};
    static constexpr long select[] = {23 /*select*/, 270 /*pselect6*/};
    static constexpr long epoll[] = {232 /*epoll_wait*/, 281 /*epoll_pwait*/, 441 /*epoll_pwait2*/};
    if (has(read, nr)) return WaitCall::read;
    if (has(poll, nr)) return WaitCall::poll;
    if (has(select, nr)) return WaitCall::select;
    if (has(epoll, nr)) return WaitCall::epoll;
    return WaitCall::other;
  }
  if (arch == "aarch64") {
    static constexpr long read[] = {63 /*read*/, 65 /*readv*/};
    static constexpr long poll[] = {73 /*ppoll*/};
    static constexpr long select[] = {72 /*pselect6*/};
    static constexpr long epoll[] = {22 /*epoll_pwait*/, 441 /*epoll_pwait2*/};
    if (has(read, nr)) return WaitCall::read;
    if (has(poll, nr)) return WaitCall::poll;
    if (has(select, nr)) return WaitCall::select;
    if (has(epoll, nr)) return WaitCall::epoll;
    return WaitCall::other;
  }
  return std::nullopt;
}

// The architecture this program was built for, as `uname -m` names it.
constexpr std::string_view local_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "";
#endif
}

}  // namespace agentty::pty
