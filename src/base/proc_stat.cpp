#include "base/proc_stat.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "base/unique_fd.hpp"

namespace agentty {

namespace {
// Fields after the command name: state is field 3, starttime field 22.
constexpr int kFirstField = 3;
constexpr int kStartTimeField = 22;
}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  auto close_paren = text.rfind(')');
  if (close_paren == std::string_view::npos || close_paren + 2 >= text.size()) return std::nullopt;
  // strtoll needs a terminated string; the stat line is short.
  std::string rest(text.substr(close_paren + 2));
  ProcStat stat;
  stat.state = rest[0];
  const char* cursor = rest.c_str() + 1;
  for (int field = kFirstField + 1; field <= kStartTimeField; ++field) {
    char* end = nullptr;
    long long value = std::strtoll(cursor, &end, 10);
    if (end == cursor) return std::nullopt;  // truncated
    cursor = end;
    switch (field) {
      case 4:
        stat.ppid = static_cast<pid_t>(value);
        break;
      case 5:
        stat.pgrp = static_cast<pid_t>(value);
        break;
      case 6:
        stat.session = static_cast<pid_t>(value);
        break;
      case 8:
        stat.tpgid = static_cast<pid_t>(value);
        break;
      case kStartTimeField:
        stat.start_time = static_cast<std::uint64_t>(value);
        break;
      default:
        break;
    }
  }
  return stat;
}

std::optional<ProcStat> read_proc_stat(const std::string& dir) {
  // Generated on read and short: one read() gets it whole.
  UniqueFd fd(::open((dir + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  char buffer[1024];
  ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n <= 0) return std::nullopt;
  return parse_proc_stat(std::string_view(buffer, static_cast<std::size_t>(n)));
}

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  return read_proc_stat("/proc/" + std::to_string(pid));
}

}  // namespace agentty
