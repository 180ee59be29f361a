#include "pty/ssh_login_prompt.hpp"

#include <string.h>  // explicit_bzero

#include "base/utf8.hpp"

namespace agentty::pty {

namespace {

constexpr char kCtrlC = 0x03;
constexpr char kCtrlD = 0x04;
constexpr char kBackspace = 0x08;
constexpr char kCtrlU = 0x15;
constexpr char kEscape = 0x1b;
constexpr char kDelete = 0x7f;

}  // namespace

void wipe(std::string& secret) {
  if (!secret.empty()) explicit_bzero(secret.data(), secret.size());
  secret.clear();
}

SshLoginPrompt::~SshLoginPrompt() {
  wipe(typed_);
}

void SshLoginPrompt::begin(bool echo) {
  wipe(typed_);
  active_ = true;
  echo_ = echo;
  escape_ = Escape::none;
}

void SshLoginPrompt::end() {
  wipe(typed_);
  active_ = false;
}

void SshLoginPrompt::erase_last(Result& result) {
  if (typed_.empty()) return;
  const std::size_t keep = utf8_char_start(typed_, typed_.size() - 1);
  explicit_bzero(typed_.data() + keep, typed_.size() - keep);
  typed_.resize(keep);
  if (echo_) result.echo += "\b \b";  // a wide character leaves a cell behind; rare in answers
}

void SshLoginPrompt::clear_line(Result& result) {
  while (!typed_.empty()) erase_last(result);
}

SshLoginPrompt::Result SshLoginPrompt::feed(std::string_view bytes) {
  Result result;
  for (char c : bytes) {
    if (!active_) break;
    switch (escape_) {
      case Escape::esc:
        escape_ = c == '[' ? Escape::csi : c == 'O' ? Escape::ss3 : Escape::none;
        continue;
      case Escape::csi:
        if (c >= 0x40 && c <= 0x7e) escape_ = Escape::none;  // the final byte
        continue;
      case Escape::ss3:
        escape_ = Escape::none;
        continue;
      case Escape::none:
        break;
    }
    if (c == '\r' || c == '\n') {
      result.echo += "\r\n";
      result.answer = typed_;
      end();
    } else if (c == kCtrlC || (c == kCtrlD && typed_.empty())) {
      result.echo += c == kCtrlC ? "^C\r\n" : "\r\n";
      result.cancelled = true;
      end();
    } else if (c == kDelete || c == kBackspace) {
      erase_last(result);
    } else if (c == kCtrlU) {
      clear_line(result);
    } else if (c == kEscape) {
      escape_ = Escape::esc;
    } else if (static_cast<unsigned char>(c) >= 0x20 && typed_.size() < kMaxAnswer) {
      typed_ += c;
      if (echo_) result.echo += c;
    }
  }
  return result;
}

}  // namespace agentty::pty
