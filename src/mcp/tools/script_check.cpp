#include "mcp/tools/script_check.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/errno_message.hpp"
#include "base/fd_io.hpp"
#include "base/private_dir.hpp"
#include "base/random_id.hpp"
#include "base/unique_fd.hpp"

extern char** environ;

namespace agentty::mcp::tools {

namespace {

// Why the script could not be kept, and what to do (a full disk, a
// read-only state dir).
std::string unwritable(const std::filesystem::path& dir, const std::string& cause) {
  return "cannot write the script file in " + dir.string() + ": " + cause +
         ". Free space there or make it writable, or restart agentty with another --state-dir "
         "(command and argv need no file there).";
}

Expected<std::shared_ptr<const OwnedPath>> write_script(const std::string& script,
                                                        const std::filesystem::path& state_dir,
                                                        const std::string& name_prefix) {
  auto dir = (state_dir.empty() ? std::filesystem::temp_directory_path() : state_dir) / "scripts";
  if (state_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
  } else if (auto made = ensure_private_dir(dir); !made) {
    return make_error(unwritable(dir, made.error()));
  }
  auto path = dir / (name_prefix + "script-" + random_hex(8) + ".sh");
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd) return make_error(unwritable(dir, errno_message("open")));
  auto file = std::make_shared<const OwnedPath>(path);  // removed on any error below
  if (auto written = write_all(fd.get(), script); !written)
    return make_error(unwritable(dir, written.error()));
  return file;
}

// The checking bash, killed and reaped if the check is left before it
// ended (the call was cancelled).
class CheckingProcess {
 public:
  explicit CheckingProcess(pid_t pid) : pid_(pid) {}
  CheckingProcess(const CheckingProcess&) = delete;
  CheckingProcess& operator=(const CheckingProcess&) = delete;
  ~CheckingProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    wait();
  }
  // Its wait status. Called once its output has ended: it is exiting.
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = 0;
    return status;
  }

 private:
  pid_t pid_;
};

}  // namespace

boost::asio::awaitable<Expected<std::shared_ptr<const OwnedPath>>> check_bash_syntax(
    const std::string& script, const std::filesystem::path& state_dir, const std::string& bash,
    const std::string& name_prefix) {
  auto file = write_script(script, state_dir, name_prefix);
  if (!file) co_return file;
  const std::string path = file.value()->path().string();
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) co_return make_error(errno_message("pipe2"));
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  const char* argv[] = {bash.c_str(), "-n", path.c_str(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, bash.c_str(), &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) co_return make_error(process_start_message("posix_spawn bash", rc));
  CheckingProcess checking(pid);
  write_end.reset();
  // Read on the loop: a large script takes bash -n most of a second, and
  // the loop serves every other call and viewer meanwhile.
  boost::asio::posix::stream_descriptor output(co_await boost::asio::this_coro::executor,
                                               read_end.release());
  std::string diagnostics;
  char buffer[4096];
  for (;;) {
    auto [ec, n] = co_await output.async_read_some(
        boost::asio::buffer(buffer), boost::asio::as_tuple(boost::asio::use_awaitable));
    if (ec == boost::asio::error::operation_aborted)
      co_return make_error("the call was cancelled while bash -n checked it; nothing was run.");
    if (ec) break;  // end of file: bash is done
    if (diagnostics.size() < 8192) diagnostics.append(buffer, n);
  }
  int status = checking.wait();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) co_return file;
  // bash names the temp file; show the line numbers without it.
  for (std::size_t at; (at = diagnostics.find(path)) != std::string::npos;)
    diagnostics.replace(at, path.size(), "script");
  co_return make_error(
      "bash -n found a syntax error; nothing was run. Fix the script and try again:\n" +
      diagnostics);
}

std::string shell_quote_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    out += '\'';
    for (char c : arg) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

}  // namespace agentty::mcp::tools
