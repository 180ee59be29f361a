// Redactor: streaming replacement of secret values by `[REDACTED:NAME]`.
//
// Output arrives in arbitrary chunks, so a secret may be split across them.
// process() emits everything that is decided and holds back only the longest
// suffix that could still grow into a secret (shorter than the longest
// secret); finish() flushes the rest. The result is the same for every
// chunking: at each position the leftmost match wins, and of the secrets
// starting there the longest; a match is replaced only once no longer or
// earlier match could still complete. A secret value never reaches the
// output, whatever the split.
//
// Escape sequences: a terminal (and the agent's text view) does not show
// escape sequences and C0 controls other than LF, TAB, CR and BS, so
// `SEC\e[1mRET` reads as `SECRET`. A second pass matches the secrets against
// the visible bytes alone (invisible units skipped) and replaces such a split
// secret by `[REDACTED:NAME]` followed by the invisible units that were inside
// it (colours and modes stay as the program set them). It holds back a
// possible visible prefix with the invisible units after it, at most
// kMaxHiddenBytes of them: a secret whose pieces are farther apart is not
// recognised. Not modelled (a terminal would join them, the stream does not):
// overwrites by bare CR or backspace, and cursor movement that paints the
// end of a secret before its start.
//
// Values shorter than kMinSecretBytes are ignored (replacing "1" or "true"
// everywhere would destroy the output and protect nothing).
//
// finish() may also be called on an idle timeout to release held bytes (a
// prompt that happens to be the start of a secret); the redactor stays usable.
// (Execution does not: releasing the first half of a secret early would let
// an agent reassemble it from two pages.)
//
// A redactor built on a SecretSet picks up secrets added to the set later,
// from its next process() call on; what it already emitted stays as it was.
//
// Threading: one instance per output stream, used on one thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace agentty::session {

class SecretSet;

class Redactor {
 public:
  static constexpr std::size_t kMinSecretBytes = 8;
  static constexpr std::size_t kMaxHiddenBytes = 64 * 1024;

  struct Secret {
    std::string name;
    std::string value;
  };

  explicit Redactor(std::vector<Secret> secrets);
  // name -> value
  explicit Redactor(const std::map<std::string, std::string>& secrets);
  // Follows `set`, including secrets added to it later.
  explicit Redactor(std::shared_ptr<const SecretSet> set);

  // Secrets from this process's environment whose NAME matches `name_regex`
  // (PCRE2, unanchored search; anchor it yourself), plus `extra` (name ->
  // value). An invalid regex is an error naming the PCRE2 message and offset.
  static Expected<Redactor> from_environment(const std::string& name_regex,
                                             const std::map<std::string, std::string>& extra);

  std::string process(std::string_view chunk);
  std::string finish();

  bool empty() const { return secrets_.empty(); }
  std::size_t held_bytes() const { return held_.size() + hidden_held_.size(); }
  const std::vector<Secret>& secrets() const { return secrets_; }

 private:
  void set_secrets(std::vector<Secret> secrets);
  std::string run(std::string_view chunk, bool final);
  std::size_t hold_point(std::string_view buffer, std::size_t from) const;
  // The escape-aware pass over run()'s output (see above).
  std::string run_hidden(std::string_view chunk, bool final);

  std::vector<Secret> secrets_;  // longest value first
  std::size_t longest_ = 0;
  std::string held_;
  std::string hidden_held_;               // run_hidden's held-back suffix
  std::shared_ptr<const SecretSet> set_;  // null: a fixed list
  std::uint64_t set_version_ = 0;         // of set_ when secrets_ was copied
};

// SecretSet: the server-wide list of secret values that every execution's
// redactor and the audit log replace. It starts with the values of this
// process's environment variables whose names match AGENTTY_REDACT_ENV_REGEX
// (snapshotted at start-up) and grows with matching entries of the `env`
// overlay an agent passes to execute or open. An overlay value is registered
// for every execution, not only the one that received it: a program can store
// it (a file, a config) where another execution prints it. Values are never
// removed, and values shorter than Redactor::kMinSecretBytes are ignored.
//
// Threading: all members may be called from any thread (a mutex guards the
// list; version() is atomic so a redactor's per-chunk check costs one load).
class SecretSet {
 public:
  // `name_regex` (PCRE2, unanchored search) selects variable names; empty
  // selects none (add() still works). An invalid regex is an error naming the
  // PCRE2 message and offset.
  static Expected<std::shared_ptr<SecretSet>> create(const std::string& name_regex);
  ~SecretSet();
  SecretSet(const SecretSet&) = delete;
  SecretSet& operator=(const SecretSet&) = delete;

  bool name_matches(std::string_view name) const;
  // Adds the values of entries whose name matches; returns how many were new.
  std::size_t add_matching(const std::map<std::string, std::string>& env);
  // add_matching over this process's environment now.
  std::size_t add_from_environment();
  // Adds one value whatever its name; false if too short or already known.
  bool add(std::string name, std::string value);

  std::vector<Redactor::Secret> secrets() const;
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }
  bool empty() const;
  // One whole text (an audit field, a recording title), no streaming.
  std::string redact(std::string_view text) const;

 private:
  struct Pattern;
  explicit SecretSet(std::unique_ptr<Pattern> pattern);

  std::unique_ptr<Pattern> pattern_;  // null: no name matches
  mutable std::mutex mutex_;
  std::vector<Redactor::Secret> secrets_;
  std::atomic<std::uint64_t> version_{0};
};

}  // namespace agentty::session
