#include "pty/remote_input_report.hpp"

#include <charconv>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "pty/wait_syscalls.hpp"

namespace agentty::pty {

namespace {

// Output lines (fields separated by spaces):
//   agentty-probe 1 | arch ARCH | unsupported WHY | notfound
//   leader PID tty PATH fg PGID
//   modes FLAG...                      (stty -a's icanon, echo and isig, each maybe -)
//   p PID STATE FDS                    (FDS: which of 0,1,2 are the terminal, or -)
//   o PID STATE FDS                    (a descendant in a session of its own; FDS
//                                       never counts /dev/tty, not the terminal for it)
//   n PID NAME                         (after each p or o: its comm, may hold spaces)
//   t PID TID STATE NR ARG0 ARG0TTY WCHAN   (- where not read: only for state S)
//   e PID TID FD EVENTS FDTTY          (an epoll instance's fds: the thread's ARG0)
//   end
// awk does the reading: a shell's `read` takes a byte per system call, and
// each /proc file is generated again per call (150 processes took 150 ms).
constexpr std::string_view kScript = R"SH(exec 2>/dev/null
echo agentty-probe 1
read -r os < /proc/sys/kernel/ostype || { echo unsupported no /proc; exit 0; }
[ "$os" = Linux ] || { echo unsupported "$os"; exit 0; }
read -r arch < /proc/sys/kernel/arch || arch=$(uname -m)
echo arch "$arch"
command -v awk > /dev/null || { echo unsupported no awk; exit 0; }
printf '%s\n' /proc/[0-9]* | LC_ALL=C awk -v tag="$tag" -v leader="$leader" -v ppid="$PPID" '
function stat(path,  line, at, f) {
  line = ""; getline line < (path "/stat"); close(path "/stat")
  at = match(line, /\) [^)]*$/); if (!at) return 0
  split(substr(line, at + 2), f, " ")
  NAME = substr(line, index(line, "(") + 1, at - index(line, "(") - 1)
  S = f[1]; PP = f[2]; PG = f[3]; SID = f[4]; TTY = f[5]; FG = f[6]; return 1
}
function first_line(path,  line) { line = ""; getline line < path; close(path); return line }
function unreadable(path,  line, got) { got = (getline line < path); close(path); return got < 0 }
function hex(s,  i, c, v) {
  v = 0; s = tolower(s); sub(/^0x/, "", s)
  for (i = 1; i <= length(s) && i <= 12; i++) {
    c = index("0123456789abcdef", substr(s, i, 1)); if (!c) break; v = v * 16 + c - 1
  }
  return v
}
BEGIN {
  while ((getline d) > 0) { sub(/^\/proc\//, "", d); pids[++np] = d }
  if (leader == "" && tag != "") {
    files = ""; hidden = ""; nhidden = 0
    for (i = 1; i <= np; i++) {
      if (!stat("/proc/" pids[i]) || PP != ppid) continue
      files = files " /proc/" pids[i] "/cmdline /proc/" pids[i] "/environ"
      if (SID == pids[i] && TTY != 0 && unreadable("/proc/" pids[i] "/environ")) { hidden = pids[i]; nhidden++ }
    }
    if (files != "") {
      cmd = "grep -l -F -e AGENTTY_TERMINAL=" tag files
      while ((cmd | getline found) > 0) { split(found, part, "/"); leader = part[3] }
      close(cmd)
    }
    # A bare `sudo cmd`: both shells exec, and the leader is a program of
    # another user, whose environment is not ours to read. The only such
    # terminal under this connection is taken to be ours.
    if (leader == "" && nhidden == 1) leader = hidden
  }
  if (leader == "" || !stat("/proc/" leader) || SID != leader || PP != ppid || TTY == 0) { print "notfound"; exit }
  major = int(TTY / 256) % 4096; minor = TTY % 256 + int(TTY / 1048576) * 256
  if (major != 136) { print "unsupported terminal " major ":" minor; exit }
  tty = "/dev/pts/" minor; fg = FG
  print "leader", leader, "tty", tty, "fg", fg
  # The login user owns its terminal, so it may read its modes.
  cmd = "stty -a < " tty; modes = ""
  while ((cmd | getline line) > 0) {
    n = split(line, f, /[ ;]+/)
    for (i = 1; i <= n; i++) if (f[i] ~ /^-?(icanon|echo|isig)$/) modes = modes " " f[i]
  }
  close(cmd)
  if (modes != "") print "modes" modes
  dirs = ""
  for (i = 1; i <= np; i++) {
    if (!stat("/proc/" pids[i])) continue
    sid[pids[i]] = SID; parent[pids[i]] = PP; state[pids[i]] = S; name[pids[i]] = NAME
    if (SID == leader && PG == fg && nm < 64) { member[++nm] = pids[i]; dirs = dirs " /proc/" pids[i] "/fd /proc/" pids[i] "/task" }
  }
  # Started from the terminal but in a session of their own (setsid; `su
  # user -c CMD` runs CMD so): they may read it with no job control to stop them.
  for (i = 1; i <= np && no < 16; i++) {
    p = pids[i]
    if (!(p in sid) || sid[p] == leader) continue
    depth = 0
    for (up = parent[p]; up > 1 && (up in sid) && sid[up] != leader && depth < 32; up = parent[up]) depth++
    if ((up in sid) && sid[up] == leader) { outside[p] = 1; away[++no] = p; dirs = dirs " /proc/" p "/fd /proc/" p "/task" }
  }
  if (dirs != "") {
    cmd = "ls -l" dirs
    while ((cmd | getline line) > 0) {
      if (line ~ /^\/proc\/[0-9]+\/(fd|task):$/) { split(line, part, "/"); p = part[3]; kind = part[4]; continue }
      n = split(line, f, " ")
      # /dev/tty is the terminal only for a process still in its session.
      if (kind == "fd:" && f[n - 1] == "->" && (f[n] == tty || (f[n] == "/dev/tty" && !(p in outside)))) is_tty[p, f[n - 2]] = 1
      if (kind == "task:" && f[n] ~ /^[0-9]+$/ && ntask[p] < 64) task[p, ++ntask[p]] = f[n]
    }
    close(cmd)
  }
  for (m = 1; m <= nm; m++) describe("p", member[m])
  for (m = 1; m <= no; m++) describe("o", away[m])
  print "end"
}
function describe(kind, p,  fds, fd, k, tid, t, nr, a0, a0tty, w, sc, info, line, n, f) {
  fds = ""
  for (fd = 0; fd <= 2; fd++) if ((p, fd) in is_tty) fds = fds fd
  print kind, p, state[p], (fds == "" ? "-" : fds)
  print "n", p, name[p]
  for (k = 1; k <= ntask[p]; k++) {
    tid = task[p, k]; t = "/proc/" p "/task/" tid
    if (!stat(t)) continue
    nr = "-"; a0 = "-"; a0tty = "-"; w = "-"
    if (S == "S") {
      split(first_line(t "/syscall"), sc, " ")
      if (sc[1] ~ /^[0-9]+$/) {
        nr = sc[1]; a0 = hex(sc[2]); a0tty = ((p, a0) in is_tty) ? 1 : 0
        info = "/proc/" p "/fdinfo/" a0
        while ((getline line < info) > 0) {
          n = split(line, f, " ")
          if (f[1] == "tfd:") print "e", p, tid, f[2], f[4], ((p, f[2]) in is_tty) ? 1 : 0
        }
        close(info)
      } else if (sc[1] != "") nr = sc[1]
      w = first_line(t "/wchan"); if (w == "") w = "-"
    }
    print "t", p, tid, S, nr, a0, a0tty, w
  }
}'
)SH";

struct Member {
  char state = '?';
  std::string terminal_fds;  // of 0, 1, 2
  // Started from the terminal but in a session of its own (setsid, `su -c`).
  bool outside_session = false;
  // Whether a poll/select/epoll wait of it counts as reading the terminal: a
  // member of the foreground group holding it on fd 0-2; a program outside
  // the session only with it as its standard input (one logging to it
  // polls other things).
  bool holds_terminal() const {
    return outside_session ? terminal_fds.find('0') != std::string::npos : !terminal_fds.empty();
  }
};

struct Thread {
  long pid = 0;
  long tid = 0;
  char state = '?';
  std::string syscall;  // a number, "running", "-1", or "-" (unreadable)
  long arg0_is_terminal = 0;
  std::string wchan;
};

struct EpollEntry {
  long pid = 0;
  long tid = 0;
  unsigned long events = 0;
  bool terminal = false;
};

std::optional<long> number(std::string_view text, int base = 10) {
  long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// stty's words for ICANON, ECHO and ISIG ("icanon", "-echo", "isig");
// nullopt unless the first two are there (ISIG on unless said).
std::optional<LineModes> line_modes(const std::vector<std::string>& words) {
  std::optional<bool> canonical;
  std::optional<bool> echo;
  bool signals = true;
  for (const auto& word : words) {
    const bool off = word.starts_with('-');
    const std::string_view name = std::string_view(word).substr(off ? 1 : 0);
    if (name == "icanon") canonical = !off;
    if (name == "echo") echo = !off;
    if (name == "isig") signals = !off;
  }
  if (!canonical || !echo) return std::nullopt;
  return LineModes{*canonical, *echo, signals};
}

std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string field; in >> field;) out.push_back(field);
  return out;
}

enum class Verdict { reading, not_reading, cannot_tell };

// A sleeping thread whose system call could not be read: the kernel function
// it sleeps in. Symbol names are the kernel's own (5.x and 6.x).
Verdict verdict_from_wchan(const std::string& wchan, const Member& member) {
  if (wchan.empty() || wchan == "-" || wchan == "0") return Verdict::cannot_tell;
  if (wchan == "n_tty_read")  // outside the session maybe a terminal of its own
    return !member.outside_session || member.holds_terminal() ? Verdict::reading
                                                              : Verdict::not_reading;
  static constexpr std::string_view kWaits[] = {
      "wait_woken", "poll_schedule_timeout", "do_select", "core_sys_select", "do_sys_poll",
      "ep_poll",    "do_epoll_wait",
  };
  for (auto wait : kWaits) {
    if (wchan.starts_with(wait))
      return member.holds_terminal() ? Verdict::reading : Verdict::not_reading;
  }
  return Verdict::not_reading;
}

Verdict verdict(const Thread& thread, const Member& member, const std::string& arch,
                const std::vector<EpollEntry>& epoll) {
  if (thread.state != 'S') return Verdict::not_reading;
  auto nr = number(thread.syscall);
  if (thread.syscall == "running" || thread.syscall == "-1") return Verdict::not_reading;
  auto call = nr ? classify_wait_call(arch, *nr) : std::nullopt;
  if (!call) return verdict_from_wchan(thread.wchan, member);
  switch (*call) {
    case WaitCall::read:
      return thread.arg0_is_terminal ? Verdict::reading : Verdict::not_reading;
    case WaitCall::poll:
    case WaitCall::select:
      // The fd set is in the program's memory, out of a shell's reach.
      return member.holds_terminal() ? Verdict::reading : Verdict::not_reading;
    case WaitCall::epoll: {
      constexpr unsigned long kInput = 0x001 | 0x002 | 0x040;  // EPOLLIN | EPOLLPRI | EPOLLRDNORM
      for (const auto& entry : epoll)
        if (entry.pid == thread.pid && entry.tid == thread.tid && entry.terminal &&
            (entry.events & kInput))
          return Verdict::reading;
      return Verdict::not_reading;
    }
    case WaitCall::other:
      return Verdict::not_reading;
  }
  return Verdict::cannot_tell;
}

}  // namespace

std::string remote_input_script(std::string_view terminal_tag, std::optional<int> leader) {
  // The tag is hex and the leader a number: nothing to quote.
  std::string script = "tag=" + std::string(terminal_tag) +
                       " leader=" + (leader ? std::to_string(*leader) : std::string()) + "\n";
  return script + std::string(kScript);
}

RemoteInputReport read_remote_input_report(std::string_view output) {
  RemoteInputReport report;
  std::istringstream in{std::string(output)};
  std::string line;
  // A login shell's rc may print before the script runs.
  while (line != "agentty-probe 1")
    if (!std::getline(in, line)) return report;
  std::string arch;
  std::map<long, Member> members;
  std::map<long, Member> outsiders;
  std::vector<Thread> threads;
  std::vector<EpollEntry> epoll;
  std::map<long, std::string> names;
  bool ended = false;
  while (std::getline(in, line)) {
    auto f = fields(line);
    if (f.empty()) continue;
    const std::string& kind = f[0];
    if (kind == "arch" && f.size() == 2) {
      arch = f[1];
    } else if (kind == "unsupported") {
      report.outcome = RemoteInputReport::Outcome::unsupported;
      report.detail = line.size() > 12 ? line.substr(12) : "";
      return report;
    } else if (kind == "notfound") {
      report.outcome = RemoteInputReport::Outcome::not_found;
      return report;
    } else if (kind == "leader" && f.size() == 6) {
      if (auto pid = number(f[1])) report.leader = static_cast<int>(*pid);
      if (auto group = number(f[5]); group && *group > 0)
        report.foreground_group = static_cast<int>(*group);
    } else if (kind == "modes") {
      report.line_modes = line_modes(f);
    } else if ((kind == "p" || kind == "o") && f.size() == 4) {
      auto pid = number(f[1]);
      if (!pid) return report;
      (kind == "p" ? members : outsiders)[*pid] =
          Member{f[2][0], f[3] == "-" ? "" : f[3], kind == "o"};
    } else if (kind == "t" && f.size() == 8) {
      auto pid = number(f[1]);
      auto tid = number(f[2]);
      if (!pid || !tid) return report;
      threads.push_back(Thread{*pid, *tid, f[3][0], f[4], f[6] == "1", f[7]});
    } else if (kind == "n" && f.size() >= 3) {
      // The name is the rest of the line: a comm may hold spaces.
      if (auto pid = number(f[1])) names[*pid] = line.substr(line.find(' ', 2) + 1);
    } else if (kind == "e" && f.size() == 6) {
      auto pid = number(f[1]);
      auto tid = number(f[2]);
      auto events = number(f[4], 16);
      if (!pid || !tid || !events) return report;
      epoll.push_back(EpollEntry{*pid, *tid, static_cast<unsigned long>(*events), f[5] == "1"});
    } else if (kind == "end") {
      ended = true;
      break;
    }
  }
  if (!ended || !report.leader) return report;  // cut short: malformed
  report.outcome = RemoteInputReport::Outcome::answered;
  const auto name_of = [&](long pid) {
    auto found = names.find(pid);
    return found == names.end() ? std::nullopt : std::optional<std::string>(found->second);
  };
  // The group's leader, while it is in it (a pipeline's leader may be gone).
  if (report.foreground_group && members.contains(*report.foreground_group))
    report.foreground_program = name_of(*report.foreground_group);
  // A program outside the session adds only a read: one that cannot be told
  // about (or sleeps) leaves the foreground's answer as it is.
  for (const auto& thread : threads) {
    auto outsider = outsiders.find(thread.pid);
    if (outsider != outsiders.end() &&
        verdict(thread, outsider->second, arch, epoll) == Verdict::reading) {
      report.state = InputState::reading_input;
      report.reading_program = name_of(thread.pid);
      return report;
    }
  }
  if (members.empty()) {
    report.state = InputState::busy;  // nothing in the foreground (as locally)
    return report;
  }
  bool all_stopped = true;
  bool cannot_tell = false;
  for (const auto& [pid, member] : members) all_stopped = all_stopped && member.state == 'T';
  for (const auto& thread : threads) {
    auto member = members.find(thread.pid);
    if (member == members.end()) continue;
    switch (verdict(thread, member->second, arch, epoll)) {
      case Verdict::reading:
        report.state = InputState::reading_input;
        report.reading_program = name_of(thread.pid);
        return report;
      case Verdict::cannot_tell:
        cannot_tell = true;
        break;
      case Verdict::not_reading:
        break;
    }
  }
  if (all_stopped)
    report.state = InputState::suspended;
  else
    report.state = cannot_tell ? InputState::unknown : InputState::busy;
  return report;
}

}  // namespace agentty::pty
