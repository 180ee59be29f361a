// SshConnection, the login-by-a-person half: password and keyboard-interactive
// answers typed into the terminals of the channels that wait for the login
// (see "Login by a person" in ssh_connection.hpp).
#include <sys/socket.h>

#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cerrno>

#include "pty/ssh_channel.hpp"
#include "pty/ssh_connection.hpp"

namespace agentty::pty {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto kToken = asio::as_tuple(asio::use_awaitable);

// Server text goes to a terminal: bare LF would leave the cursor mid-line.
std::string terminal_text(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) out += '\r';
    out += text[i];
  }
  return out;
}

std::string with_line_end(std::string text) {
  if (!text.empty() && text.back() != '\n') text += "\r\n";
  return text;
}

std::string session_option(ssh_session session, ssh_options_e option) {
  char* value = nullptr;
  if (ssh_options_get(session, option, &value) != SSH_OK || value == nullptr) return {};
  std::string copy = value;
  ssh_string_free_char(value);
  return copy;
}

// The server hung up (EOF or error) without anything left to read.
bool peer_closed(int fd) {
  char byte;
  ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace

std::string SshConnection::login_reason() const {
  const bool interactive = (auth_methods_ & SSH_AUTH_METHOD_INTERACTIVE) != 0;
  return "SSH login to " + description_ + " needs " +
         (interactive ? "keyboard-interactive answers (a password or code)" : "a password") +
         ": no key was accepted. A person must open this execution's terminal page, take over and "
         "type it at the prompt there; it is never shown to the agent. It continues on its own "
         "once logged in.";
}

std::size_t SshConnection::pending_channel_count() const {
  return std::count_if(channels_.begin(), channels_.end(),
                       [](const auto& channel) { return channel->awaiting_login; });
}

void SshConnection::show_login(std::string_view text) {
  for (auto& channel : channels_)
    if (channel->awaiting_login) channel->inbox.append(text);
  schedule_deliver();
}

asio::awaitable<SshExpected<bool>> SshConnection::log_in_by_hand() {
  auto self = shared_from_this();
  state_ = State::awaiting_login;
  progress_.cancel();  // waiting openers now get pending channels
  spdlog::info("ssh: {} needs a person to log in at the execution's terminal", description_);
  int failures = 0;
  for (;;) {
    auto deadline = Clock::now() + options_.connect_timeout;
    int rc = SSH_AUTH_ERROR;
    if (auth_methods_ & SSH_AUTH_METHOD_INTERACTIVE)
      rc = co_await keyboard_interactive_login(deadline);
    else if (auth_methods_ & SSH_AUTH_METHOD_PASSWORD)
      rc = co_await password_login(deadline);
    else if (auth_methods_ & SSH_AUTH_METHOD_PUBLICKEY)  // after a partial success
      rc = co_await retry_auth(
          [this] { return ssh_userauth_publickey_auto(session_, nullptr, nullptr); }, deadline);
    if (state_ == State::failed) co_return *failure_;
    if (login_abort_) co_return SshError{SshErrorKind::auth_failed, *login_abort_};
    switch (rc) {
      case SSH_AUTH_SUCCESS:
        spdlog::info("ssh: logged in to {} by a person", description_);
        co_return true;
      case SSH_AUTH_PARTIAL:  // one factor done; the server wants another
        auth_methods_ = ssh_userauth_list(session_, nullptr);
        continue;
      case SSH_AUTH_DENIED:
        if (++failures >= std::max(1, options_.login_attempts)) {
          show_login("Permission denied.\r\n");
          co_return SshError{SshErrorKind::auth_failed,
                             "login to " + description_ + " failed: permission denied after " +
                                 std::to_string(failures) +
                                 " attempts by the person at the terminal"};
        }
        show_login("Permission denied, please try again.\r\n");
        auth_methods_ = ssh_userauth_list(session_, nullptr);
        if (!(auth_methods_ & (SSH_AUTH_METHOD_PASSWORD | SSH_AUTH_METHOD_INTERACTIVE)))
          co_return SshError{SshErrorKind::auth_failed,
                             description_ +
                                 " offers no more password or keyboard-interactive "
                                 "login after a wrong answer"};
        continue;
      case SSH_AUTH_AGAIN:
        co_return SshError{SshErrorKind::connect_failed,
                           "timed out waiting for " + description_ + " to check the login"};
      default:
        co_return SshError{SshErrorKind::auth_failed,
                           "login to " + description_ + " failed: " + ssh_get_error(session_)};
    }
  }
}

asio::awaitable<int> SshConnection::password_login(Clock::time_point& deadline) {
  const std::string who =
      session_option(session_, SSH_OPTIONS_USER) + "@" + session_option(session_, SSH_OPTIONS_HOST);
  auto answer = co_await ask_person(who + "'s password: ", false);
  if (!answer) co_return SSH_AUTH_ERROR;
  deadline = Clock::now() + options_.connect_timeout;
  const std::string& password = *answer;
  int rc = co_await retry_auth(
      [this, &password] { return ssh_userauth_password(session_, nullptr, password.c_str()); },
      deadline);
  wipe(*answer);
  co_return rc;
}

asio::awaitable<int> SshConnection::keyboard_interactive_login(Clock::time_point& deadline) {
  auto kbdint = [this] { return ssh_userauth_kbdint(session_, nullptr, nullptr); };
  int rc = co_await retry_auth(kbdint, deadline);
  while (rc == SSH_AUTH_INFO && state_ != State::failed) {
    // PAM's conversation: an optional name and instruction, then prompts.
    std::string header = with_line_end(terminal_text(ssh_userauth_kbdint_getname(session_)));
    header += with_line_end(terminal_text(ssh_userauth_kbdint_getinstruction(session_)));
    const int count = ssh_userauth_kbdint_getnprompts(session_);
    for (int i = 0; i < count; ++i) {
      char echo = 0;
      const char* prompt = ssh_userauth_kbdint_getprompt(session_, i, &echo);
      auto answer = co_await ask_person(
          std::exchange(header, {}) + terminal_text(prompt ? prompt : ""), echo != 0);
      if (!answer) co_return SSH_AUTH_ERROR;
      const int set = ssh_userauth_kbdint_setanswer(session_, i, answer->c_str());
      wipe(*answer);
      if (set < 0) co_return SSH_AUTH_ERROR;
    }
    if (!header.empty()) show_login(header);  // information only, no prompt
    deadline = Clock::now() + options_.connect_timeout;
    rc = co_await retry_auth(kbdint, deadline);
  }
  co_return rc;
}

// Shows `prompt` on every waiting terminal and waits for a person to answer
// in one of them. nullopt: no answer (login_abort_ says why, or the
// connection failed).
asio::awaitable<std::optional<std::string>> SshConnection::ask_person(std::string prompt,
                                                                      bool echo) {
  login_screen_ = prompt;
  login_echo_ = echo;
  login_prompting_ = true;
  for (auto& channel : channels_) {
    if (!channel->awaiting_login) continue;
    channel->inbox += prompt;
    channel->login.begin(echo);
  }
  schedule_deliver();
  bool watch_socket = socket_.has_value();
  while (state_ != State::failed && !login_abort_ && !login_answer_) {
    if (login_had_channel_ && pending_channel_count() == 0) {
      login_abort_ = "the login to " + description_ +
                     " was abandoned: every execution waiting for it ended first";
      break;
    }
    if (!watch_socket) {
      co_await login_wakeup_.async_wait(kToken);
      continue;
    }
    auto woken = co_await (login_wakeup_.async_wait(kToken) ||
                           socket_->async_wait(asio::posix::descriptor_base::wait_read, kToken));
    if (woken.index() != 1 || state_ == State::failed) continue;
    if (peer_closed(ssh_get_fd(session_))) {
      login_abort_ = description_ +
                     " closed the connection while waiting for the login (its LoginGraceTime, "
                     "2 minutes by default, ran out)";
      show_login("\r\nConnection closed by the server before the login was finished.\r\n");
    }
    watch_socket = false;  // data to read: libssh takes it with the next call
  }
  login_prompting_ = false;
  login_screen_.clear();
  for (auto& channel : channels_) {
    if (!channel->login.active()) continue;
    channel->login.end();
    channel->inbox += "\r\n";  // answered in another terminal
  }
  schedule_deliver();
  if (!login_answer_) co_return std::nullopt;
  std::optional<std::string> answer = *login_answer_;
  wipe(*login_answer_);
  login_answer_.reset();
  co_return answer;
}

void SshConnection::channel_login_input(const std::shared_ptr<SshChannelState>& channel,
                                        std::string_view bytes) {
  auto result = channel->login.feed(bytes);
  channel->inbox += result.echo;
  if (result.cancelled && !login_abort_)
    login_abort_ = "the person at the terminal cancelled the login to " + description_;
  if (result.answer) {
    if (login_prompting_ && !login_answer_) login_answer_ = *result.answer;
    wipe(*result.answer);
  }
  if (result.cancelled || login_answer_) login_wakeup_.cancel();
  schedule_deliver();
}

void SshConnection::open_pending_channels() {
  auto snapshot = channels_;
  for (auto& channel : snapshot)
    if (channel->pending_launch) asio::co_spawn(io_, open_pending(channel), asio::detached);
}

asio::awaitable<void> SshConnection::open_pending(std::shared_ptr<SshChannelState> channel) {
  auto self = shared_from_this();
  SshLaunch launch = std::move(*channel->pending_launch);
  channel->pending_launch.reset();
  channel->awaiting_login = false;
  channel->login.end();
  channel->login_done = true;
  schedule_deliver();
  auto launched = co_await launch_channel(channel, launch);
  if (channel->detached || channel->remote_closed) co_return;  // stopped or failed meanwhile
  if (!launched) co_return end_channel(*channel, launched.error());
  after_call();  // sends what was typed meanwhile
}

}  // namespace agentty::pty
