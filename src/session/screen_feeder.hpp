// ScreenFeeder: keeps a Screen exact without paying libvterm's per-line cost
// on bulk output.
//
// Every output byte is handed to on_output() in log order. Bytes that may hold
// a terminal query (which a program waits on) are fed at once, so replies go
// out promptly. Other bytes are queued; catch_up() brings the screen up to
// date when someone looks (screen tool, a new viewer, an idle moment). A long
// run of plain text that would scroll off entirely is not fed through
// libvterm: its lines go straight to the scrollback and only the last
// screenful is fed, which gives the same screen (proved by the differential
// tests against tmux).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "session/screen.hpp"

namespace agentty::session {

class ScreenFeeder {
 public:
  explicit ScreenFeeder(pty::TerminalSize size, std::size_t scrollback_limit = 10000);
  ~ScreenFeeder();

  void on_output(std::string_view bytes);
  // Feeds everything queued. Cheap when nothing is queued.
  void catch_up();
  bool behind() const;
  void resize(pty::TerminalSize size);  // catches up first

  // Replies to terminal queries produced so far (write them to the PTY).
  std::string take_replies();

  // The model; exact only after catch_up().
  const Screen& screen() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentty::session
