// Policy: the operator's rules for what an agent may start, checked before
// anything is spawned.
//
// The operator configures it once at startup (PolicyConfig::from_environment,
// AGENTTY_* variables); a bad setting fails startup with a message naming the
// variable. An agent's request is then checked by the tool layer in this
// order, stopping at the first refusal:
//   1. check_side_effects  (the declared side-effect categories)
//   2. check_cwd           (working directory, symlinks and `..` resolved)
//   3. check_command       (deny / allow regexes on the command text)
//   4. check_live_limit / check_session_limit, then check_total_spool
// Every refusal is a user-facing message that says nothing was started, what
// rule refused it, and what to do instead (for the agent) or which variable
// changes it (for the operator).
//
// Side-effect declarations are a risk signal from the agent, not a sandbox:
// an agent can under-declare. The regexes and cwd roots are hard checks.
//
// Threading: a Policy is immutable after construction; every check is const
// and may run on any thread (PCRE2 match data is allocated per match).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "session/side_effects.hpp"
#include "session/typed_lines.hpp"

namespace agentty::session {

// ---------------------------------------------------------------------------
// Configuration.

struct PolicyConfig {
  std::set<SideEffect> blocked_side_effects = default_blocked_side_effects();
  std::vector<std::string> allowed_cwds;  // empty: any directory
  std::string deny_command_regex;         // empty: none
  std::string allow_command_regex;        // empty: every command allowed
  std::string redact_env_regex;           // validated here, used by the redactor
  std::size_t max_live_executions = 64;
  std::size_t max_sessions = 16;
  std::uint64_t max_spool_bytes = 100ull << 20;      // per execution
  std::uint64_t max_total_spool_bytes = 2ull << 30;  // all executions
  std::uint64_t max_request_bytes = 4ull << 20;      // one MCP request
  std::uint64_t max_recording_bytes = 1ull << 30;    // STATE_DIR/recordings, all files
  std::size_t max_recordings = 500;                  // files in STATE_DIR/recordings

  // Reads the AGENTTY_* variables listed in policy_config_variables(); an
  // absent (or, except for the blocklist, empty) variable keeps the default.
  // Any invalid value fails with a message naming the variable.
  static Expected<PolicyConfig> from_environment(const std::map<std::string, std::string>& env);
};

struct PolicyConfigVariable {
  std::string_view name;
  std::string_view default_value;
  std::string_view description;
};

// For `--help`: every variable from_environment reads.
const std::vector<PolicyConfigVariable>& policy_config_variables();

// Validates a PCRE2 pattern; the error names `variable`, PCRE2's message and
// the offset in the pattern.
Expected<void> validate_pcre2_pattern(std::string_view variable, const std::string& pattern);

// The command text an argv is checked as: its elements joined by single
// spaces, unquoted (so `^git status` matches argv {"git", "status"}).
std::string join_argv_for_policy(const std::vector<std::string>& argv);

// ---------------------------------------------------------------------------
// The checks.

class Policy {
 public:
  // The config must have come from from_environment (or have valid regexes);
  // an invalid pattern here is a broken invariant and aborts.
  explicit Policy(PolicyConfig config = {});
  ~Policy();
  Policy(Policy&&) noexcept;
  Policy& operator=(Policy&&) noexcept;

  const PolicyConfig& config() const { return config_; }

  // Non-empty, canonical names, NONE alone, no duplicates, nothing blocked.
  Expected<void> check_side_effects(const std::vector<std::string>& declared) const;

  // Resolves symlinks and `..` (realpath; a relative path is taken from this
  // process's cwd; empty means this process's cwd, for a request that omitted
  // cwd). With allowed roots, the result must be a resolved root or a true
  // descendant of one. Returns the resolved directory.
  Expected<std::string> check_cwd(const std::string& cwd) const;

  // The deny regex must not match anywhere in the text; if an allow regex is
  // set it must match somewhere (anchor it with ^...$ to require a whole
  // match). The text is one of: a `command` string, join_argv_for_policy of an
  // argv, a `script` (one subject, so use (?m) for per-line anchors), a
  // command typed into a session, or, for `open`, the shell path joined with
  // its arguments: an allowlist must admit the shells it wants opened.
  Expected<void> check_command(std::string_view command_text) const;
  // The same rules for a line the agent submits with `write` into a shell
  // that reads it as a command (see TypedLines); the refusal quotes the line
  // and says nothing was written.
  Expected<void> check_typed_line(std::string_view line) const;

  // `live` / `sessions` are the counts before starting a new one.
  Expected<void> check_live_limit(std::size_t live) const;
  Expected<void> check_session_limit(std::size_t sessions) const;
  Expected<void> check_request_size(std::size_t bytes) const;
  // `used`: output spool bytes still held after the oldest ended executions
  // were dropped to make room (Registry::reclaim_spool), i.e. held by live ones.
  Expected<void> check_total_spool(std::uint64_t used) const;

 private:
  class Regex;
  Expected<void> check_text(std::string_view text, const std::string& refused,
                            std::string_view subject) const;
  PolicyConfig config_;
  std::unique_ptr<Regex> deny_;
  std::unique_ptr<Regex> allow_;
};

}  // namespace agentty::session
