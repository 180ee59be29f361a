#include "session/redactor.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

#include "base/pcre2_handles.hpp"
#include "session/text_view.hpp"

extern char** environ;

namespace agentty::session {
namespace {

std::vector<Redactor::Secret> from_map(const std::map<std::string, std::string>& secrets) {
  std::vector<Redactor::Secret> list;
  for (const auto& [name, value] : secrets) list.push_back({name, value});
  return list;
}

// VisibleProjection: the bytes of a terminal stream that a reader sees, with
// where each came from. Escape sequences (as the text view cuts them) and C0
// controls other than LF, TAB, CR and BS are invisible; every other byte is
// visible, one for one. The redactor matches secrets against visible() to
// find a secret split by colour codes (`SEC\e[1mRET`), then maps the match
// back to the raw bytes with offset().
//
// A unit the raw bytes end inside (an unfinished escape sequence) is the
// "tail": it is neither visible nor hidden, and cut_before() stops before it
// so the caller can hold it until it completes, unless `final` or it is
// already longer than kMaxTailBytes (then it counts as hidden).
class VisibleProjection {
 public:
  static constexpr std::size_t kMaxTailBytes = 4096;

  VisibleProjection(std::string_view raw, bool final);

  std::string_view visible() const { return identity_ ? raw_.substr(0, tail_) : visible_; }
  // Offset in raw of visible byte i.
  std::size_t offset(std::size_t i) const { return identity_ ? i : offsets_[i]; }
  // True when some invisible unit lies between visible bytes or after them.
  bool has_hidden() const { return !hidden_.empty(); }
  // Invisible bytes (and the tail) from visible byte i to the end of raw.
  std::size_t hidden_bytes_from(std::size_t i) const {
    return (raw_.size() - offset(i)) - (visible().size() - i);
  }
  // Appends the invisible units that lie inside raw[begin, end) to `out`.
  void append_hidden(std::size_t begin, std::size_t end, std::string& out) const;
  // Where raw must be cut to keep visible bytes from `i` on (and the tail) back.
  std::size_t cut_before(std::size_t i) const { return i < visible().size() ? offset(i) : tail_; }

 private:
  std::string_view raw_;
  bool identity_ = true;  // nothing invisible before the tail: visible is raw
  std::string visible_;
  std::vector<std::uint32_t> offsets_;
  std::vector<std::pair<std::size_t, std::size_t>> hidden_;  // (offset, length), in order
  std::size_t tail_ = 0;                                     // start of the tail (raw size: none)
};

bool invisible_control(unsigned char c) {
  return (c < 0x20 && c != '\n' && c != '\t' && c != '\r' && c != '\b') || c == 0x7f;
}

VisibleProjection::VisibleProjection(std::string_view raw, bool final) : raw_(raw) {
  tail_ = raw.size();
  const auto first = std::find_if(raw.begin(), raw.end(), [](char c) {
    return invisible_control(static_cast<unsigned char>(c));
  });
  if (first == raw.end()) return;
  std::size_t i = static_cast<std::size_t>(first - raw.begin());
  identity_ = false;
  visible_.reserve(raw.size());
  offsets_.reserve(raw.size());
  for (std::size_t v = 0; v < i; ++v) {
    visible_ += raw[v];
    offsets_.push_back(static_cast<std::uint32_t>(v));
  }
  while (i < raw.size()) {
    const unsigned char c = static_cast<unsigned char>(raw[i]);
    if (!invisible_control(c)) {
      visible_ += raw[i];
      offsets_.push_back(static_cast<std::uint32_t>(i++));
      continue;
    }
    std::size_t length = 1;
    if (c == 0x1b) {
      length = complete_unit_length(raw.substr(i));
      if (length == 0) {  // raw ends inside this sequence
        if (!final && raw.size() - i <= kMaxTailBytes) {
          tail_ = i;
          return;
        }
        length = raw.size() - i;
      }
    }
    hidden_.emplace_back(i, length);
    i += length;
  }
}

void VisibleProjection::append_hidden(std::size_t begin, std::size_t end, std::string& out) const {
  auto it = std::lower_bound(hidden_.begin(), hidden_.end(), std::make_pair(begin, std::size_t{0}));
  for (; it != hidden_.end() && it->first < end; ++it)
    out.append(raw_.substr(it->first, it->second));
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
  return run_hidden(run(chunk, false), false);
}

std::string Redactor::finish() {
  return run_hidden(run({}, true), true);
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

std::string Redactor::run_hidden(std::string_view chunk, bool final) {
  if (secrets_.empty() && hidden_held_.empty()) return std::string(chunk);
  std::string joined;
  std::string_view buffer = chunk;
  if (!hidden_held_.empty()) {
    joined = std::move(hidden_held_);
    hidden_held_.clear();
    joined.append(chunk);
    buffer = joined;
  }
  const VisibleProjection view(buffer, final);
  const std::string_view visible = view.visible();
  // Earliest visible position that may still grow into a secret, with not too
  // many invisible bytes after it.
  auto hold_from = [&](std::size_t from) {
    for (std::size_t q = hold_point(visible, from); q < visible.size();
         q = hold_point(visible, q + 1)) {
      if (view.hidden_bytes_from(q) <= kMaxHiddenBytes) return q;
    }
    return visible.size();
  };
  std::size_t hold = final ? visible.size() : hold_from(0);
  std::string out;
  out.reserve(buffer.size());
  std::size_t pos = 0;   // in buffer
  std::size_t vpos = 0;  // in visible
  while (view.has_hidden() && vpos < hold) {
    std::size_t best = std::string_view::npos;
    const Secret* best_secret = nullptr;
    for (const Secret& secret : secrets_) {
      const std::size_t at = visible.find(secret.value, vpos);
      if (at < best) {  // strict: of equal starts the longer (earlier) secret wins
        best = at;
        best_secret = &secret;
      }
    }
    if (best_secret == nullptr || best >= hold) break;
    const std::size_t begin = view.offset(best);
    const std::size_t end = view.offset(best + best_secret->value.size() - 1) + 1;
    out.append(buffer.substr(pos, begin - pos));
    out += "[REDACTED:" + best_secret->name + "]";
    view.append_hidden(begin, end, out);
    pos = end;
    vpos = best + best_secret->value.size();
    if (!final && hold < vpos) hold = hold_from(vpos);
  }
  std::size_t cut = final ? buffer.size() : view.cut_before(hold);
  cut = std::max(cut, pos);
  out.append(buffer.substr(pos, cut - pos));
  hidden_held_.assign(buffer.substr(cut));
  return out;
}

// ---------------------------------------------------------------------------

struct SecretSet::Pattern {
  Pcre2Code code;
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
  Pcre2MatchData match(pcre2_match_data_create_from_pattern(pattern_->code.get(), nullptr));
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
