// SshdFixture: a real OpenSSH sshd for the SSH backend's tests and benchmark.
//
// Starts `/usr/sbin/sshd -D -e` on 127.0.0.1 at a free port, in a fresh temp
// dir holding a generated ed25519 host key, an authorized client key, a
// second (unauthorized) client key, a known_hosts file pre-seeded with
// `[127.0.0.1]:PORT <host key>`, and an empty client ssh config (so the
// user's ~/.ssh/config is never read). Readiness is sshd's own "Server
// listening on" line, read from its stderr by a thread that keeps draining
// the pipe (an undrained pipe would block sshd's logging) and keeps the log
// for failure messages. Logins are as login_user(), the user running the
// tests: sshd started by root serves root (/run/sshd is created if missing,
// and root must not be locked: '!' in /etc/shadow refuses even keys with
// UsePAM no, so ensure_root_unlocked() sets '*' only in that case); sshd
// started by another user serves only that user, and can give a login its
// terminal only where unusable_reason() finds no problem. Sessions get
// SHLVL=1 so the remote bash does not source ~/.bashrc for every exec (see
// write_config).
// Destruction kills sshd and every per-connection sshd below it.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace agentty::pty::test_util {

struct SshdConfig {
  bool password_auth = false;         // offer password login
  bool keyboard_interactive = false;  // offer keyboard-interactive login (through PAM)
  bool use_pam = false;               // UsePAM yes (keyboard-interactive needs it)
  std::string extra = {};             // more sshd_config lines
};

class SshdFixture {
 public:
  using Config = SshdConfig;

  SshdFixture() : SshdFixture(Config{}) {}
  explicit SshdFixture(Config config) : config_(config) {
    char pattern[] = "/tmp/agentty-sshd-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    if (::geteuid() == 0) {  // privilege separation's directory; sshd run by a user has none
      ::mkdir("/run/sshd", 0755);
      ensure_root_unlocked();
    }
    keygen(dir_ + "/hostkey");
    keygen(client_key());
    keygen(wrong_key());
    std::filesystem::copy_file(client_key() + ".pub", dir_ + "/authorized_keys");
    write_file(ssh_config(), "");
    write_config();
    ::unsetenv("SSH_AUTH_SOCK");  // no agent: keys are exactly what a test names
    // free_port() lets go of its port before sshd binds it: another process
    // can take it meanwhile (sshd then exits), so a few ports are tried.
    for (int attempt = 1;; ++attempt) {
      port_ = free_port();
      write_file(known_hosts(), known_hosts_line(read_file(dir_ + "/hostkey.pub")));
      try {
        start();
        return;
      } catch (const std::runtime_error&) {
        const std::string said = log();
        const bool taken = said.find("Address already in use") != std::string::npos ||
                           said.find("Cannot bind") != std::string::npos;
        stop();
        if (!taken || attempt == 5) throw;
      }
    }
  }

  ~SshdFixture() {
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  SshdFixture(const SshdFixture&) = delete;
  SshdFixture& operator=(const SshdFixture&) = delete;

  // The account the tests log in as: sshd run by anyone but root logs in
  // only its own user.
  static std::string login_user() {
    const passwd* entry = ::getpwuid(::geteuid());
    return entry ? entry->pw_name : "root";
  }

  // Why sshd cannot serve terminal logins here, or nullopt. sshd run by a
  // user other than root gives a login its terminal with chown(pty, user,
  // group tty), which the kernel allows only when the pty is in group tty
  // already (/dev/pts mounted with gid=5, as standard) or the user is in
  // that group; containers often mount devpts without gid=.
  static std::optional<std::string> unusable_reason() {
    if (::access("/usr/sbin/sshd", X_OK) != 0) return "needs /usr/sbin/sshd (openssh-server)";
    if (::geteuid() == 0) return std::nullopt;
    const group* tty = ::getgrnam("tty");
    if (tty == nullptr) return std::nullopt;  // sshd keeps the user's own group
    std::vector<gid_t> groups(static_cast<std::size_t>(std::max(::getgroups(0, nullptr), 0)));
    if (::getgroups(static_cast<int>(groups.size()), groups.data()) >= 0)
      for (gid_t gid : groups)
        if (gid == tty->gr_gid) return std::nullopt;
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    struct stat slave {};
    const bool stated = master >= 0 && ::grantpt(master) == 0 && ::unlockpt(master) == 0 &&
                        ::stat(::ptsname(master), &slave) == 0;
    if (master >= 0) ::close(master);
    if (stated && slave.st_gid == tty->gr_gid) return std::nullopt;
    return "sshd run by " + login_user() +
           " cannot give a login its terminal: new ptys are not in group tty (/dev/pts is "
           "mounted without gid=" +
           std::to_string(tty->gr_gid) + ") and " + login_user() +
           " is not in group tty; run as root";
  }

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string client_key() const { return dir_ + "/client"; }
  std::string wrong_key() const { return dir_ + "/wrong"; }
  std::string known_hosts() const { return dir_ + "/known_hosts"; }
  std::string ssh_config() const { return dir_ + "/ssh_config"; }
  std::string host_public_key() const { return read_file(dir_ + "/hostkey.pub"); }
  std::string known_hosts_line(const std::string& public_key) const {
    return "[127.0.0.1]:" + std::to_string(port_) + " " + public_key;
  }
  // "SHA256:..." of the host key, as ssh-keygen prints it.
  std::string host_fingerprint() const {
    std::string line = run_output("ssh-keygen -l -E sha256 -f " + dir_ + "/hostkey.pub");
    auto start = line.find("SHA256:");
    return line.substr(start, line.find(' ', start) - start);
  }
  std::string log() {
    std::lock_guard lock(mutex_);
    return log_;
  }

  // Signals sshd and every process below it that is an sshd (not the
  // commands they run): SIGKILL simulates a crash, SIGSTOP a dead network.
  void signal_sshd_tree(int signo) {
    for (int pid : sshd_tree()) ::kill(pid, signo);
  }
  // Signals only the per-connection sshds: SIGSTOP hangs the links made so
  // far while new connections are still served.
  void signal_connection_servers(int signo) {
    for (int pid : sshd_tree())
      if (pid != pid_) ::kill(pid, signo);
  }

  // Kills everything and starts sshd again on the same port and keys.
  void restart() {
    stop();
    start();
  }

  void start() {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    std::string config_path = dir_ + "/sshd_config";
    std::string port_text = std::to_string(port_);
    pid_ = ::fork();
    if (pid_ == 0) {
      // A test process that is killed (a timeout, ctrl-c) takes its sshd
      // with it instead of leaving it listening. start() runs on the test's
      // main thread, whose end is the process's.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      ::dup2(pipe_fds[1], 2);
      ::execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-f", config_path.c_str(), "-D", "-e", "-p",
              port_text.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    {
      std::lock_guard lock(mutex_);
      listening_ = exited_ = false;
      log_.clear();
    }
    reader_ = std::thread([this, fd = pipe_fds[0]] { drain(fd); });
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, std::chrono::seconds(30), [&] { return listening_ || exited_; }) ||
        !listening_)
      throw std::runtime_error("sshd did not start listening:\n" + log_);
  }

  void stop() {
    if (pid_ <= 0) return;
    for (int pid : sshd_tree()) {
      ::kill(pid, SIGKILL);
      ::kill(pid, SIGCONT);
    }
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    if (reader_.joinable()) reader_.join();  // EOF once every sshd is gone
  }

  // What a shell command printed on stdout.
  static std::string run_output(const std::string& command) {
    std::string output;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
      char buffer[512];
      while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
      ::pclose(pipe);
    }
    return output;
  }

 private:
  static void keygen(const std::string& path) {
    if (std::system(("ssh-keygen -q -t ed25519 -N '' -C agentty-test -f " + path).c_str()) != 0)
      throw std::runtime_error("ssh-keygen failed for " + path);
  }

  static void ensure_root_unlocked() {
    if (::geteuid() != 0) return;
    std::ifstream shadow("/etc/shadow");
    std::string line;
    while (std::getline(shadow, line))
      if (line.rfind("root:!", 0) == 0) {
        if (std::system("usermod -p '*' root") != 0)
          throw std::runtime_error("usermod -p '*' root failed");
        return;
      }
  }

  // A port free when tried, below the kernel's ephemeral range (32768 and
  // up by default): a port from bind(0) is one the connections every process
  // on the machine opens also take theirs from, so one could take it before
  // sshd binds it, or between a restart()'s stop and start.
  static int free_port() {
    std::random_device random;
    for (;;) {
      const int port = 20000 + static_cast<int>(random() % 12000);
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(static_cast<std::uint16_t>(port));
      const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
      ::close(fd);
      if (free) return port;
    }
  }

  static void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  static std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  void write_config() const {
    auto yes_no = [](bool on) { return std::string(on ? "yes" : "no"); };
    write_file(dir_ + "/sshd_config",
               "ListenAddress 127.0.0.1\n"
               "HostKey " +
                   dir_ +
                   "/hostkey\n"
                   "PidFile " +
                   dir_ +
                   "/sshd.pid\n"
                   "AuthorizedKeysFile " +
                   dir_ +
                   "/authorized_keys\n"
                   "UsePAM " +
                   yes_no(config_.use_pam) +
                   "\nStrictModes no\nPubkeyAuthentication yes\n"
                   "PasswordAuthentication " +
                   yes_no(config_.password_auth) + "\nKbdInteractiveAuthentication " +
                   yes_no(config_.keyboard_interactive) + "\nPermitRootLogin " +
                   (config_.password_auth ? "yes" : "prohibit-password") +
                   "\n"
                   "MaxSessions 64\nMaxStartups 64\n"
                   // bash sources ~/.bashrc even for `bash -c CMD` when run by
                   // sshd at SHLVL 0 (Debian's SSH_SOURCE_BASHRC); this
                   // machine's root .bashrc runs `pyenv init`, 1-9 s per exec.
                   // SHLVL=1 skips it, so tests time our code, not that rc.
                   "SetEnv SHLVL=1\n" +
                   config_.extra);
  }

  void drain(int fd) {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
      std::lock_guard lock(mutex_);
      log_.append(buffer, static_cast<std::size_t>(n));
      if (log_.find("Server listening on") != std::string::npos) listening_ = true;
      ready_.notify_all();
    }
    ::close(fd);
    std::lock_guard lock(mutex_);
    exited_ = true;
    ready_.notify_all();
  }

  // sshd's pid and every descendant whose command name is sshd.
  std::vector<int> sshd_tree() const {
    std::vector<int> tree{pid_};
    for (std::size_t i = 0; i < tree.size(); ++i)
      for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string stat_line;
        std::getline(stat, stat_line);
        auto close = stat_line.rfind(')');
        if (close == std::string::npos) continue;
        std::string comm =
            stat_line.substr(stat_line.find('(') + 1, close - stat_line.find('(') - 1);
        std::istringstream rest(stat_line.substr(close + 2));
        char state;
        int parent;
        rest >> state >> parent;
        if (parent == tree[i] && comm == "sshd") tree.push_back(std::stoi(name));
      }
    return tree;
  }

  Config config_;
  std::string dir_;
  int port_ = 0;
  int pid_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::string log_;
  bool listening_ = false;
  bool exited_ = false;
};

}  // namespace agentty::pty::test_util
