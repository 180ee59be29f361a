// Registry: every execution of this server, by execution_id. Starts them
// (local PTY or SSH), enforces the live limit and record retention, and ends
// every live process group on shutdown.
//
// Threading: used only on the one I/O event loop.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "pty/pty_launcher.hpp"
#include "pty/ssh_target.hpp"
#include "session/execution.hpp"
#include "session/recording_retention.hpp"
#include "session/removed_records.hpp"
#include "session/state_dir_owner.hpp"

namespace agentty::pty {
class SshConnectionPool;
}

namespace agentty::session {

class SecretSet;

struct RegistryOptions {
  std::filesystem::path state_dir;  // spool files live under state_dir/spool
  Execution::Options execution;
  std::size_t max_live = 64;
  std::chrono::milliseconds retention{3600000};  // terminal records older than this are pruned
  std::size_t max_retained = 200;                // terminal records kept at most
  // Server-wide secrets (snapshot + env overlays): matching entries of each
  // spec.env are added to it. None: nothing is redacted.
  std::shared_ptr<SecretSet> secrets;
  bool record = true;  // an asciicast v2 recording per execution under state_dir/recordings
  RecordingLimits recordings;
  // Output bytes all executions may retain together (0: no total budget).
  // Enforced while output flows: when it would be exceeded, the oldest ended
  // records are dropped, then the spool of the execution writing is frozen
  // (OutputLog::freeze_spool: it stops growing, its oldest bytes are evicted
  // from then on). The program is never blocked or stopped for it. A frozen
  // execution still keeps its RAM ring (execution.log.ram_bytes), so the total
  // can pass the budget by at most that much per frozen execution.
  std::uint64_t max_total_spool_bytes = 0;
  pty::SshOptions ssh;  // for executions with a host
  // Keep one PTY + supervisor started ahead of the next local program
  // (pty::PtyLauncher): takes ~2 ms off each start.
  bool spare_terminal = true;
};

class Registry {
 public:
  using Observer = std::function<void(Execution&)>;

  Registry(boost::asio::io_context& io, RegistryOptions options);
  ~Registry();  // ends every live process group

  // Starts a local execution. An error means nothing was started. The loop
  // runs on while the program starts; the execution reads no output before
  // the caller resumes (its first byte is the caller's to see).
  boost::asio::awaitable<Expected<std::shared_ptr<Execution>>> start_local(ExecutionSpec spec);
  // Starts a local or (spec.host set) SSH execution.
  boost::asio::awaitable<Expected<std::shared_ptr<Execution>>> start(ExecutionSpec spec);

  std::shared_ptr<Execution> find(const std::string& id) const;
  // When and why the record of `id` was removed, if it was (recently).
  std::optional<RemovedRecord> removed(const std::string& id) const { return removed_.find(id); }
  std::vector<std::shared_ptr<Execution>> list() const;  // oldest first
  // Executions (sessions) running, and those still starting: a start waits
  // for its program's exec, and concurrent calls must count it.
  std::size_t live_count() const;
  std::size_t live_session_count() const;

  // Output bytes retained by every execution (spool or RAM), and their
  // explore text caches.
  std::uint64_t spool_bytes() const;
  // Until spool_bytes() is under `budget`: drops text caches (oldest
  // execution first; explore rebuilds them), then the records of the oldest
  // ended executions; never those of `keep`. Returns spool_bytes() after that.
  std::uint64_t reclaim_spool(std::uint64_t budget, const Execution* keep = nullptr);
  // After explore grew `explored`'s text cache: keeps the total budget, by
  // reclaim_spool and, if that is not enough, by dropping this cache too.
  void account_text_cache(Execution& explored);
  // Registers the matching values of an `env` overlay as secrets (before
  // anything runs, so a refused start's audit record is masked too).
  void add_secrets(const std::map<std::string, std::string>& env);

  // Removes terminal records older than the thresholds; returns how many.
  std::size_t cleanup(std::chrono::milliseconds completed_older_than,
                      std::chrono::milliseconds stopped_older_than,
                      RemovalCause cause = RemovalCause::cleanup);
  // Ends every live process group (SIGTERM to all at once, SIGKILL after grace).
  void shutdown(std::chrono::milliseconds grace);

  int add_observer(Observer observer);
  void remove_observer(int token);

  // The name this server gives a file or directory it makes in one of the
  // state dir's owned directories (StateDirOwner): tagged with its owner, so
  // a later server can remove it if this one dies without cleaning up.
  std::string state_file_name(std::string_view name) const;

  boost::asio::io_context& io() { return io_; }
  const RegistryOptions& options() const { return options_; }
  // Where the asciicast recordings go (state_dir/recordings); empty without a state dir.
  std::filesystem::path recordings_dir() const;
  void set_ssh_pool(std::shared_ptr<pty::SshConnectionPool> pool) { ssh_pool_ = std::move(pool); }

 private:
  // `started`: when the launch of its program began.
  std::shared_ptr<Execution> make_execution(ExecutionSpec spec, SteadyTime started);
  void adopt(const std::shared_ptr<Execution>& execution, std::unique_ptr<pty::PtyChannel> channel);
  void prune_retained();
  // Runs prune_retained within `delay`, and again whenever the oldest ended
  // record comes of age: records went only when the next execution started,
  // so a server left idle kept their memory and spool files for good.
  void prune_within(std::chrono::steady_clock::duration delay);
  void attach_recorder(Execution& execution);
  void notify(Execution& execution);
  void on_output_bytes(Execution& execution, std::size_t bytes);

  // The running total for max_total_spool_bytes; listeners hold it weakly so
  // an execution that outlives the registry never calls into it.
  struct SpoolBudget {
    Registry* registry;
    std::uint64_t known_total = 0;  // spool_bytes() when last computed
    std::uint64_t unaccounted = 0;  // output appended since (an upper bound of the growth)
  };
  std::shared_ptr<SpoolBudget> spool_budget_;

  // Declared before executions_, so destroyed after them: its lock must
  // outlive every file it tags.
  std::unique_ptr<StateDirOwner> owner_;
  boost::asio::io_context& io_;
  RegistryOptions options_;
  std::map<std::string, std::shared_ptr<Execution>> executions_;
  RemovedRecords removed_;
  std::vector<std::string> order_;  // ids, oldest first
  std::map<int, Observer> observers_;
  int next_observer_token_ = 1;
  std::shared_ptr<pty::SshConnectionPool> ssh_pool_;
  RecordingRetention recording_retention_;
  bool recordings_dir_made_ = false;
  std::string recordings_refusal_;  // why recordings are off, as last warned
  // Executions started unrecorded since the last recording that could be
  // made (a full disk): warned for the first only, counted when they resume.
  std::size_t recordings_missed_ = 0;
  pty::PtyLauncher launcher_;
  boost::asio::steady_timer prune_timer_;
  bool prune_armed_ = false;
  // Expires with the registry: a prune that came due in the loop's pass
  // that destroys it is queued as done (destroying the timer cannot cancel
  // it), and an execution held past it may still end; neither may call in.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // Starts waiting for their program or channel; shared with the starting
  // coroutines, which may end (cancelled, or at exit) after the registry.
  struct StartsInFlight {
    std::size_t executions = 0;
    std::size_t sessions = 0;
  };
  std::shared_ptr<StartsInFlight> starting_ = std::make_shared<StartsInFlight>();
  friend class StartInFlight;
  std::size_t running_count() const;
  // Drops the record of `id` (executions_ only: the caller edits order_).
  void forget(const std::string& id, RemovalCause cause);
};

}  // namespace agentty::session
