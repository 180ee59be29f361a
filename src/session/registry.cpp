#include "session/registry.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <set>
#include <utility>

#include "base/private_dir.hpp"
#include "base/random_id.hpp"
#include "base/utf8.hpp"
#include "pty/pty_process.hpp"
#include "pty/ssh_channel.hpp"
#include "pty/ssh_connection.hpp"
#include "session/recorder.hpp"
#include "session/redactor.hpp"

namespace agentty::session {

Registry::Registry(boost::asio::io_context& io, RegistryOptions options)
    : io_(io),
      options_(std::move(options)),
      recording_retention_(recordings_dir(), options_.recordings),
      launcher_(io, options_.spare_terminal),
      prune_timer_(io) {
  spool_budget_ = std::make_shared<SpoolBudget>(SpoolBudget{this});
  if (!options_.state_dir.empty()) {
    if (auto made = ensure_private_dir(options_.state_dir / "spool"); !made)
      spdlog::warn("state dir {}: {}", options_.state_dir.string(), made.error());
    if (auto owner = StateDirOwner::acquire(options_.state_dir)) {
      owner_ = std::move(owner).value();
      owner_->sweep();  // what servers killed outright left behind
    } else {
      spdlog::warn("{}; files this server leaves if it is killed will not be removed by the next",
                   owner.error());
    }
  }
}

std::string Registry::state_file_name(std::string_view name) const {
  if (!owner_) return std::string(name);
  owner_->keep_claim();
  return owner_->owned_name(name);
}

Registry::~Registry() {
  for (auto& [id, execution] : executions_) execution->kill_now();
  executions_.clear();
  if (ssh_pool_) ssh_pool_->shutdown();
}

std::shared_ptr<Execution> Registry::make_execution(ExecutionSpec spec, SteadyTime started) {
  std::string id = random_hex(6);
  while (executions_.count(id)) id = random_hex(6);
  Execution::Options options = options_.execution;
  if (!options_.state_dir.empty() && options.log.spool_cap_bytes > 0) {
    options.log.spool_path = options_.state_dir / "spool" / state_file_name(id + ".log");
  }
  auto execution = std::make_shared<Execution>(io_, id, std::move(spec), options, started);
  execution->set_state_observer([this, alive = std::weak_ptr<bool>(alive_)](Execution& e) {
    if (!alive.expired()) notify(e);
  });
  if (options_.secrets) {
    execution->set_text_redaction([secrets = std::shared_ptr<const SecretSet>(options_.secrets)](
                                      std::string_view text) { return secrets->redact(text); });
  }
  return execution;
}

// Counts one start for as long as it waits, however it ends (an error, a
// cancelled call, a coroutine destroyed at exit).
class StartInFlight {
 public:
  StartInFlight(const std::shared_ptr<Registry::StartsInFlight>& counts, ExecutionKind kind)
      : counts_(counts), session_(kind == ExecutionKind::session) {
    ++counts_->executions;
    if (session_) ++counts_->sessions;
  }
  ~StartInFlight() {
    --counts_->executions;
    if (session_) --counts_->sessions;
  }
  StartInFlight(const StartInFlight&) = delete;
  StartInFlight& operator=(const StartInFlight&) = delete;

 private:
  std::shared_ptr<Registry::StartsInFlight> counts_;
  bool session_;
};

namespace {

std::string too_many_live(std::size_t live) {
  return "too many live executions (" + std::to_string(live) +
         ", counting those starting); nothing was started. Stop or wait for one (ps lists "
         "them), or raise AGENTTY_MAX_EXECUTIONS.";
}

}  // namespace

boost::asio::awaitable<Expected<std::shared_ptr<Execution>>> Registry::start_local(
    ExecutionSpec spec) {
  prune_retained();
  // Starts in flight count: they are live executions a moment from now.
  if (live_count() >= options_.max_live) co_return make_error(too_many_live(live_count()));
  pty::SpawnOptions spawn;
  spawn.argv = spec.argv;
  spawn.cwd = spec.cwd;
  spawn.env = spec.env;
  spawn.size = spec.size;
  spawn.agent_defaults = spec.kind == ExecutionKind::command;
  spawn.stdin_data = std::exchange(spec.stdin_file, std::nullopt);
  StartInFlight counted(starting_, spec.kind);
  // The program runs from some moment inside the launch: its recording's
  // clock starts before that, so no output is stamped earlier than it was.
  const auto launched = std::chrono::steady_clock::now();
  auto channel = co_await launcher_.launch(std::move(spawn));
  if (!channel) co_return make_error(channel.error());
  // As on a host, where sshd closes the terminal when the login shell ends.
  if (spec.kind == ExecutionKind::session) channel.value()->end_with_program();

  auto execution = make_execution(std::move(spec), launched);
  adopt(execution, std::move(channel).value());
  co_return execution;
}

void Registry::adopt(const std::shared_ptr<Execution>& execution,
                     std::unique_ptr<pty::PtyChannel> channel) {
  std::unique_ptr<Redactor> redactor;
  if (options_.secrets) {
    options_.secrets->add_matching(execution->spec().env);
    redactor = std::make_unique<Redactor>(std::shared_ptr<const SecretSet>(options_.secrets));
  }
  executions_.emplace(execution->id(), execution);
  order_.push_back(execution->id());
  if (options_.max_total_spool_bytes > 0) {
    execution->add_output_listener([budget = std::weak_ptr<SpoolBudget>(spool_budget_),
                                    raw = execution.get()](std::string_view bytes, std::uint64_t) {
      if (auto alive = budget.lock()) alive->registry->on_output_bytes(*raw, bytes.size());
    });
  }
  attach_recorder(*execution);
  execution->attach(std::move(channel), std::move(redactor));
}

namespace {

// What a local command gets from agent_defaults (pty_spawn.cpp): pagers set
// to cat, so `git log` or `man` on a host prints instead of waiting in less
// for keys. Exported on the line, as sshd refuses env requests it does not
// accept (AcceptEnv); a name the agent's env gives is left to it.
std::string remote_agent_defaults(const ExecutionSpec& spec) {
  std::string exports;
  for (const char* name : pty::kAgentPagerVariables) {
    if (!spec.env.contains(name))
      exports += (exports.empty() ? "export " : " ") + std::string(name) + "=cat";
  }
  return exports.empty() ? "" : exports + "; ";
}

// The remote shell starts in the account's home: a cwd is entered first, and
// the command does not run when it cannot be (the shell's own message says why).
// On the command's first line: the shell's messages number its lines as
// without a cwd.
std::string remote_command(const ExecutionSpec& spec) {
  const auto defaults = remote_agent_defaults(spec);
  if (spec.cwd.empty()) return defaults + spec.remote_command;
  return defaults + pty::enter_directory_or_exit(spec.cwd) + "; " + spec.remote_command;
}

}  // namespace

boost::asio::awaitable<Expected<std::shared_ptr<Execution>>> Registry::start(ExecutionSpec spec) {
  if (spec.host.empty()) co_return co_await start_local(std::move(spec));
  prune_retained();
  if (live_count() >= options_.max_live) co_return make_error(too_many_live(live_count()));
  auto target = pty::SshTarget::parse(spec.host);
  if (!target) co_return make_error("host: " + target.error());
  if (!spec.ssh_user.empty()) target->user = spec.ssh_user;
  if (spec.ssh_port > 0) target->port = spec.ssh_port;
  if (!ssh_pool_) ssh_pool_ = std::make_shared<pty::SshConnectionPool>(io_, options_.ssh);
  pty::SshLaunch launch;
  if (spec.kind == ExecutionKind::command) launch.command = remote_command(spec);
  launch.size = spec.size;
  launch.env = spec.env;
  launch.marks_command_end = spec.remote_marks_command_end;
  auto pool = ssh_pool_;  // keeps the pool alive across the suspension
  StartInFlight counted(starting_, spec.kind);
  auto channel = co_await pool->open_channel(target.value(), std::move(launch));
  if (!channel) co_return make_error("host " + spec.host + ": " + channel.error());
  // Its program starts as the channel opens, after the connection and login
  // (seconds, which are not its run time).
  auto execution = make_execution(std::move(spec), std::chrono::steady_clock::now());
  auto& ssh = *channel.value();
  // No key logged in: a person types the password at this execution's terminal.
  std::optional<std::string> login;
  if (ssh.awaiting_login()) login = ssh.login_reason();
  ssh.on_login_done([weak = std::weak_ptr<Execution>(execution)] {
    if (auto held = weak.lock()) held->end_login_hold();
  });
  // A dead connection ends the execution as failed, with its reason.
  execution->set_failure_source([&ssh] { return ssh.failure_reason(); });
  adopt(execution, std::move(channel).value());
  if (login) execution->hold_for_login(std::move(*login));
  co_return execution;
}

void Registry::attach_recorder(Execution& execution) {
  if (!options_.record || options_.state_dir.empty()) return;
  auto dir = recordings_dir();
  if (!recordings_dir_made_) {  // once: a stat per start shows in execute's latency
    auto made = ensure_private_dir(dir);
    recordings_dir_made_ = made.ok();
    if (!made) {
      // Nothing is written through what is not a private directory of ours,
      // and the reason is said once, not at every execute.
      if (made.error() != recordings_refusal_)
        spdlog::warn("recordings are off until this is fixed: {}", made.error());
      recordings_refusal_ = made.error();
      return;
    }
    recordings_refusal_.clear();
  }
  // Room for this one; recordings of live executions are never pruned.
  recording_retention_.make_room([this] {
    std::set<std::string> live;
    for (const auto& [id, other] : executions_)
      if (!other->finished()) live.insert(id);
    return live;
  });
  RecorderOptions recording;
  recording.path = dir / (execution.id() + ".cast");
  recording.cols = execution.spec().size.cols;
  recording.rows = execution.spec().size.rows;
  // Redacted before the cut: a secret the cut splits would no longer match.
  recording.title = execution.spec().command_text;
  if (options_.secrets) recording.title = options_.secrets->redact(recording.title);
  // Cut between characters: half of one would be U+FFFD in the header.
  recording.title.resize(complete_utf8_prefix(std::string_view(recording.title).substr(0, 200)));
  recording.max_bytes = std::min(recording.max_bytes, options_.recordings.max_bytes);
  recording.start = execution.started_steady();
  auto recorder = Recorder::open(recording);
  if (!recorder) {
    recordings_dir_made_ = false;  // removed meanwhile? made again next time
    // A full disk fails every start: one line, not one per execute.
    if (recordings_missed_++ == 0)
      spdlog::warn(
          "no recording for {}: {}; later executions go unrecorded too until one can be "
          "written (free space in the state directory), which the log will say",
          execution.id(), recorder.error());
    return;
  }
  if (recordings_missed_ > 0)
    spdlog::warn("recordings resume with {}; the {} executions before it were not recorded",
                 execution.id(), std::exchange(recordings_missed_, 0));
  recording_retention_.track_size(recorder.value()->size_counter());
  execution.set_recorder(std::move(recorder).value());
}

std::filesystem::path Registry::recordings_dir() const {
  return options_.state_dir.empty() ? std::filesystem::path() : options_.state_dir / "recordings";
}

std::shared_ptr<Execution> Registry::find(const std::string& id) const {
  auto it = executions_.find(id);
  return it == executions_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Execution>> Registry::list() const {
  std::vector<std::shared_ptr<Execution>> out;
  out.reserve(order_.size());
  for (const auto& id : order_) out.push_back(executions_.at(id));
  return out;
}

std::size_t Registry::running_count() const {
  return std::count_if(executions_.begin(), executions_.end(),
                       [](const auto& kv) { return !kv.second->finished(); });
}

std::size_t Registry::live_count() const {
  return running_count() + starting_->executions;
}

std::size_t Registry::live_session_count() const {
  return starting_->sessions +
         std::count_if(executions_.begin(), executions_.end(), [](const auto& kv) {
           return !kv.second->finished() && kv.second->kind() == ExecutionKind::session;
         });
}

std::uint64_t Registry::spool_bytes() const {
  std::uint64_t total = 0;
  for (const auto& [id, execution] : executions_) total += execution->retained_bytes();
  return total;
}

std::uint64_t Registry::reclaim_spool(std::uint64_t budget, const Execution* keep) {
  std::uint64_t total = spool_bytes();
  // Text caches first: they are made again from the log when needed.
  for (const auto& id : order_) {
    if (total < budget) return total;  // the policy refuses at total >= budget
    auto& execution = *executions_.at(id);
    if (&execution == keep) continue;
    total -= execution.text_cache_bytes();
    execution.drop_text_cache();
  }
  std::erase_if(order_, [&](const std::string& id) {
    if (total < budget) return false;
    const auto& execution = executions_.at(id);
    if (!execution->finished() || execution.get() == keep) return false;
    total -= execution->retained_bytes();
    forget(id, RemovalCause::spool_budget);
    return true;
  });
  return total;
}

void Registry::account_text_cache(Execution& explored) {
  const std::uint64_t cap = options_.max_total_spool_bytes;
  if (cap == 0) return;
  auto& budget = *spool_budget_;
  budget.unaccounted = 0;
  budget.known_total = reclaim_spool(cap + 1, &explored);
  if (budget.known_total <= cap) return;
  // What is left is running output and this cache: the cache goes (this
  // answer is made; the next explore converts again).
  budget.known_total -= explored.text_cache_bytes();
  explored.drop_text_cache();
}

void Registry::add_secrets(const std::map<std::string, std::string>& env) {
  if (options_.secrets) options_.secrets->add_matching(env);
}

// Called after every output chunk when a total budget is set; recounts only
// when the running upper bound passes the budget.
void Registry::on_output_bytes(Execution& execution, std::size_t bytes) {
  auto& budget = *spool_budget_;
  const std::uint64_t cap = options_.max_total_spool_bytes;
  budget.unaccounted += bytes;
  if (execution.log().spool_frozen_at() != 0 || budget.known_total + budget.unaccounted <= cap)
    return;
  budget.unaccounted = 0;
  budget.known_total = reclaim_spool(cap + 1);  // drops ended records while total > cap
  if (budget.known_total <= cap) return;
  execution.log().freeze_spool();
  budget.known_total = spool_bytes();
  spdlog::info("execution {}: total spool budget {} bytes reached at byte {}; its spool is frozen",
               execution.id(), cap, execution.log().latest_seq());
}

std::size_t Registry::cleanup(std::chrono::milliseconds completed_older_than,
                              std::chrono::milliseconds stopped_older_than, RemovalCause cause) {
  auto now = std::chrono::system_clock::now();
  std::size_t removed = 0;
  std::erase_if(order_, [&](const std::string& id) {
    auto& execution = executions_.at(id);
    if (!execution->finished() || !execution->ended_at()) return false;
    auto age = now - *execution->ended_at();
    auto limit = execution->status() == ExecutionStatus::completed ? completed_older_than
                                                                   : stopped_older_than;
    if (age < limit) return false;
    forget(id, cause);
    ++removed;
    return true;
  });
  return removed;
}

void Registry::prune_retained() {
  cleanup(options_.retention, options_.retention, RemovalCause::retention);
  std::size_t terminal = executions_.size() - running_count();
  if (terminal <= options_.max_retained) return;
  std::size_t excess = terminal - options_.max_retained;
  std::erase_if(order_, [&](const std::string& id) {
    if (excess == 0 || !executions_.at(id)->finished()) return false;
    forget(id, RemovalCause::max_retained);
    --excess;
    return true;
  });
}

void Registry::forget(const std::string& id, RemovalCause cause) {
  executions_.erase(id);
  removed_.add(id, cause);
}

void Registry::prune_within(std::chrono::steady_clock::duration delay) {
  const auto due = std::chrono::steady_clock::now() + delay;
  if (prune_armed_ && prune_timer_.expiry() <= due) return;
  prune_armed_ = true;
  prune_timer_.expires_at(due);  // a later wait ends with operation_aborted
  prune_timer_.async_wait([this,
                           alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (ec || alive.expired()) return;  // replaced by a sooner wait, or the registry is gone
    prune_armed_ = false;
    prune_retained();
    std::optional<std::chrono::system_clock::time_point> oldest_end;
    for (const auto& [id, execution] : executions_) {
      if (auto ended = execution->ended_at(); ended && execution->finished())
        oldest_end = oldest_end ? std::min(*oldest_end, *ended) : *ended;
    }
    if (!oldest_end) return;
    using std::chrono::milliseconds;
    const auto age =
        std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now() - *oldest_end);
    // Hourly at most (a long retention is then checked again, no overflow),
    // and a little past the due time: cleanup keeps a record until it is older.
    const milliseconds left = options_.retention > age ? options_.retention - age : milliseconds(0);
    prune_within(std::min<milliseconds>(left, std::chrono::hours(1)) + milliseconds(10));
  });
}

void Registry::shutdown(std::chrono::milliseconds grace) {
  for (auto& [id, execution] : executions_) {
    if (execution->finished()) continue;
    // A shell ignores SIGTERM; on SIGHUP it hangs up its jobs too, as when a
    // terminal window closes. What is left after the grace is killed, the
    // jobs included (PtyProcess::send_signal).
    const bool shell = execution->spec().kind == ExecutionKind::session;
    (void)execution->stop(shell ? SIGHUP : SIGTERM, grace, InputSource::human);
  }
}

int Registry::add_observer(Observer observer) {
  int token = next_observer_token_++;
  observers_.emplace(token, std::move(observer));
  return token;
}

void Registry::remove_observer(int token) {
  observers_.erase(token);
}

void Registry::notify(Execution& execution) {
  // A program ended: its response goes out first, then the spare is made.
  if (execution.finished() && execution.spec().host.empty()) launcher_.prepare_spare();
  // From the loop, not here: a caller may be iterating over the records.
  if (execution.finished()) prune_within(std::chrono::steady_clock::duration::zero());
  for (auto it = observers_.begin(); it != observers_.end();) {
    auto current = it++;
    current->second(execution);
  }
}

}  // namespace agentty::session
