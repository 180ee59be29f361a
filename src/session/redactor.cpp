#include "session/redactor.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
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
  for (auto& secret : secrets) {
    if (secret.value.size() < kMinSecretBytes) continue;
    const bool duplicate = std::any_of(secrets_.begin(), secrets_.end(),
                                       [&](const Secret& s) { return s.value == secret.value; });
    if (!duplicate) secrets_.push_back(std::move(secret));
  }
  std::stable_sort(secrets_.begin(), secrets_.end(), [](const Secret& a, const Secret& b) {
    return a.value.size() > b.value.size();
  });
  if (!secrets_.empty()) longest_ = secrets_.front().value.size();
}

Redactor::Redactor(const std::map<std::string, std::string>& secrets)
    : Redactor(from_map(secrets)) {}

Expected<Redactor> Redactor::from_environment(const std::string& name_regex,
                                              const std::map<std::string, std::string>& extra) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  std::unique_ptr<pcre2_code, CodeDeleter> code(
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(name_regex.data()), name_regex.size(), PCRE2_UTF,
                    &error_code, &error_offset, nullptr));
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    return make_error("redaction name regex is invalid at offset " + std::to_string(error_offset) +
                      ": " + reinterpret_cast<const char*>(message) + "; fix the regex '" +
                      name_regex + "'");
  }
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(code.get(), nullptr));
  std::vector<Secret> secrets;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view line(*entry);
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, equals);
    const int rc = pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(name.data()), name.size(),
                               0, 0, match.get(), nullptr);
    if (rc >= 0) secrets.push_back({std::string(name), std::string(line.substr(equals + 1))});
  }
  for (const auto& [name, value] : extra) secrets.push_back({name, value});
  return Redactor(std::move(secrets));
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

}  // namespace agentty::session
