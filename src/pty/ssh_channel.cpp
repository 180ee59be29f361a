// SshChannel, and the per-channel half of SshConnection: opening a channel,
// the libssh callbacks that record its events, writes, and delivery.
#include "pty/ssh_channel.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <algorithm>

#include "base/random_id.hpp"
#include "pty/command_end_marker.hpp"
#include "pty/remote_input_probe.hpp"
#include "pty/ssh_connection.hpp"

namespace agentty::pty {

namespace asio = boost::asio;

namespace {

// The callbacks only record; user code runs later, from deliver().
int on_data(ssh_session, ssh_channel, void* data, uint32_t len, int is_stderr, void* user) {
  return static_cast<SshChannelState*>(user)->take_data(static_cast<const char*>(data), len,
                                                        is_stderr != 0);
}

void on_exit_status(ssh_session, ssh_channel, int status, void* user) {
  static_cast<SshChannelState*>(user)->exit_code = status;
}

void on_exit_signal(ssh_session, ssh_channel, const char* name, int, const char*, const char*,
                    void* user) {
  auto* state = static_cast<SshChannelState*>(user);
  if (auto signo = signal_number(name ? name : ""))
    state->exit_signal = *signo;
  else
    state->exit_code = 255;  // a signal we cannot name locally
}

void on_close(ssh_session, ssh_channel, void* user) {
  static_cast<SshChannelState*>(user)->remote_closed = true;
}

bool valid_env_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// agentty's own locale (LANG, LC_*), as OpenSSH's client sends it (Debian's
// and RHEL's ssh_config: SendEnv LANG LC_*): where the server accepts it
// (their sshd's AcceptEnv LANG LC_*), programs on the host speak UTF-8 as in
// a person's ssh session, not the C locale. `given`: names the call set.
std::vector<std::pair<std::string, std::string>> locale_variables(
    const std::map<std::string, std::string>& given) {
  std::vector<std::pair<std::string, std::string>> locale;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    std::string name(text.substr(0, equals));
    if ((name != "LANG" && !name.starts_with("LC_")) || name == kLoginShellTagVariable ||
        given.contains(name) || !valid_env_name(name))
      continue;
    locale.emplace_back(std::move(name), std::string(text.substr(equals + 1)));
  }
  return locale;
}

// Marks a failure that came before the command or shell was requested.
SshError not_started(SshError error) {
  error.nothing_started = true;
  return error;
}

}  // namespace

// ---- SshChannel ---------------------------------------------------------------

SshChannel::SshChannel(std::shared_ptr<SshConnection> connection,
                       std::shared_ptr<SshChannelState> state)
    : connection_(std::move(connection)),
      state_(std::move(state)),
      probe_(std::make_shared<RemoteInputProbe>(connection_, state_)) {}

SshChannel::~SshChannel() {
  probe_->detach();
  connection_->channel_detach(state_);
}

void SshChannel::start(ChannelEvents events) {
  if (state_->marks_command_end) events = taking_out_command_end(std::move(events));
  // Output starts a new quiet period for the probe: older answers are void.
  events.on_output = [probe = probe_,
                      output = std::move(events.on_output)](std::string_view bytes) {
    probe->note_activity();
    if (output) output(bytes);
  };
  state_->events = std::move(events);
  connection_->channel_started(state_);
}

// The events passed on without the command's end marker, noted in
// command_end_ instead; what it held back goes out before the exit.
ChannelEvents SshChannel::taking_out_command_end(ChannelEvents events) {
  struct Passing {
    CommandEndFilter filter;
    std::string scratch;
    std::function<void(std::string_view)> output;
  };
  auto passing = std::make_shared<Passing>();
  passing->output = std::move(events.on_output);
  command_end_ = std::shared_ptr<const CommandEndFilter>(passing, &passing->filter);
  events.on_output = [passing](std::string_view bytes) {
    const auto passed = passing->filter.filter(bytes, passing->scratch);
    if (!passed.empty() && passing->output) passing->output(passed);
  };
  events.on_exit = [passing, on_exit = std::move(events.on_exit)](ExitStatus status) {
    if (const auto held = passing->filter.flush(); !held.empty() && passing->output)
      passing->output(held);
    if (on_exit) on_exit(status);
  };
  return events;
}

std::vector<std::string> SshChannel::left_running() const {
  if (state_->finished || !command_end_ || !command_end_->seen()) return {};
  return {"its jobs started with & (on a host their names are not read)"};
}

void SshChannel::write(std::string_view bytes) {
  probe_->note_activity();
  connection_->channel_write(state_, bytes);
}
InputState SshChannel::input_state() const {
  if (state_->finished || state_->awaiting_login) return InputState::busy;
  return probe_->state();
}
void SshChannel::identify_session_shell(int pid) {
  probe_->set_session_leader(pid);
}
bool SshChannel::resume_foreground() {
  return !state_->finished && probe_->resume();
}
bool SshChannel::input_state_pending() const {
  return !state_->finished && !state_->awaiting_login && probe_->pending();
}
void SshChannel::on_input_state_change(std::function<void()> callback) {
  probe_->set_on_answer(std::move(callback));
}
std::size_t SshChannel::queued_input_bytes() const {
  return connection_->channel_queued_input(*state_);
}
void SshChannel::resize(TerminalSize size) {
  connection_->channel_resize(state_, size);
}
void SshChannel::send_signal(int signo) {
  connection_->channel_signal(state_, signo);
}
std::optional<std::string> SshChannel::signal_note(int signo) const {
  return connection_->signal_note(signo);
}
void SshChannel::close() {
  connection_->channel_close(state_);
}
TerminalSize SshChannel::size() const {
  return state_->size;
}
bool SshChannel::finished() const {
  return state_->finished;
}
bool SshChannel::pause_output(bool paused) {
  connection_->channel_pause(state_, paused);
  return true;
}
void SshChannel::set_output_slice(std::size_t max_bytes) {
  state_->output_slice = clamp_output_slice(max_bytes);
}
std::optional<std::string> SshChannel::failure_reason() const {
  return state_->failure_reason;
}
std::vector<std::string> SshChannel::refused_env() const {
  return state_->refused_env;
}
std::optional<bool> SshChannel::echo_enabled() const {
  // During a login everything typed is an answer: hidden unless the prompt echoes.
  if (state_->awaiting_login) return state_->login.active() && state_->login.echo();
  auto modes = line_modes();
  return modes ? std::optional<bool>(modes->echo) : std::nullopt;
}
std::optional<LineModes> SshChannel::line_modes() const {
  if (state_->awaiting_login || state_->finished) return std::nullopt;
  return probe_->line_modes();
}
std::optional<std::string> SshChannel::foreground_program() const {
  if (state_->awaiting_login || state_->finished) return std::nullopt;
  return probe_->foreground_program();
}
boost::asio::awaitable<std::optional<std::string>> SshChannel::login_shell() {
  auto connection = connection_;  // the channel may go while the host answers
  co_return co_await connection->login_shell();
}
boost::asio::awaitable<std::optional<std::string>> SshChannel::put_temp_file(std::string content) {
  auto connection = connection_;  // the channel may go while the host answers
  co_return co_await connection->put_temp_file(std::move(content));
}
boost::asio::awaitable<void> SshChannel::remove_temp_file(std::string path) {
  auto connection = connection_;
  co_await connection->remove_temp_file(std::move(path));
}
std::optional<std::string> SshChannel::reading_program() const {
  if (state_->awaiting_login || state_->finished) return std::nullopt;
  return probe_->reading_program();
}
std::optional<bool> SshChannel::program_in_foreground() const {
  if (state_->awaiting_login || state_->finished) return std::nullopt;
  return probe_->leader_in_foreground();
}
bool SshChannel::input_state_withheld() const {
  return !state_->awaiting_login && !state_->finished && probe_->withheld();
}
bool SshChannel::awaiting_login() const {
  return state_->awaiting_login;
}
std::string SshChannel::login_reason() const {
  return connection_->login_reason();
}
void SshChannel::on_login_done(std::function<void()> callback) {
  state_->on_login_done = std::move(callback);
}

// ---- SshConnection: channels --------------------------------------------------

void SshConnection::install_callbacks(const std::shared_ptr<SshChannelState>& channel) {
  auto& cb = channel->callbacks;
  cb.userdata = channel.get();
  cb.channel_data_function = on_data;
  cb.channel_exit_status_function = on_exit_status;
  cb.channel_exit_signal_function = on_exit_signal;
  cb.channel_close_function = on_close;
  ssh_callbacks_init(&cb);
  ssh_set_channel_callbacks(channel->channel, &cb);
}

template <class Call>
asio::awaitable<int> SshConnection::retry_channel_call(Call call, Clock::time_point deadline) {
  int rc = SSH_ERROR;
  while (state_ == State::ready) {
    rc = call();
    after_call();
    if (rc != SSH_AGAIN || Clock::now() >= deadline) break;

    co_await wait_progress(deadline);
  }
  // No answer in time. A connection that has sent nothing for two keepalive
  // intervals meanwhile (a live server answers each within the interval) is
  // dead, not slow: said now rather than at a later keepalive tick, so an
  // open that found nothing started is made again on a fresh connection (the
  // pool) instead of failing as "timed out".
  if (rc == SSH_AGAIN) fail_if_silent(2 * options_.keepalive);
  co_return rc;
}

asio::awaitable<int> SshConnection::retry_channel(std::function<int()> call,
                                                  Clock::time_point deadline) {
  co_return co_await retry_channel_call(std::move(call), deadline);
}

SshError SshConnection::channel_error(int rc, const std::string& what) {
  if (state_ == State::failed) return SshError{SshErrorKind::connection_lost, failure_->message};
  if (rc == SSH_AGAIN)
    return SshError{SshErrorKind::channel_failed,
                    "timed out waiting for " + description_ + " to " + what};
  return SshError{SshErrorKind::channel_failed,
                  description_ + " refused to " + what + ": " + ssh_get_error(session_)};
}

std::shared_ptr<SshChannelState> SshConnection::new_channel_state(const SshLaunch& launch) {
  auto state = std::make_shared<SshChannelState>();
  state->size = launch.size;
  if (launch.pty) state->terminal_tag = random_hex(8);
  state->marks_command_end = launch.command && launch.marks_command_end;
  channels_.push_back(state);
  return state;
}

asio::awaitable<SshExpected<std::unique_ptr<SshChannel>>> SshConnection::open_channel(
    SshLaunch launch) {
  auto self = shared_from_this();
  if (state_ != State::ready) co_return not_started(channel_error(SSH_ERROR, "open a channel"));
  for (const auto& [name, value] : launch.env)
    if (!valid_env_name(name))
      co_return SshError{SshErrorKind::bad_target, "bad environment variable name '" + name + "'"};
  auto state = new_channel_state(launch);
  auto launched = co_await launch_channel(state, launch);
  if (!launched) {
    channel_detach(state);
    co_return launched.failure();
  }
  co_return std::make_unique<SshChannel>(self, state);
}

SshExpected<std::unique_ptr<SshChannel>> SshConnection::open_pending_channel(SshLaunch launch) {
  for (const auto& [name, value] : launch.env)
    if (!valid_env_name(name))
      return SshError{SshErrorKind::bad_target, "bad environment variable name '" + name + "'"};
  auto state = new_channel_state(launch);
  state->pending_launch = std::move(launch);
  state->awaiting_login = true;
  login_had_channel_ = true;
  state->inbox = login_screen_;  // shown once started
  if (login_prompting_) state->login.begin(login_echo_);
  return std::make_unique<SshChannel>(shared_from_this(), state);
}

// Opens the session channel, PTY, environment and command of `channel`.
// Every call re-reads channel->channel: a pending channel's owner may go away
// (free_channel) while this waits.
asio::awaitable<SshExpected<bool>> SshConnection::launch_channel(
    std::shared_ptr<SshChannelState> channel, const SshLaunch& launch,
    std::optional<Clock::time_point> reply_deadline) {
  auto self = shared_from_this();
  if (state_ != State::ready) co_return not_started(channel_error(SSH_ERROR, "open a channel"));
  channel->channel = ssh_channel_new(session_);
  if (channel->channel == nullptr)
    co_return not_started(channel_error(SSH_ERROR, "make a channel"));
  install_callbacks(channel);
  const auto deadline = reply_deadline.value_or(Clock::now() + options_.connect_timeout);
  auto step = [&](auto call) {
    return retry_channel_call(
        [&channel, call] { return channel->channel ? call(channel->channel) : SSH_ERROR; },
        deadline);
  };
  int rc = co_await open_session(channel, deadline);
  if (rc != SSH_OK) co_return not_started(session_refused(rc, *channel));
  channel->opened = true;
  const TerminalSize size = channel->size;  // a pending channel may have been resized
  if (launch.pty) {
    rc = co_await step([size](ssh_channel ch) {
      return ssh_channel_request_pty_size(ch, "xterm-256color", size.cols, size.rows);
    });
    if (rc != SSH_OK) co_return not_started(channel_error(rc, "allocate a PTY"));
  }
  std::vector<std::pair<std::string, std::string>> env(launch.env.begin(), launch.env.end());
  // A login shell runs no command of ours to export the tag: sshd takes
  // LC_* from a client where AcceptEnv allows it (Debian's and RHEL's
  // defaults; iTerm2 sends LC_TERMINAL so). Refused, the probe finds the
  // shell by the pid its prompt hook reports, after the hook.
  if (!launch.command && !channel->terminal_tag.empty())
    env.emplace_back(kLoginShellTagVariable, channel->terminal_tag);
  const std::size_t asked = env.size();  // what follows is a courtesy: refused, nothing changes
  // Each request waits for its reply (libssh asks for one): probes, which
  // print no text, go without.
  if (launch.pty)
    for (auto& variable : locale_variables(launch.env)) env.push_back(std::move(variable));
  for (std::size_t k = 0; k < env.size(); ++k) {
    const auto& [name, value] = env[k];
    rc = co_await step([&name, &value](ssh_channel ch) {
      return ssh_channel_request_env(ch, name.c_str(), value.c_str());
    });
    if (state_ != State::ready || rc == SSH_AGAIN || channel->channel == nullptr)
      co_return not_started(channel_error(rc, "set environment variables"));
    if (rc == SSH_OK || k >= asked) continue;
    if (name == kLoginShellTagVariable)
      channel->terminal_tag.clear();
    else
      channel->refused_env.push_back(name);  // usual: AcceptEnv is narrow
  }
  if (launch.command) {
    const std::string command = launch_command(launch, *channel);
    rc = co_await step(
        [&command](ssh_channel ch) { return ssh_channel_request_exec(ch, command.c_str()); });
  } else {
    rc = co_await step([](ssh_channel ch) { return ssh_channel_request_shell(ch); });
  }
  if (rc != SSH_OK) co_return channel_error(rc, "start the command");
  channel->launched = true;
  // OpenSSH opens the window once the command starts, before its reply.
  if (channel->channel) channel->full_window = ssh_channel_window_size(channel->channel);
  co_return true;
}

void SshConnection::free_channel(SshChannelState& channel) {
  if (channel.channel == nullptr) return;
  ssh_remove_channel_callbacks(channel.channel, &channel.callbacks);
  // Our CLOSE lets the server release its side; only once it knows the channel.
  if (channel.opened && state_ != State::failed) ssh_channel_close(channel.channel);
  ssh_channel_free(channel.channel);
  channel.channel = nullptr;
}

void SshConnection::flush_outboxes() {
  constexpr std::size_t kMaxWrite = 1 << 20;
  for (auto& channel : channels_) {
    if (channel->channel == nullptr || !channel->launched) continue;
    channel->full_window =
        std::max(channel->full_window, ssh_channel_window_size(channel->channel));
    if (channel->outbox.empty()) continue;
    const auto size = static_cast<uint32_t>(std::min(channel->outbox.size(), kMaxWrite));
    int written = ssh_channel_write(channel->channel, channel->outbox.data(), size);
    if (written > 0) {
      channel->outbox.erase(0, static_cast<std::size_t>(written));
    } else if (written == SSH_ERROR) {
      spdlog::warn("ssh: write to a channel on {} failed: {}", description_,
                   ssh_get_error(session_));
      channel->outbox.clear();
    }  // 0: the window is full; retried after the next packets arrive
  }
}

void SshConnection::channel_started(const std::shared_ptr<SshChannelState>& channel) {
  channel->started = true;
  schedule_deliver();
}

void SshConnection::channel_write(const std::shared_ptr<SshChannelState>& channel,
                                  std::string_view bytes) {
  if (channel->finished || channel->remote_closed || channel->closed_locally) return;
  if (channel->awaiting_login) return channel_login_input(channel, bytes);
  channel->outbox.append(bytes);  // kept until the command runs
  if (state_ == State::ready) after_call(/*deliver_now=*/false);
}

std::size_t SshConnection::channel_queued_input(SshChannelState& channel) const {
  // Consumed input a server may not have acknowledged yet: OpenSSH's session
  // channels adjust the window once 3 packets of 32 KiB have arrived.
  constexpr std::uint32_t kUnacknowledgedSlack = 3 * 32 * 1024;
  std::size_t queued = channel.outbox.size();
  if (channel.channel == nullptr || !channel.launched || channel.remote_closed) return queued;
  const std::uint32_t window = ssh_channel_window_size(channel.channel);
  channel.full_window = std::max(channel.full_window, window);
  const std::uint32_t in_flight = channel.full_window - window;
  return queued + (in_flight > kUnacknowledgedSlack ? in_flight - kUnacknowledgedSlack : 0);
}

void SshConnection::channel_resize(const std::shared_ptr<SshChannelState>& channel,
                                   TerminalSize size) {
  channel->size = size;  // a channel not launched yet asks for this size
  if (channel->channel == nullptr || channel->remote_closed || !channel->launched) return;
  ssh_channel_change_pty_size(channel->channel, size.cols, size.rows);
  after_call(false);
}

void SshConnection::channel_detach(const std::shared_ptr<SshChannelState>& channel) {
  channel->detached = true;
  channel->events = {};
  free_channel(*channel);
  std::erase(channels_, channel);
  if (channel->probe) progress_.cancel();  // an opener may wait for its slot
  if (state_ == State::ready) after_call(false);
  if (state_ == State::awaiting_login) login_wakeup_.cancel();  // maybe nobody waits any more
}

void SshConnection::end_channel(SshChannelState& channel, std::string reason) {
  if (!reason.empty() && !channel.failure_reason) channel.failure_reason = std::move(reason);
  channel.awaiting_login = false;
  channel.login.end();
  free_channel(channel);
  channel.remote_closed = true;
  if (state_ == State::awaiting_login) login_wakeup_.cancel();
  schedule_deliver();
}

}  // namespace agentty::pty
