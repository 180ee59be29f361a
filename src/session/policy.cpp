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
#include "session/policy_variables.hpp"

namespace agentty::session {

namespace {
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
