// The command lines a connection sends: a PTY channel's (launch_command), and
// SshConnection::run_command, a command on a PTY-less channel of its own for
// probes of the host (remote_input_probe.hpp). That channel is one of
// channels_ but never started: deliver() skips it, the callbacks fill its
// inbox, and the coroutine takes the output once the server has closed it.
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <sstream>

#include "pty/ssh_connection.hpp"

namespace agentty::pty {

namespace asio = boost::asio;

namespace {

// Frees the channel on every way out of run_command, including the
// coroutine's frame being destroyed with the event loop.
struct DetachOnExit {
  std::shared_ptr<SshConnection> connection;
  std::shared_ptr<SshChannelState> channel;
  ~DetachOnExit() { connection->channel_detach(channel); }
};

}  // namespace

std::string SshConnection::launch_command(const SshLaunch& launch,
                                          const SshChannelState& channel) const {
  // The tag marks the command's processes for the host probe: in the shell's
  // command line until it execs the last command, in the environment of
  // everything it runs (remote_input_report.hpp). On the command's line, so
  // the shell's messages keep their line numbers.
  const std::string tag =
      channel.terminal_tag.empty() ? "" : "AGENTTY_TERMINAL=" + channel.terminal_tag;
  if (channel.refused_env.empty())
    return tag.empty() ? *launch.command : "export " + tag + "; " + *launch.command;
  // The server would not set them: let the remote login shell do it.
  std::string command = "exec env";
  if (!tag.empty()) command += " " + tag;
  for (const auto& [name, value] : launch.env) command += " " + name + "=" + shell_quote(value);
  return command + " \"$SHELL\" -c " + shell_quote(*launch.command);
}

asio::awaitable<std::optional<std::string>> SshConnection::login_shell() {
  constexpr std::chrono::seconds kTimeout{5};
  if (!login_shell_) {
    // Run by that shell itself (sshd runs a command with `$SHELL -c`), so
    // bash and zsh say so also where they are /bin/sh (Fedora's sh is
    // bash); a shell without ${...:+} (fish, csh) prints nothing for it.
    auto said = co_await run_command(
        "printf '%s\\n' \"${BASH_VERSION:+bash}${ZSH_VERSION:+zsh}\" \"$SHELL\"", "", kTimeout);
    if (!said) co_return std::nullopt;
    std::istringstream lines(*said);
    std::string running, account;
    std::getline(lines, running);
    std::getline(lines, account);
    if (running.empty() && account.empty()) co_return std::nullopt;
    login_shell_ = running.empty() ? account : running;
  }
  co_return login_shell_;
}

asio::awaitable<std::optional<std::string>> SshConnection::put_temp_file(std::string content) {
  constexpr std::chrono::seconds kTimeout{5};
  auto said = co_await run_command("umask 077 && f=$(mktemp) && cat > \"$f\" && printf '%s' \"$f\"",
                                   std::move(content), kTimeout);
  // A path the typed line can quote as it is.
  if (!said || !said->starts_with('/') || said->find_first_of("'\n") != std::string::npos)
    co_return std::nullopt;
  co_return std::move(*said);
}

asio::awaitable<void> SshConnection::remove_temp_file(std::string path) {
  constexpr std::chrono::seconds kTimeout{5};
  co_await run_command("rm -f -- " + shell_quote(path), "", kTimeout);
}

std::size_t SshConnection::open_channel_count() const {
  return static_cast<std::size_t>(std::count_if(
      channels_.begin(), channels_.end(), [](const auto& channel) { return channel->opened; }));
}

asio::awaitable<SshExpected<std::string>> SshConnection::run_command(
    std::string command, std::string input, std::chrono::milliseconds timeout) {
  auto self = shared_from_this();
  const auto deadline = Clock::now() + timeout;
  if (state_ != State::ready) co_return channel_error(SSH_ERROR, "run a command");
  SshLaunch launch;
  launch.command = std::move(command);
  launch.pty = false;
  auto channel = new_channel_state(launch);
  channel->probe = true;
  DetachOnExit detach{self, channel};
  auto launched = co_await launch_channel(channel, launch, deadline);
  if (!launched) co_return launched.failure();
  channel->outbox = std::move(input);
  bool eof_sent = false;
  for (;;) {
    if (state_ != State::ready) co_return channel_error(SSH_ERROR, "run a command");
    after_call(false);  // writes the input as the window allows
    if (!eof_sent && channel->outbox.empty() && channel->channel != nullptr &&
        !channel->remote_closed) {
      ssh_channel_send_eof(channel->channel);  // `sh -s` reads its script up to here
      eof_sent = true;
      after_call(false);
    }
    if (channel->remote_closed) break;
    if (Clock::now() >= deadline) co_return channel_error(SSH_AGAIN, "finish a command");
    co_await wait_progress(deadline);
  }
  co_return std::move(channel->inbox);
}

}  // namespace agentty::pty
