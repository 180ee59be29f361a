// Session channels and the server's cap on them (OpenSSH: MaxSessions per
// connection, 10 by default; hardened servers set 1 or 2). Every execution
// and session on a host shares one connection, and so does the host probe
// (remote_input_probe.hpp), which holds a channel for ~100 ms at a time.
#include "pty/ssh_connection.hpp"

#include <algorithm>

namespace agentty::pty {

namespace asio = boost::asio;

namespace {

constexpr int kSlotAttempts = 3;  // opens after a refusal

// Counts an opener waiting for a probe's channel, on every way out.
struct SlotWait {
  std::size_t& waiters;
  explicit SlotWait(std::size_t& count) : waiters(count) { ++waiters; }
  ~SlotWait() { --waiters; }
  SlotWait(const SlotWait&) = delete;
  SlotWait& operator=(const SlotWait&) = delete;
};

}  // namespace

// Opening counts too: the server may have granted it already (the reply is
// read by whichever libssh call polls first; `opened` is set only when the
// probe's own coroutine resumes).
bool SshConnection::probe_channel_open() const {
  return std::any_of(channels_.begin(), channels_.end(), [](const auto& channel) {
    return channel->probe && channel->channel != nullptr;
  });
}

// A refused open is asked again, a few times, each time on a fresh channel
// (a refused one cannot be reused), because the slot it needs may be about
// to free up:
// - a probe of the host holds a channel for ~100 ms: a person's or an
//   agent's command must not fail for a look at the host. The open waits for
//   the probe's channel to go, and no new probe starts meanwhile
//   (slot_wanted);
// - OpenSSH frees a closed channel's slot only after the batch of packets
//   that closed it, so an open sent right behind a close (a command that just
//   ended, that probe) can be refused. Each refusal is the server's answer,
//   so by the next attempt it has passed that point.
// A server that is really full refuses every attempt: kSlotAttempts round
// trips, then session_refused says why.
asio::awaitable<int> SshConnection::open_session(std::shared_ptr<SshChannelState> channel,
                                                 Clock::time_point deadline) {
  auto self = shared_from_this();
  auto open = [&] {
    return retry_channel(
        [&channel] {
          return channel->channel ? ssh_channel_open_session(channel->channel) : SSH_ERROR;
        },
        deadline);
  };
  int rc = co_await open();
  if (rc != SSH_ERROR || channel->probe) co_return rc;  // a probe gives way instead
  SlotWait wait(slot_waiters_);
  for (int attempt = 0; attempt < kSlotAttempts && rc == SSH_ERROR; ++attempt) {
    while (state_ == State::ready && probe_channel_open() && Clock::now() < deadline)
      co_await wait_progress(deadline);
    if (state_ != State::ready || probe_channel_open() || channel->channel == nullptr) break;
    free_channel(*channel);
    channel->channel = ssh_channel_new(session_);
    if (channel->channel == nullptr) co_return SSH_ERROR;
    install_callbacks(channel);
    rc = co_await open();
  }
  co_return rc;
}

SshError SshConnection::session_refused(int rc, const SshChannelState& refused) {
  auto error = channel_error(rc, "open a session channel");
  auto open = std::count_if(channels_.begin(), channels_.end(), [&](const auto& channel) {
    return channel.get() != &refused && channel->opened && channel->channel != nullptr &&
           !channel->probe;
  });
  // Servers cap channels per connection, and this one is shared by them all.
  if (state_ == State::ready && rc == SSH_ERROR && open > 0) {
    error.message += "; " + std::to_string(open) +
                     (open == 1 ? " other channel is" : " other channels are") +
                     " open on this connection, and SSH servers cap them "
                     "(OpenSSH: MaxSessions, 10 by default): wait for or stop one (ps lists "
                     "them, close ends a session) and try again, or raise MaxSessions on the host";
  }
  return error;
}

}  // namespace agentty::pty
