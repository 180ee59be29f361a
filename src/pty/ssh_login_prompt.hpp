// SshLoginPrompt: the line editor behind a password or keyboard-interactive
// prompt that a person answers in a remote execution's terminal while its SSH
// connection logs in. The connection shows the prompt as terminal output and
// feeds every byte typed into that terminal here; this class decides what to
// show back (nothing of a hidden answer: no echo, no stars) and when an
// answer is complete (Enter) or the person gave up (ctrl-c, or ctrl-d on an
// empty line).
//
// Editing: backspace/DEL remove the last character (whole UTF-8 sequences),
// ctrl-u clears the line, escape sequences (arrow keys, function keys,
// bracketed-paste markers) are ignored, other control characters are dropped.
// Bytes after the Enter of a chunk, and bytes typed while no prompt is
// active, are discarded: nothing typed during a login ever reaches the
// remote program. Answers longer than kMaxAnswer bytes are cut.
//
// The typed text is wiped from memory (explicit_bzero) when the prompt ends;
// callers wipe the answer they receive with wipe() once it is submitted.
// Pure: no I/O; not thread-safe (the one event loop owns it).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace agentty::pty {

class SshLoginPrompt {
 public:
  static constexpr std::size_t kMaxAnswer = 1024;

  struct Result {
    std::string echo;                   // what the terminal shows for these bytes
    std::optional<std::string> answer;  // the line, once Enter was typed
    bool cancelled = false;             // ctrl-c, or ctrl-d on an empty line
  };

  SshLoginPrompt() = default;
  ~SshLoginPrompt();
  SshLoginPrompt(const SshLoginPrompt&) = delete;
  SshLoginPrompt& operator=(const SshLoginPrompt&) = delete;

  // A new prompt: forgets what was typed. `echo` false hides the answer.
  void begin(bool echo);
  // No prompt any more (answered elsewhere, or the login ended).
  void end();
  bool active() const { return active_; }
  bool echo() const { return echo_; }

  Result feed(std::string_view bytes);

 private:
  enum class Escape { none, esc, csi, ss3 };

  void erase_last(Result& result);
  void clear_line(Result& result);

  std::string typed_;
  bool active_ = false;
  bool echo_ = false;
  Escape escape_ = Escape::none;
};

// Overwrites `secret` before clearing it, so the bytes do not linger in freed memory.
void wipe(std::string& secret);

}  // namespace agentty::pty
