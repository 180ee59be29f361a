// PolicyConfig from the environment (AGENTTY_*): the variables, their
// documentation for --help, and the parsing that refuses a bad value at
// startup with a message naming it.
#include "session/policy.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "base/ascii_space.hpp"
#include "session/policy_variables.hpp"

namespace agentty::session {

namespace {

constexpr std::uint64_t kMinRequestBytes = 64 << 10;

const std::vector<PolicyConfigVariable> kVariables = {
    {kBlockedVar,
     "KILLS_AGENT_PROCESS,MODIFIES_OS_SETTINGS,MODIFIES_OS_USER_SETTINGS,MODIFIES_PROTECTED_FILES,"
     "RUNS_INLINE_CODE",
     "Comma-separated side-effect categories that execute refuses before starting anything. "
     "Case-sensitive; whitespace trimmed; empty entries ignored; ',' (or any value with no "
     "entries) clears the list. An unknown name fails startup."},
    {kAllowedCwdsVar, "(any)",
     "Colon-separated absolute directories; a cwd must resolve (symlinks and .. followed) to one "
     "of them or below."},
    {kDenyVar, "(none)",
     "PCRE2 pattern; a command whose text matches it anywhere is refused. Invalid patterns fail "
     "startup."},
    {kAllowVar, "(none)",
     "PCRE2 pattern; when set, only commands whose text matches it are run (anchor with ^...$ for "
     "a whole match). Invalid patterns fail startup."},
    {kRedactVar, "(none)",
     "PCRE2 pattern for environment variable names whose values are masked in output. Invalid "
     "patterns fail startup."},
    {kMaxExecutionsVar, "64", "Maximum executions running at once."},
    {kMaxSessionsVar, "16", "Maximum open interactive sessions."},
    {kMaxSpoolVar, "100MiB",
     "Output kept on disk per execution; older output beyond it is gone. Accepts K/M/G "
     "suffixes."},
    {kMaxTotalSpoolVar, "2GiB",
     "Output kept across all executions. A new execution first drops the records of the oldest "
     "ended executions (as cleanup would) until the total is under it; if running executions "
     "alone hold it, the new execution is refused."},
    {kMaxRequestVar, "4MiB", "Largest MCP request accepted."},
    {kMaxRecordingBytesVar, "1GiB",
     "Asciicast recordings kept in STATE_DIR/recordings, all files together; the oldest are "
     "deleted first when a new recording starts. One recording is also cut at this size or at 256 "
     "MiB, whichever is lower."},
    {kMaxRecordingsVar, "500",
     "Recording files kept in STATE_DIR/recordings; the oldest are deleted first."},
};

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = text.find(separator);
    parts.push_back(trim_ascii_space(text.substr(0, at)));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// A positive decimal count; `bytes` also accepts K, M, G (binary, optionally
// with "iB", e.g. 512MiB).
Expected<std::uint64_t> parse_count(std::string_view variable, std::string_view raw, bool bytes) {
  const std::string_view text = trim_ascii_space(raw);
  const auto digits_end = text.find_first_not_of("0123456789");
  const std::string_view digits = text.substr(0, digits_end);
  std::string_view suffix = digits_end == std::string_view::npos ? "" : text.substr(digits_end);
  std::uint64_t shift = 0;
  if (bytes && !suffix.empty()) {
    const std::string_view units = "KMG";
    const auto unit = units.find(suffix.front());
    if (unit != std::string_view::npos && (suffix.size() == 1 || suffix.substr(1) == "iB")) {
      shift = 10 * (unit + 1);
      suffix = {};
    }
  }
  std::uint64_t value = 0;
  bool valid = !digits.empty() && suffix.empty();
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() >> shift;
  for (const char c : digits) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (limit - digit) / 10) {
      valid = false;
      break;
    }
    value = value * 10 + digit;
  }
  if (!valid || value == 0) {
    return make_error(
        std::string(variable) + "='" + std::string(raw) + "' is not a positive " +
        (bytes ? "byte count (digits, optionally followed by K, M or G)" : "whole number") +
        "; fix or unset it.");
  }
  return value << shift;
}

Expected<std::set<SideEffect>> parse_blocklist(std::string_view value) {
  std::set<SideEffect> blocked;
  for (const std::string_view entry : split(value, ',')) {
    if (entry.empty()) continue;
    const auto effect = side_effect_from_name(entry);
    if (!effect) {
      return make_error(std::string(kBlockedVar) + ": unknown side effect '" + std::string(entry) +
                        "' (names are case-sensitive). Valid names: " + side_effect_names_joined() +
                        ". Use ',' to block nothing.");
    }
    blocked.insert(*effect);
  }
  return blocked;
}

Expected<std::vector<std::string>> parse_roots(std::string_view value) {
  std::vector<std::string> roots;
  for (const std::string_view entry : split(value, ':')) {
    if (entry.empty()) continue;
    if (entry.front() != '/') {
      return make_error(std::string(kAllowedCwdsVar) + ": '" + std::string(entry) +
                        "' is not an absolute path; list absolute directories separated by ':'.");
    }
    // A root that is not there allows nothing, silently: every cwd under it
    // would be refused later, naming a directory the agent did not choose.
    std::error_code error;
    if (!std::filesystem::is_directory(std::string(entry), error)) {
      return make_error(std::string(kAllowedCwdsVar) + ": '" + std::string(entry) +
                        "' is not an existing directory; create it or remove it from the list.");
    }
    roots.emplace_back(entry);
  }
  return roots;
}

}  // namespace

const std::vector<PolicyConfigVariable>& policy_config_variables() {
  return kVariables;
}

Expected<PolicyConfig> PolicyConfig::from_environment(
    const std::map<std::string, std::string>& env) {
  PolicyConfig config;
  auto get = [&](std::string_view name) -> const std::string* {
    const auto it = env.find(std::string(name));
    return it == env.end() ? nullptr : &it->second;
  };
  if (const auto* value = get(kBlockedVar)) {
    auto blocked = parse_blocklist(*value);
    if (!blocked) return make_error(blocked.error());
    config.blocked_side_effects = std::move(blocked.value());
  }
  if (const auto* value = get(kAllowedCwdsVar)) {
    auto roots = parse_roots(*value);
    if (!roots) return make_error(roots.error());
    config.allowed_cwds = std::move(roots.value());
  }
  const std::pair<std::string_view, std::string*> patterns[] = {
      {kDenyVar, &config.deny_command_regex},
      {kAllowVar, &config.allow_command_regex},
      {kRedactVar, &config.redact_env_regex}};
  for (const auto& [name, target] : patterns) {
    const auto* value = get(name);
    if (!value || value->empty()) continue;
    if (auto valid = validate_pcre2_pattern(name, *value); !valid) return make_error(valid.error());
    *target = *value;
  }
  struct Count {
    std::string_view name;
    bool bytes;
    std::uint64_t* target;
  };
  std::uint64_t live = config.max_live_executions, sessions = config.max_sessions;
  std::uint64_t recordings = config.max_recordings;
  const Count counts[] = {{kMaxExecutionsVar, false, &live},
                          {kMaxSessionsVar, false, &sessions},
                          {kMaxSpoolVar, true, &config.max_spool_bytes},
                          {kMaxTotalSpoolVar, true, &config.max_total_spool_bytes},
                          {kMaxRequestVar, true, &config.max_request_bytes},
                          {kMaxRecordingBytesVar, true, &config.max_recording_bytes},
                          {kMaxRecordingsVar, false, &recordings}};
  for (const auto& count : counts) {
    const auto* value = get(count.name);
    if (!value || trim_ascii_space(*value).empty()) continue;
    auto parsed = parse_count(count.name, *value, count.bytes);
    if (!parsed) return make_error(parsed.error());
    *count.target = *parsed;
  }
  if (config.max_request_bytes < kMinRequestBytes) {
    return make_error(std::string(kMaxRequestVar) + "=" + std::to_string(config.max_request_bytes) +
                      " is below the minimum of 64KiB: even initialize would be refused; raise "
                      "it or unset it (default 4MiB).");
  }
  config.max_live_executions = static_cast<std::size_t>(live);
  config.max_sessions = static_cast<std::size_t>(sessions);
  config.max_recordings = static_cast<std::size_t>(recordings);
  return config;
}

}  // namespace agentty::session
