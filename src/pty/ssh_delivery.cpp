// SshConnection: delivering each channel's output, at the pace its reader
// sets (SshChannel::pause_output).
//
// Flow control is the SSH window's. libssh appends a channel's data to the
// channel's buffer, hands the whole buffer to the data callback and drops
// what the callback takes; it sends a WINDOW_ADJUST only once the window
// plus what it buffers falls below half of WINDOWBASE (1.28 MB). So a
// callback that takes nothing (the reader paused, or the inbox not yet
// handed out) leaves the bytes in libssh, the window closes once the
// server has filled it, and the remote program blocks writing, as on a
// slow terminal. Everything else on the connection flows: other channels'
// data, keepalive replies, exit reports and CLOSE (recorded, but delivered
// only after the bytes before them).
//
// Resuming reads the held bytes out of libssh (ssh_channel_read_nonblocking,
// which reopens the window), all at once (take_held says why), and the
// inbox goes to the reader in its output slice until it pauses. libssh
// will not hand its buffer to the callback again until the next packet,
// which a closed window never brings, so the read is how the bytes come
// out. held mirrors that buffer, so a connection that fails meanwhile, or a
// channel we closed (libssh then refuses reads), still loses nothing.
#include <boost/asio/post.hpp>

#include <algorithm>
#include <csignal>
#include <limits>
#include <memory>

#include "pty/ssh_connection.hpp"

namespace agentty::pty {

namespace asio = boost::asio;

namespace {

ExitStatus final_status(SshChannelState& state) {
  if (state.failure_reason) return ExitStatus::exited(255);
  if (state.exit_signal) return ExitStatus::killed(*state.exit_signal);
  if (state.exit_code) return ExitStatus::exited(*state.exit_code);
  if (state.closed_locally) return ExitStatus::killed(SIGHUP);  // we hung up its terminal
  state.failure_reason = "the server closed the channel without an exit status";
  return ExitStatus::exited(255);
}

// The most one on_output call gets: the reader's output slice (it stops
// within one of the point where it pauses), or everything after our hang-up
// (what is left then goes at once, with the exit).
std::size_t delivery_slice(const SshChannelState& channel) {
  return channel.closed_locally ? std::string::npos : channel.output_slice;
}

}  // namespace

// The data callback: `data` is libssh's whole buffer for the stream, which
// starts with the bytes left there before (held, for stdout). Returns what
// libssh may drop.
int SshChannelState::take_data(const char* data, std::uint32_t len, bool is_stderr) {
  if (is_stderr) {
    // A PTY merges stderr into the terminal; only probes' channels (no PTY)
    // send it, and a probe wants stdout alone. Never held: not the flood.
    if (!probe) inbox.append(data, len);
    return static_cast<int>(len);
  }
  // While the inbox is still being handed out (the reader paused within
  // it), more goes to libssh too: taken here, it would reopen the window
  // and the inbox would grow by up to a window at every resume. (A probe's
  // inbox is its whole answer, read at its end.)
  const bool hold = paused || (!inbox.empty() && !probe);
  if (!hold && held.empty()) {
    inbox.append(data, len);
    return static_cast<int>(len);
  }
  if (len > held.size()) held.append(data + held.size(), len - held.size());
  if (hold) return 0;
  inbox.append(held, held_taken);  // the buffer's start: bytes held before
  held.clear();
  held_taken = 0;
  return static_cast<int>(len);
}

void SshConnection::channel_pause(const std::shared_ptr<SshChannelState>& channel, bool paused) {
  if (channel->paused == paused) return;
  channel->paused = paused;
  // What came meanwhile goes out on the next turn of the loop, not inside
  // the caller's own call; a paused channel just stops taking data.
  if (!paused) schedule_deliver();
}

// Moves everything libssh holds for `channel` into its inbox; the read
// tells libssh to drop it and reopen the window. All of it at once: after a
// read libssh tops the window up to its full size (WINDOWBASE, ~1.3 MB)
// without counting what it still buffers, so a read of a slice would let
// another window in behind the held bytes at every resume, and a paused
// flood would pile up without bound (seen: minutes of catch-up, calls
// timing out). deliver_slices hands the inbox out at the reader's pace.
void SshConnection::take_held(SshChannelState& channel) {
  const auto want = static_cast<std::uint32_t>(
      std::min<std::size_t>(channel.held.size(), std::numeric_limits<std::uint32_t>::max()));
  int read = SSH_ERROR;
  if (channel.channel != nullptr && state_ == State::ready) {
    // Only to make libssh drop the bytes: held has them already.
    const auto scratch = std::make_unique_for_overwrite<char[]>(want);
    read = ssh_channel_read_nonblocking(channel.channel, scratch.get(), want, 0);
  }
  if (read > 0) {  // libssh dropped held's first `read` bytes
    const auto dropped = static_cast<std::size_t>(read);
    if (dropped > channel.held_taken)
      channel.inbox.append(channel.held, channel.held_taken, dropped - channel.held_taken);
    channel.held.erase(0, dropped);
    channel.held_taken -= std::min(channel.held_taken, dropped);
    return;
  }
  // A channel we closed, or a connection that failed, refuses the read: the
  // copy is the data, and libssh will offer the same bytes again.
  channel.inbox.append(channel.held, channel.held_taken);
  channel.held_taken = channel.held.size();
}

// Hands the inbox to the reader in slices of at most delivery_slice(), until
// it pauses; the rest goes back in front of what arrived meanwhile. (One
// copy out and at most one back: a window's worth of inbox, ~1.3 MB, cut
// from its front slice by slice was a quadratic memmove.)
void SshConnection::deliver_slices(SshChannelState& channel) {
  const std::string pending = std::exchange(channel.inbox, {});
  std::size_t at = 0;
  while (at < pending.size()) {
    const auto slice = std::string_view(pending).substr(at, delivery_slice(channel));
    at += slice.size();
    if (channel.events.on_output) channel.events.on_output(slice);
    if (channel.paused || channel.detached || channel.finished) break;
  }
  if (at < pending.size()) channel.inbox.insert(0, pending, at);
}

void SshConnection::schedule_deliver() {
  if (deliver_posted_) return;
  deliver_posted_ = true;
  asio::post(io_, [self = shared_from_this()] {
    self->deliver_posted_ = false;
    if (self->state_ == State::ready)
      self->after_call();
    else
      self->deliver();
  });
}

void SshConnection::deliver() {
  if (delivering_) return;  // the outer loop picks up what nested calls recorded
  delivering_ = true;
  for (bool again = true; again;) {
    again = false;
    auto snapshot = channels_;
    for (auto& channel : snapshot) {
      if (channel->detached || !channel->started || channel->finished) continue;
      if (channel->login_done) {
        channel->login_done = false;
        if (auto done = std::exchange(channel->on_login_done, nullptr)) done();
        again = true;
        continue;
      }
      // Paused: nothing goes out, and the end waits behind the bytes before it.
      // Not after our hang-up (a stop): then the stop would wait for up to a
      // window of slow bytes at the screen model's pace (40 s seen); they go
      // at once, and the screen catches up on them at the exit, as before.
      if (channel->paused && !channel->closed_locally &&
          !(channel->inbox.empty() && channel->held.size() == channel->held_taken))
        continue;
      if (channel->inbox.empty() && channel->held.size() > channel->held_taken) take_held(*channel);
      if (!channel->inbox.empty()) {
        deliver_slices(*channel);
        again = true;
        continue;  // output that arrived meanwhile goes before the exit
      }
      if (!channel->remote_closed) continue;
      channel->finished = true;
      free_channel(*channel);
      std::erase(channels_, channel);
      auto on_exit = std::exchange(channel->events, {}).on_exit;
      if (on_exit) on_exit(final_status(*channel));
      again = true;
    }
  }
  delivering_ = false;
}

}  // namespace agentty::pty
