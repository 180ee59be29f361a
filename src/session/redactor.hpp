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
// Values shorter than kMinSecretBytes are ignored (replacing "1" or "true"
// everywhere would destroy the output and protect nothing).
//
// finish() may also be called on an idle timeout to release held bytes (a
// prompt that happens to be the start of a secret); the redactor stays usable.
//
// Threading: one instance per output stream, used on one thread.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace agentty::session {

class Redactor {
 public:
  static constexpr std::size_t kMinSecretBytes = 8;

  struct Secret {
    std::string name;
    std::string value;
  };

  explicit Redactor(std::vector<Secret> secrets);
  // name -> value
  explicit Redactor(const std::map<std::string, std::string>& secrets);

  // Secrets from this process's environment whose NAME matches `name_regex`
  // (PCRE2, unanchored search; anchor it yourself), plus `extra` (name ->
  // value). An invalid regex is an error naming the PCRE2 message and offset.
  static Expected<Redactor> from_environment(const std::string& name_regex,
                                             const std::map<std::string, std::string>& extra);

  std::string process(std::string_view chunk);
  std::string finish();

  bool empty() const { return secrets_.empty(); }
  std::size_t held_bytes() const { return held_.size(); }
  const std::vector<Secret>& secrets() const { return secrets_; }

 private:
  std::string run(std::string_view chunk, bool final);
  std::size_t hold_point(std::string_view buffer, std::size_t from) const;

  std::vector<Secret> secrets_;  // longest value first
  std::size_t longest_ = 0;
  std::string held_;
};

}  // namespace agentty::session
