#include "session/redactor.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

extern char** environ;

namespace agentty::session {
namespace {

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

std::vector<Redactor::Secret> from_map(const std::map<std::string, std::string>& secrets) {
  std::vector<Redactor::Secret> list;
  for (const auto& [name, value] : secrets) list.push_back({name, value});
  return list;
}

}  // namespace

Redactor::Redactor(std::vector<Secret> secrets) {
  set_secrets(std::move(secrets));
}

Redactor::Redactor(const std::map<std::string, std::string>& secrets)
    : Redactor(from_map(secrets)) {}

Redactor::Redactor(std::shared_ptr<const SecretSet> set) : set_(std::move(set)) {
  set_version_ = set_->version();
  set_secrets(set_->secrets());
}

void Redactor::set_secrets(std::vector<Secret> secrets) {
  secrets_.clear();
  for (auto& secret : secrets) {
    if (secret.value.size() < kMinSecretBytes) continue;
    const bool duplicate = std::any_of(secrets_.begin(), secrets_.end(),
                                       [&](const Secret& s) { return s.value == secret.value; });
    if (!duplicate) secrets_.push_back(std::move(secret));
  }
  std::stable_sort(secrets_.begin(), secrets_.end(), [](const Secret& a, const Secret& b) {
    return a.value.size() > b.value.size();
  });
  longest_ = secrets_.empty() ? 0 : secrets_.front().value.size();
}

Expected<Redactor> Redactor::from_environment(const std::string& name_regex,
                                              const std::map<std::string, std::string>& extra) {
  auto set = SecretSet::create(name_regex);
  if (!set) return make_error(set.error());
  (*set)->add_from_environment();
  for (const auto& [name, value] : extra) (*set)->add(name, value);
  return Redactor((*set)->secrets());
}

std::string Redactor::process(std::string_view chunk) {
  return run(chunk, false);
}

std::string Redactor::finish() {
  return run({}, true);
}

// Earliest position q >= from where buffer[q..] is a proper prefix of some
// secret (it may still become that secret); buffer.size() when none.
std::size_t Redactor::hold_point(std::string_view buffer, std::size_t from) const {
  const std::size_t n = buffer.size();
  const std::size_t reach = std::min(n, longest_ > 0 ? longest_ - 1 : 0);
  for (std::size_t q = std::max(from, n - reach); q < n; ++q) {
    const std::string_view rest = buffer.substr(q);
    for (const Secret& secret : secrets_) {
      if (rest.size() < secret.value.size() && std::string_view(secret.value).starts_with(rest)) {
        return q;
      }
    }
  }
  return n;
}

std::string Redactor::run(std::string_view chunk, bool final) {
  if (set_ && set_->version() != set_version_) {
    set_version_ = set_->version();
    set_secrets(set_->secrets());
  }
  if (secrets_.empty() && held_.empty()) return std::string(chunk);
  std::string joined;
  std::string_view buffer = chunk;
  if (!held_.empty()) {
    joined = std::move(held_);
    held_.clear();
    joined.append(chunk);
    buffer = joined;
  }
  constexpr std::size_t kUnknown = std::string_view::npos - 1;
  std::vector<std::size_t> next(secrets_.size(), kUnknown);  // cached find() results
  std::string out;
  out.reserve(buffer.size());
  std::size_t pos = 0;
  std::size_t hold = final ? buffer.size() : hold_point(buffer, 0);
  for (;;) {
    std::size_t best = std::string_view::npos;
    const Secret* best_secret = nullptr;
    for (std::size_t i = 0; i < secrets_.size(); ++i) {
      if (next[i] == kUnknown || (next[i] != std::string_view::npos && next[i] < pos)) {
        next[i] = buffer.find(secrets_[i].value, pos);
      }
      if (next[i] < best) {  // strict: of equal starts the longer (earlier) secret wins
        best = next[i];
        best_secret = &secrets_[i];
      }
    }
    if (hold < pos) hold = hold_point(buffer, pos);
    if (best_secret == nullptr || best >= hold) break;
    out.append(buffer.substr(pos, best - pos));
    out += "[REDACTED:" + best_secret->name + "]";
    pos = best + best_secret->value.size();
  }
  out.append(buffer.substr(pos, hold - pos));
  held_.assign(buffer.substr(hold));
  return out;
}

// ---------------------------------------------------------------------------

struct SecretSet::Pattern {
  std::unique_ptr<pcre2_code, CodeDeleter> code;
};

Expected<std::shared_ptr<SecretSet>> SecretSet::create(const std::string& name_regex) {
  if (name_regex.empty()) return std::shared_ptr<SecretSet>(new SecretSet(nullptr));
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  auto pattern = std::make_unique<Pattern>();
  pattern->code.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(name_regex.data()),
                                    name_regex.size(), PCRE2_UTF, &error_code, &error_offset,
                                    nullptr));
  if (!pattern->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    return make_error("redaction name regex is invalid at offset " + std::to_string(error_offset) +
                      ": " + reinterpret_cast<const char*>(message) + "; fix the regex '" +
                      name_regex + "'");
  }
  return std::shared_ptr<SecretSet>(new SecretSet(std::move(pattern)));
}

SecretSet::SecretSet(std::unique_ptr<Pattern> pattern) : pattern_(std::move(pattern)) {}
SecretSet::~SecretSet() = default;

bool SecretSet::name_matches(std::string_view name) const {
  if (!pattern_) return false;
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(pattern_->code.get(), nullptr));
  if (!match) std::abort();
  return pcre2_match(pattern_->code.get(), reinterpret_cast<PCRE2_SPTR>(name.data()), name.size(),
                     0, 0, match.get(), nullptr) >= 0;
}

std::size_t SecretSet::add_matching(const std::map<std::string, std::string>& env) {
  std::size_t added = 0;
  for (const auto& [name, value] : env) {
    if (name_matches(name) && add(name, value)) ++added;
  }
  return added;
}

std::size_t SecretSet::add_from_environment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view line(*entry);
    const std::size_t equals = line.find('=');
    if (equals != std::string_view::npos)
      env.emplace(std::string(line.substr(0, equals)), std::string(line.substr(equals + 1)));
  }
  return add_matching(env);
}

bool SecretSet::add(std::string name, std::string value) {
  if (value.size() < Redactor::kMinSecretBytes) return false;
  std::lock_guard lock(mutex_);
  for (const auto& secret : secrets_) {
    if (secret.value == value) return false;
  }
  secrets_.push_back({std::move(name), std::move(value)});
  version_.fetch_add(1, std::memory_order_release);
  return true;
}

std::vector<Redactor::Secret> SecretSet::secrets() const {
  std::lock_guard lock(mutex_);
  return secrets_;
}

bool SecretSet::empty() const {
  std::lock_guard lock(mutex_);
  return secrets_.empty();
}

std::string SecretSet::redact(std::string_view text) const {
  Redactor redactor(secrets());
  if (redactor.empty()) return std::string(text);
  std::string out = redactor.process(text);
  return out + redactor.finish();
}

}  // namespace agentty::session
