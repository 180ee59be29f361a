#include "session/policy.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>

#include "base/errno_message.hpp"
#include "base/pcre2_handles.hpp"

namespace agentty::session {

namespace {

constexpr std::string_view kBlockedVar = "AGENTTY_BLOCKED_SIDE_EFFECTS";
constexpr std::string_view kAllowedCwdsVar = "AGENTTY_ALLOWED_CWDS";
constexpr std::string_view kDenyVar = "AGENTTY_DENY_COMMAND_REGEX";
constexpr std::string_view kAllowVar = "AGENTTY_ALLOW_COMMAND_REGEX";
constexpr std::string_view kRedactVar = "AGENTTY_REDACT_ENV_REGEX";
constexpr std::string_view kMaxExecutionsVar = "AGENTTY_MAX_EXECUTIONS";
constexpr std::string_view kMaxSessionsVar = "AGENTTY_MAX_SESSIONS";
constexpr std::string_view kMaxSpoolVar = "AGENTTY_MAX_SPOOL_BYTES";
constexpr std::string_view kMaxTotalSpoolVar = "AGENTTY_MAX_TOTAL_SPOOL_BYTES";
constexpr std::string_view kMaxRequestVar = "AGENTTY_MAX_REQUEST_BYTES";
constexpr std::uint64_t kMinRequestBytes = 64 << 10;
constexpr std::string_view kMaxRecordingBytesVar = "AGENTTY_MAX_RECORDING_BYTES";
constexpr std::string_view kMaxRecordingsVar = "AGENTTY_MAX_RECORDINGS";

// A call without cwd (or with a relative one) while the server's own
// directory is gone (a checkout removed under it): "create it first" would
// not help, since a directory made again under that name is another one.
std::optional<std::string> server_dir_gone(const std::string& shown, const std::string& cwd) {
  if (!cwd.empty() && cwd[0] == '/') return std::nullopt;
  std::error_code error;
  if (!std::filesystem::current_path(error).empty()) return std::nullopt;  // getcwd works
  std::string was = std::filesystem::read_symlink("/proc/self/cwd", error).string();
  if (constexpr std::string_view kDeleted = " (deleted)"; was.ends_with(kDeleted))
    was.resize(was.size() - kDeleted.size());
  return "cwd '" + shown + "' cannot be used: the server's working directory" +
         (was.empty() ? "" : " " + was) +
         " was removed after agentty started, so there is no directory to run in. Pass an "
         "absolute cwd that exists; an operator can restart agentty in an existing directory "
         "or with --default-cwd (AGENTTY_DEFAULT_CWD).";
}

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
     "deleted first when a new recording starts. One recording is also cut at this size."},
    {kMaxRecordingsVar, "500",
     "Recording files kept in STATE_DIR/recordings; the oldest are deleted first."},
};

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = text.find(separator);
    parts.push_back(trim(text.substr(0, at)));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// A positive decimal count; `bytes` also accepts K, M, G (binary, optionally
// with "iB", e.g. 512MiB).
Expected<std::uint64_t> parse_count(std::string_view variable, std::string_view raw, bool bytes) {
  const std::string_view text = trim(raw);
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

using CodePtr = Pcre2Code;

Expected<CodePtr> compile_pattern(std::string_view variable, const std::string& pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  // UCP: without it PCRE2 10.42's JIT with MATCH_INVALID_UTF fails \S, \D
  // and \W on every non-ASCII character, so a deny rule such as
  // 'rm\s+-rf\s+\S' let `rm -rf ébauche` through; with it \w and \b know
  // non-ASCII letters too, as the agent-facing patterns do.
  CodePtr code(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                             &error_offset, nullptr));
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    return make_error(std::string(variable) +
                      " is not a valid PCRE2 pattern: " + reinterpret_cast<const char*>(message) +
                      " at offset " + std::to_string(error_offset) + " in '" + pattern + "'.");
  }
  // JIT is an optimisation only: without it (unsupported CPU) matching still works.
  pcre2_jit_compile(code.get(), PCRE2_JIT_COMPLETE);
  return code;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "'" : ", '") + item + "'";
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------

const std::vector<PolicyConfigVariable>& policy_config_variables() {
  return kVariables;
}

Expected<void> validate_pcre2_pattern(std::string_view variable, const std::string& pattern) {
  auto code = compile_pattern(variable, pattern);
  if (!code) return make_error(code.error());
  return {};
}

std::string join_argv_for_policy(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (&arg != &argv.front()) out += ' ';
    out += arg;
  }
  return out;
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
    if (!value || trim(*value).empty()) continue;
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

// ---------------------------------------------------------------------------

class Policy::Regex {
 public:
  Regex(std::string pattern, CodePtr code) : pattern_(std::move(pattern)), code_(std::move(code)) {}
  const std::string& pattern() const { return pattern_; }

  // nullopt: PCRE2 could not decide (match or depth limit hit).
  std::optional<bool> search(std::string_view subject) const {
    Pcre2MatchData data(pcre2_match_data_create_from_pattern(code_.get(), nullptr));
    if (!data) std::abort();
    const int rc = pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()),
                               subject.size(), 0, 0, data.get(), nullptr);
    if (rc >= 0) return true;
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    return std::nullopt;
  }

 private:
  std::string pattern_;
  CodePtr code_;
};

Policy::Policy(PolicyConfig config) : config_(std::move(config)) {
  auto make = [](std::string_view variable, const std::string& pattern) {
    std::unique_ptr<Regex> regex;
    if (pattern.empty()) return regex;
    auto code = compile_pattern(variable, pattern);
    if (!code) std::abort();  // the config was validated by from_environment
    regex = std::make_unique<Regex>(pattern, std::move(code.value()));
    return regex;
  };
  deny_ = make(kDenyVar, config_.deny_command_regex);
  allow_ = make(kAllowVar, config_.allow_command_regex);
}

Policy::~Policy() = default;
Policy::Policy(Policy&&) noexcept = default;
Policy& Policy::operator=(Policy&&) noexcept = default;

Expected<void> Policy::check_side_effects(const std::vector<std::string>& declared) const {
  const std::string valid = " Valid names: " + side_effect_names_joined() + ".";
  if (declared.empty()) {
    return make_error(
        "side_effects must list at least one category; use [\"NONE\"] for a read-only command." +
        valid);
  }
  std::vector<SideEffect> effects;
  for (const auto& name : declared) {
    const auto effect = side_effect_from_name(name);
    if (!effect) {
      return make_error("side_effects: unknown category '" + name +
                        "' (names are case-sensitive)." + valid);
    }
    if (std::find(effects.begin(), effects.end(), *effect) != effects.end()) {
      return make_error("side_effects lists '" + name + "' twice; list each category once.");
    }
    effects.push_back(*effect);
  }
  if (effects.size() > 1 &&
      std::find(effects.begin(), effects.end(), SideEffect::kNone) != effects.end()) {
    return make_error(
        "side_effects: NONE is exclusive; use [\"NONE\"] alone for a read-only command, or drop "
        "NONE and list the real categories.");
  }
  std::vector<SideEffect> blocked;
  for (const auto effect : effects) {
    if (config_.blocked_side_effects.contains(effect)) blocked.push_back(effect);
  }
  if (blocked.empty()) return {};
  std::string names;
  std::string steps;
  for (const auto effect : blocked) {
    const auto& info = side_effect_info(effect);
    names += (names.empty() ? "" : ", ") + std::string(info.name);
    steps += "\n- " + std::string(info.name) + ": " + std::string(info.safer_next_step);
  }
  return make_error("Blocked by policy before anything started: side_effects declares " + names +
                    ", which the operator has blocked. Nothing was run. Safer next step:" + steps +
                    "\nAn operator can change the blocked categories with " +
                    std::string(kBlockedVar) + " (set it to ',' to block none).");
}

Expected<std::string> Policy::check_cwd(const std::string& cwd) const {
  // Empty: the agent omitted cwd and the program would inherit this server's
  // directory, which must satisfy the roots like any other.
  const std::string shown = cwd.empty() ? "(omitted: the server's working directory)" : cwd;
  std::unique_ptr<char, decltype(&std::free)> resolved(
      ::realpath(cwd.empty() ? "." : cwd.c_str(), nullptr), &std::free);
  if (!resolved) {
    const int err = errno;
    if (err == ENOENT) {
      if (auto gone = server_dir_gone(shown, cwd)) return make_error(*gone);
      // A relative path is this server's: say from where, so an agent that
      // meant its project's directory sees why.
      std::error_code ignored;
      std::string base = !cwd.empty() && cwd[0] != '/'
                             ? " (relative to the server's directory " +
                                   std::filesystem::current_path(ignored).string() +
                                   "; pass an absolute path)"
                             : "";
      // `~` is a shell's expansion; a cwd is a path as it is (a host's `~` is
      // its home: SSH starts there).
      const char* home = std::getenv("HOME");
      if ((cwd == "~" || cwd.starts_with("~/")) && home && *home == '/')
        base =
            " ('~' is not expanded in a local cwd; pass the absolute path: " + std::string(home) +
            cwd.substr(1) + ")";
      return make_error("cwd '" + shown + "'" + base +
                        " does not exist; create it first or pass an existing "
                        "directory.");
    }
    if (err == ENOTDIR) return make_error("cwd '" + shown + "' is not a directory.");
    return make_error("cwd '" + shown + "' cannot be resolved: " + errno_message("realpath", err));
  }
  const std::string path = resolved.get();
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return make_error("cwd '" + shown + "' cannot be used: " + errno_message("stat"));
  }
  if (!S_ISDIR(info.st_mode)) {
    return make_error("cwd '" + shown +
                      "' is not a directory; pass the directory that contains it.");
  }
  if (config_.allowed_cwds.empty()) return path;
  for (const auto& root : config_.allowed_cwds) {
    std::unique_ptr<char, decltype(&std::free)> real_root(::realpath(root.c_str(), nullptr),
                                                          &std::free);
    if (!real_root) continue;  // a missing root admits nothing (yet)
    const std::string_view base = real_root.get();
    if (path == base || base == "/") return path;
    if (path.size() > base.size() && path.starts_with(base) && path[base.size()] == '/') {
      return path;
    }
  }
  return make_error("cwd '" + shown + "' (resolved to '" + path +
                    "') is outside the allowed directories " + quoted_list(config_.allowed_cwds) +
                    ". Refused by policy before anything started. Pass a cwd under one of them; "
                    "an operator can add a root to " +
                    std::string(kAllowedCwdsVar) + ".");
}

Expected<void> Policy::check_command(std::string_view command_text) const {
  return check_text(command_text, "Command refused by policy before anything started: it",
                    "commands");
}

Expected<void> Policy::check_typed_line(std::string_view line) const {
  std::string shown(line.substr(0, 200));
  if (line.size() > 200) shown += "...";
  return check_text(line,
                    "Input refused by policy; nothing was written. The line it submits to the "
                    "session's shell (`" +
                        shown + "`)",
                    "commands (lines typed at a shell prompt count)");
}

Expected<void> Policy::check_text(std::string_view text, const std::string& refused,
                                  std::string_view subject) const {
  if (deny_) {
    const auto hit = deny_->search(text);
    if (!hit || *hit) {
      return make_error(refused + " " + (hit ? "matches" : "could not be checked against") +
                        " the deny pattern " + std::string(kDenyVar) + "='" + deny_->pattern() +
                        "'. Use a command that does not match it, or ask the operator to change "
                        "that variable.");
    }
  }
  if (allow_) {
    const auto hit = allow_->search(text);
    if (!hit || !*hit) {
      return make_error(refused + " " + (hit ? "does not match" : "could not be checked against") +
                        " the allow pattern " + std::string(kAllowVar) + "='" + allow_->pattern() +
                        "'. Only " + std::string(subject) +
                        " matching it may run; rewrite the command to fit, or ask the operator "
                        "to change that variable.");
    }
  }
  return {};
}

Expected<void> Policy::check_live_limit(std::size_t live) const {
  if (live < config_.max_live_executions) return {};
  return make_error("Refused before anything started: " + std::to_string(live) +
                    (live == 1 ? " execution is" : " executions are") +
                    " running and the limit is " + std::to_string(config_.max_live_executions) +
                    ". Stop executions you no longer need (see `ps`, then `stop` or `close`) or "
                    "wait for them to finish, then retry; `cleanup` prunes finished records. An "
                    "operator can raise " +
                    std::string(kMaxExecutionsVar) + ".");
}

Expected<void> Policy::check_session_limit(std::size_t sessions) const {
  if (sessions < config_.max_sessions) return {};
  return make_error("Refused before anything started: " + std::to_string(sessions) +
                    (sessions == 1 ? " session is" : " sessions are") + " open and the limit is " +
                    std::to_string(config_.max_sessions) +
                    ". Reuse an open session with execute(session=...), or `close` one you no "
                    "longer need (see `ps`), then retry. An operator can raise " +
                    std::string(kMaxSessionsVar) + ".");
}

Expected<void> Policy::check_request_size(std::size_t bytes) const {
  if (bytes <= config_.max_request_bytes) return {};
  return make_error("Request of " + std::to_string(bytes) + " bytes is larger than the limit of " +
                    std::to_string(config_.max_request_bytes) +
                    " bytes. Send large content as a file in the workspace instead; an operator "
                    "can raise " +
                    std::string(kMaxRequestVar) + ".");
}

Expected<void> Policy::check_total_spool(std::uint64_t used) const {
  if (used < config_.max_total_spool_bytes) return {};
  return make_error("Refused before anything started: running executions hold " +
                    std::to_string(used) + " bytes of output and the limit for all executions is " +
                    std::to_string(config_.max_total_spool_bytes) + " bytes (" +
                    std::string(kMaxTotalSpoolVar) +
                    "); ended executions were already dropped to make room. Stop executions whose "
                    "output you no longer need (see `ps`, then `stop` or `close`), then `cleanup` "
                    "and retry. An operator can raise " +
                    std::string(kMaxTotalSpoolVar) + ".");
}

}  // namespace agentty::session
