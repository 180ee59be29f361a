// Screen: the libvterm model of what a terminal shows. Pure: bytes in, state
// out, no I/O. Terminal replies (DA, DSR/CPR, DECRQM answers) are collected and
// handed to the caller, who writes them to the PTY.
//
// Scrollback: lines that scroll off the top of the main screen are kept in
// our own bounded store (libvterm keeps none) as styled lines (the SGR of
// styled_lines()), so a viewer's history keeps the program's colours, as
// tmux's does; snapshot() gives them as trimmed UTF-8 text.
//
// Modes (DECCKM, bracketed paste, mouse) are not exposed by libvterm 0.1, so
// they are read by asking libvterm itself (DECRQM) with its replies diverted:
// whatever sequence set or reset them (RIS, DECSTR, ?1049), the answer is
// libvterm's own state.
//
// Threading: one instance per execution, used only on the I/O event loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pty/pty_channel.hpp"

namespace agentty::session {

struct ScreenCursor {
  int row = 0;
  int col = 0;
  bool visible = true;
};

struct ScreenModes {
  bool alt_screen = false;
  bool application_cursor_keys = false;  // DECCKM: arrows send ESC O A
  bool bracketed_paste = false;
  bool mouse = false;
};

struct ScreenSnapshot {
  int cols = 0;
  int rows = 0;
  std::vector<std::string> lines;       // visible rows, UTF-8, trailing blanks trimmed
  std::vector<std::string> scrollback;  // oldest first (only when asked for)
  ScreenCursor cursor;
  ScreenModes modes;
  std::string title;
};

class Screen {
 public:
  // The scrollback keeps the newest scrollback_limit lines, and of them at
  // most this many bytes of styled text: an ended execution's record keeps
  // its screen, and 10000 lines with a colour per character took ~12 MB.
  static constexpr std::size_t kMaxScrollbackBytes = 1 << 20;

  explicit Screen(pty::TerminalSize size, std::size_t scrollback_limit = 10000);
  ~Screen();
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

  void feed(std::string_view bytes);
  void resize(pty::TerminalSize size);
  pty::TerminalSize size() const;

  // Replies libvterm generated since the last call (to be written to the PTY).
  std::string take_replies();

  ScreenSnapshot snapshot(std::size_t scrollback_lines = 0) const;
  ScreenModes modes() const;
  ScreenCursor cursor() const;
  const std::string& title() const;
  // The visible rows with SGR sequences where the look changes (bold,
  // italic, underline, blink, reverse video, strike, 256 and RGB colours),
  // each from a reset pen and back to it at its end; trailing blanks that
  // show nothing left out. What `tmux capture-pane -e` gives: the
  // selected item of a menu drawn in reverse video, a highlighted match.
  std::vector<std::string> styled_lines() const;
  // The newest `lines` scrolled-off lines, oldest first, styled as
  // styled_lines() (what a viewer puts in its history).
  std::vector<std::string> styled_scrollback(std::size_t lines) const;
  // Lines ever scrolled off (the store keeps the newest scrollback_limit):
  // a viewer that saw the history up to N needs the newest
  // scrolled_off_lines() - N lines.
  std::uint64_t scrolled_off_lines() const;
  // For a screen kept for looks after its program ended: keeps what the
  // accessors give (rows, styled rows, render_ansi(), cursor, modes) and
  // frees libvterm's cells (~170 KB at 120x40) and what the scrollback's
  // growth left spare. Later feed() and resize() calls are ignored.
  void freeze();
  bool frozen() const;
  // Escape sequences that redraw the current screen on a fresh terminal
  // (reset, rows with SGR, cursor, modes): what a new browser viewer gets.
  std::string render_ansi() const;

  // --- For ScreenFeeder's bulk path (see screen_feeder.hpp). ---
  // True when printable ASCII, CR and LF behave as on a plain teletype:
  // main screen, scroll region = whole screen, autowrap on, no left/right
  // margins, a pen without background, reverse video or underline. (Insert mode, newline mode and
  // character sets are not queryable in libvterm 0.1; the feeder tracks those in the byte stream.)
  bool plain_text_scrolls_simply() const;
  // While off, lines libvterm scrolls off are not stored (the feeder stores
  // its own, computed without libvterm).
  void set_scrollback_capture(bool on);
  // A line of plain text drawn with the current pen (its colours are kept).
  void append_scrollback(std::string line);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentty::session
