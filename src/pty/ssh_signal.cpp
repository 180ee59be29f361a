// The signal half of SshConnection's channels: signals as SSH requests, or
// as their keys through the remote terminal where the server refuses them (a
// root login on OpenSSH), and the hang-up that closing a channel is, with a
// check that the host heard it.
#include <spdlog/spdlog.h>

#include <csignal>

#include "pty/exit_status.hpp"
#include "pty/ssh_connection.hpp"

namespace agentty::pty {

namespace asio = boost::asio;

void SshConnection::channel_signal(const std::shared_ptr<SshChannelState>& channel, int signo) {
  if (!channel->launched && !channel->remote_closed) {
    // Nothing runs remotely yet (waiting for the login, or being opened):
    // the signal ends the wait.
    channel->exit_signal = signo;
    channel->pending_launch.reset();
    return end_channel(*channel, {});
  }
  if (channel->channel == nullptr || channel->remote_closed) return;
  if (signals_refused()) return signal_through_terminal(channel, signo);
  const std::string name = signal_name(signo);
  if (!name.starts_with("SIG")) {
    spdlog::warn("ssh: cannot send unnamed {} over SSH", name);
    return;
  }
  ssh_channel_request_send_signal(channel->channel, name.c_str() + 3);  // "INT", no "SIG"
  after_call(false);
  // A server may ignore a signal request (it has no reply). A hang-up is what
  // closing the channel does to the remote terminal (its session gets
  // SIGHUP), and SIGKILL cannot be refused, so both also close the channel.
  if (signo == SIGKILL || signo == SIGHUP) channel_close(channel);
}

bool SshConnection::signals_refused() const {
  // OpenSSH's sshd keeps no privilege separation after a root login, and
  // without it refuses every signal request ("session signalling requires
  // privilege separation"). description_ starts with the login's user.
  return description_.starts_with("root@");
}

std::optional<std::string> SshConnection::interrupt_key(int signo) {
  if (signo == SIGINT) return "\x03";   // ctrl-c
  if (signo == SIGQUIT) return "\x1c";  // ctrl-\ (backslash)
  return std::nullopt;
}

void SshConnection::signal_through_terminal(const std::shared_ptr<SshChannelState>& channel,
                                            int signo) {
  // The remote terminal sends SIGINT and SIGQUIT to its foreground job when
  // their keys arrive, as for a person at ssh; anything else can only be the
  // hang-up that closing the channel is (SIGHUP to the terminal's session).
  if (auto key = interrupt_key(signo)) return channel_write(channel, *key);
  channel_close(channel);
}

std::optional<std::string> SshConnection::signal_note(int signo) const {
  if (!signals_refused()) return std::nullopt;
  const std::string name = signal_name(signo);
  const std::string why =
      "on a root login OpenSSH refuses signal requests (sshd keeps no privilege separation "
      "after a root login; its log says \"session signalling requires privilege "
      "separation\")";
  if (interrupt_key(signo)) {
    return name + " was sent as its key (" + (signo == SIGINT ? "ctrl-c" : "ctrl-\\") +
           ") through the remote terminal, which signals the foreground job unless it reads "
           "raw keys: " +
           why + "; the hang-up (SIGHUP) follows after force_after_ms if it still runs.";
  }
  if (signo == SIGHUP || signo == SIGKILL) return std::nullopt;  // the hang-up, as anywhere
  return name + " cannot reach the program: " + why +
         ". Its terminal was hung up at once instead (SIGHUP to its session, as when ssh "
         "disconnects), which was the next stage. Log in as another user for signals, or "
         "write keys=[\"ctrl-c\"] to interrupt.";
}

void SshConnection::channel_close(const std::shared_ptr<SshChannelState>& channel) {
  if (!channel->launched) return channel_signal(channel, SIGHUP);
  if (channel->channel == nullptr || channel->closed_locally) return;
  channel->closed_locally = true;
  ssh_channel_close(channel->channel);
  after_call(false);
  if (state_ == State::ready) confirm_hangup(channel);
}

void SshConnection::confirm_hangup(const std::shared_ptr<SshChannelState>& channel) {
  // A live server answers a keepalive at once, even while the program
  // outlives the hang-up (it ignores SIGHUP): silence after one means the
  // link hung, and the keepalives would take keepalive * keepalive_max_missed
  // (15 s by default) to say so. A stop or timeout that ends in a hang-up is
  // asked to end the program, so the channel ends here, saying why, instead.
  send_keepalive();
  after_call(false);
  const std::uint64_t received = counter_.in_bytes;
  auto timer = std::make_shared<asio::steady_timer>(io_, kHangupAnswerWindow);
  timer->async_wait([timer, received, weak_self = weak_from_this(),
                     weak_channel = std::weak_ptr(channel)](boost::system::error_code error) {
    auto self = weak_self.lock();
    auto channel = weak_channel.lock();
    if (error || !self || !channel || self->state_ != State::ready) return;
    if (channel->finished || channel->remote_closed || channel->detached) return;
    if (self->counter_.in_bytes != received) return;  // the host answers: not hung
    self->end_channel(
        *channel,
        "the link to " + self->description_ + " is silent: nothing came back within " +
            std::to_string(kHangupAnswerWindow.count()) +
            " s of the hang-up that ends the program (sent with a keepalive, which a live server "
            "answers at once), so the execution was ended here without the program's exit "
            "status. The host hangs the program up if the link comes back; until the "
            "keepalives give the connection up, a new execute on this host may wait for it.");
  });
}

}  // namespace agentty::pty
