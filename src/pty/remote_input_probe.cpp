#include "pty/remote_input_probe.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>
#include <utility>

#include "pty/remote_input_report.hpp"
#include "pty/ssh_connection.hpp"

namespace agentty::pty {

namespace asio = boost::asio;

RemoteInputProbe::RemoteInputProbe(std::shared_ptr<SshConnection> connection,
                                   std::shared_ptr<const SshChannelState> channel)
    : connection_(std::move(connection)), channel_(std::move(channel)) {}

const RemoteInputProbe::Answer* RemoteInputProbe::current_answer() const {
  if (disabled_ || detached_ || !answer_ || answer_->period != period_) return nullptr;
  return &*answer_;
}

std::optional<LineModes> RemoteInputProbe::line_modes() const {
  const auto* answer = current_answer();
  return answer ? answer->line_modes : std::nullopt;
}

std::optional<std::string> RemoteInputProbe::foreground_program() const {
  const auto* answer = current_answer();
  return answer ? answer->foreground_program : std::nullopt;
}

std::optional<std::string> RemoteInputProbe::reading_program() const {
  const auto* answer = current_answer();
  return answer ? answer->reading_program : std::nullopt;
}

std::optional<bool> RemoteInputProbe::leader_in_foreground() const {
  const auto* answer = current_answer();
  return answer ? answer->leader_in_foreground : std::nullopt;
}

bool RemoteInputProbe::withheld() const {
  const auto* answer = current_answer();
  return answer && answer->state == InputState::unknown;
}

InputState RemoteInputProbe::state() {
  if (disabled_ || detached_) return InputState::unknown;
  const auto now = Clock::now();
  if (current_answer()) {
    if (now - answer_->at >= reuse_for(now)) start();
    return answer_->state;  // nothing happened since: still the best answer
  }
  if (channel_->terminal_tag.empty() && !leader_)
    return InputState::unknown;  // nothing to find it by
  if (now < retry_at_ || !start()) return InputState::unknown;
  return InputState::busy;  // until the host answers for this quiet period
}

bool RemoteInputProbe::pending() const {
  return running_ && !disabled_ && !detached_ && !current_answer();
}

void RemoteInputProbe::note_activity() {
  ++period_;
  period_start_ = Clock::now();
}

void RemoteInputProbe::set_session_leader(int pid) {
  if (!leader_) leader_ = pid;
}

void RemoteInputProbe::detach() {
  detached_ = true;
  on_answer_ = nullptr;
}

RemoteInputProbe::Clock::duration RemoteInputProbe::reuse_for(Clock::time_point now) const {
  // A program quiet for long is probed less often: at most every kMaxAge.
  return std::clamp<Clock::duration>((now - period_start_) / 4, kMinAge, kMaxAge);
}

bool RemoteInputProbe::start() {
  if (running_) {
    wanted_again_ = true;
    return true;
  }
  if (connection_->state() != SshConnection::State::ready ||
      connection_->open_channel_count() >= kChannelHeadroom || connection_->slot_wanted())
    return false;
  running_ = true;
  wanted_again_ = false;
  asio::co_spawn(connection_->io(), run(period_), asio::detached);
  return true;
}

asio::awaitable<void> RemoteInputProbe::run(std::uint64_t period) {
  auto self = shared_from_this();
  const auto started = Clock::now();
  auto output = co_await connection_->run_command(
      "exec sh -s", remote_input_script(channel_->terminal_tag, leader_), kTimeout);
  running_ = false;
  const auto now = Clock::now();
  spdlog::debug("ssh: input probe on {} took {} ms", connection_->description(),
                std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count());
  if (detached_) co_return;
  if (!output && output.failure().nothing_started) {
    // The server refused the channel (its slots were taken, or one had just
    // closed): the host is busy, not unable to answer. Asked again later,
    // never given up for it: three refusals while two commands held
    // MaxSessions 2 left the terminal on the guess for good.
    spdlog::debug("ssh: input probe on {} refused, asking again in {} s: {}",
                  connection_->description(), kRetryAfter.count() / 1000, output.error());
    retry_at_ = now + kRetryAfter;
  } else if (!output) {
    spdlog::debug("ssh: input probe on {} failed: {}", connection_->description(), output.error());
    failed(now);
  } else {
    auto report = read_remote_input_report(output.value());
    using Outcome = RemoteInputReport::Outcome;
    if (report.outcome == Outcome::unsupported) {
      spdlog::info(
          "ssh: {} cannot tell whether a program reads its terminal ({}); "
          "waiting_for_input is guessed there",
          connection_->description(), report.detail);
      disabled_ = true;
    } else if (report.outcome == Outcome::not_found && period != period_ &&
               now - created_ < kStartGrace) {
      // Asked before the program had started (its shell had not exported
      // the tag yet) and it has printed since: not a failure, and no reason
      // to wait kRetryAfter, during which the 2 s guess would answer for a
      // host that can tell (seen under load). The next state() asks again.
      spdlog::debug("ssh: input probe on {} came before its terminal; asking again",
                    connection_->description());
    } else if (report.outcome != Outcome::answered) {
      spdlog::debug("ssh: input probe on {} gave no answer ({})", connection_->description(),
                    report.outcome == Outcome::not_found ? "terminal not found"
                                                         : "output cut short or not the probe's");
      failed(now);
    } else {
      failures_ = 0;
      if (report.leader) leader_ = report.leader;
      stopped_group_ =
          report.state == InputState::suspended ? report.foreground_group : std::nullopt;
      if (period == period_) {
        // The leader leads its own process group, so its group in the
        // foreground means the leader itself holds the terminal.
        auto leader_in_foreground =
            report.foreground_group ? std::optional<bool>(report.foreground_group == report.leader)
                                    : std::nullopt;
        answer_ = Answer{report.state,
                         report.line_modes,
                         std::move(report.foreground_program),
                         std::move(report.reading_program),
                         leader_in_foreground,
                         period,
                         now};
      }
    }
  }
  if (wanted_again_ && !disabled_ && now >= retry_at_) start();
  if (on_answer_) on_answer_();
}

bool RemoteInputProbe::resume() {
  if (detached_ || !stopped_group_ || !answer_ || answer_->period != period_ ||
      answer_->state != InputState::suspended ||
      connection_->state() != SshConnection::State::ready)
    return false;
  answer_.reset();  // continued: ask the host again
  asio::co_spawn(connection_->io(), continue_group(*std::exchange(stopped_group_, std::nullopt)),
                 asio::detached);
  return true;
}

asio::awaitable<void> RemoteInputProbe::continue_group(int group) {
  auto self = shared_from_this();
  auto done =
      co_await connection_->run_command("kill -CONT -- -" + std::to_string(group), "", kTimeout);
  if (!done)
    spdlog::warn("ssh: resuming a program on {} failed: {}", connection_->description(),
                 done.error());
  if (on_answer_ && !detached_) on_answer_();
}

void RemoteInputProbe::failed(Clock::time_point now) {
  retry_at_ = now + kRetryAfter;
  if (++failures_ >= kMaxFailures) disabled_ = true;
}

}  // namespace agentty::pty
