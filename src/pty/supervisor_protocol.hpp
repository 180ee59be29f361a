// The contract between agentty (pty_spawn.cpp) and the agentty-supervisor
// program it starts for every local PTY program.
//
// agentty starts the supervisor with posix_spawn (vfork semantics: no copy of
// agentty's page tables, which grow with every retained execution) in a new
// session (setsid), with the PTY slave on fds 0, 1 and 2, a status channel on
// kStatusFd and nothing else open; every signal is blocked and at its default
// disposition. Two modes:
//   agentty-supervisor --supervise PROGRAM [ARGS...]
//     runs PROGRAM at once; its environment and working directory are the
//     program's. kStatusFd is the write end of a pipe. If kStdinFd is open, it
//     is the program's standard input (a file) in place of the terminal.
//   agentty-supervisor --spare
//     a spare started ahead of need: it sets up the terminal, sends its pid
//     on kStatusFd, a socket (a native int32), and forks the program's process
//     at once, which blocks reading one Instruction (program, environment,
//     working directory) from that socket; end of file there means "not
//     needed", and both exit. An fd sent with the instruction's first bytes
//     (SCM_RIGHTS) is the program's standard input in place of the terminal. This takes the
//     supervisor's start-up and the program's fork off an execution's latency: what is left is its
//     exec.
//   agentty-supervisor --spare-maker
//     makes spares by forking itself, cheaper than exec'ing each. kStatusFd
//     is a SOCK_SEQPACKET socket; each request is a one-byte message carrying
//     two fds (SCM_RIGHTS): the new spare's PTY slave and its end of the
//     control socket. There is no reply: the maker sends the spare's pid (the
//     spare is agentty's own child, through CLONE_PARENT) on the spare's
//     control socket, in place of the spare, or -errno there if it cannot
//     fork. It exits at end
//     of file, or with agentty (PR_SET_PDEATHSIG). Its stdio is /dev/null.
//
// The supervisor makes the slave its controlling terminal, becomes a child
// subreaper, forks the program's process, which joins a process group of its
// own and makes it the terminal's foreground group, and exits with the
// program's wait status once the program and its whole group are gone (see
// supervisor_main.cpp).
//
// agentty sends kEndWithProgramSignal to the supervisor (a session's shell:
// PtyProcess::end_with_program) to make the terminal's life the program's:
// once the program has ended, what it left on the terminal is hung up as
// when the terminal itself hangs up. The supervisor blocks every signal and
// takes this one with sigtimedwait, so it is never lost, whenever it comes.
//
// kStatusFd carries fixed-size StatusMessages back, one write() each (atomic
// below PIPE_BUF): the program's pid (sent by the program's process just
// before its exec), then the stage and errno of a failure if there is one. It
// reaches end of file once the program has exec'd (the supervisor closes its
// copy after the fork; the program's closes on exec).
#pragma once

#include <sys/socket.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentty::pty::supervisor {

inline constexpr int kStatusFd = 3;
// `--supervise`: the program's standard input when open (execute's `stdin`
// given as a file, so it is neither echoed nor cut into 4095-byte lines).
inline constexpr int kStdinFd = 4;
inline constexpr const char* kModeFlag = "--supervise";
inline constexpr const char* kSpareFlag = "--spare";
inline constexpr const char* kSpareMakerFlag = "--spare-maker";
inline constexpr const char* kProgramName = "agentty-supervisor";
inline constexpr int kEndWithProgramSignal = SIGUSR1;

enum class Stage : std::int32_t {
  program_pid,
  setsid,
  controlling_tty,
  chdir,
  fork,
  exec,
  stdin_file
};

struct StatusMessage {
  Stage stage;
  std::int32_t value;  // the program's pid, or an errno
};

// What a spare runs. On the wire: a native uint32 length of the payload, then
// the payload "ARGC\0ENVC\0CWD\0ARG...\0ENV...\0" (NUL cannot occur inside an
// argument, a variable or a path, so no escaping is needed).
struct Instruction {
  std::string cwd;  // empty: stay where the spare started
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "KEY=value"
};

// A socket message carrying `data` and kFds fds (SCM_RIGHTS), for sendmsg
// and recvmsg. `header` points into this object, so it is neither copied nor
// moved.
template <std::size_t kFds>
struct FdMessage {
  struct iovec data {};
  alignas(struct cmsghdr) char control[CMSG_SPACE(kFds * sizeof(int))] = {};
  struct msghdr header {};

  FdMessage(void* bytes, std::size_t size) : data{bytes, size} {
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;

  void attach(const int (&fds)[kFds]) {
    struct cmsghdr* rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(rights), fds, sizeof fds);
  }
  // After recvmsg: the fds, if the message carried exactly kFds of them.
  bool attached(int (&fds)[kFds]) {
    struct cmsghdr* rights = CMSG_FIRSTHDR(&header);
    if (!rights || rights->cmsg_level != SOL_SOCKET || rights->cmsg_type != SCM_RIGHTS ||
        rights->cmsg_len != CMSG_LEN(sizeof fds))
      return false;
    std::memcpy(fds, CMSG_DATA(rights), sizeof fds);
    return true;
  }
};

// A spare maker's request: one byte carrying two fds, the new spare's PTY
// slave and its end of the control socket.
struct SpareRequest : FdMessage<2> {
  char byte = 0;
  SpareRequest() : FdMessage<2>(&byte, 1) {}
};

// Far above ARG_MAX; a bigger length is a corrupt or foreign message.
inline constexpr std::uint32_t kMaxInstructionBytes = 64u << 20;

inline std::string encode(const Instruction& instruction) {
  std::string payload = std::to_string(instruction.argv.size()) + '\0' +
                        std::to_string(instruction.env.size()) + '\0' + instruction.cwd + '\0';
  for (const auto& argument : instruction.argv) payload += argument + '\0';
  for (const auto& variable : instruction.env) payload += variable + '\0';
  auto length = static_cast<std::uint32_t>(payload.size());
  std::string message(sizeof length, '\0');
  std::memcpy(message.data(), &length, sizeof length);
  return message + payload;
}

// Parses a payload (without its length prefix); nullopt if malformed.
inline std::optional<Instruction> decode(std::string_view payload) {
  std::vector<std::string> fields;
  while (!payload.empty()) {
    auto end = payload.find('\0');
    if (end == std::string_view::npos) return std::nullopt;
    fields.emplace_back(payload.substr(0, end));
    payload.remove_prefix(end + 1);
  }
  if (fields.size() < 3) return std::nullopt;
  auto count = [](const std::string& text) -> std::optional<std::size_t> {
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != text.npos)
      return std::nullopt;
    return std::stoul(text);
  };
  auto argc = count(fields[0]);
  auto envc = count(fields[1]);
  if (!argc || !envc || *argc == 0 || fields.size() != 3 + *argc + *envc) return std::nullopt;
  Instruction instruction;
  instruction.cwd = fields[2];
  instruction.argv.assign(fields.begin() + 3, fields.begin() + 3 + *argc);
  instruction.env.assign(fields.begin() + 3 + *argc, fields.end());
  return instruction;
}

}  // namespace agentty::pty::supervisor
