#include "session/screen.hpp"

#include <vterm.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include "base/utf8.hpp"
#include "session/escape_scanner.hpp"
#include "session/line_ring.hpp"
#include "session/screen_cells.hpp"
#include "session/wide_stand_ins.hpp"

namespace agentty::session {
namespace {

struct VTermDeleter {
  void operator()(VTerm* vt) const { vterm_free(vt); }
};

// An unfinished sequence longer than this is fed anyway (libvterm truncates
// long strings itself); mode probes then wait until the parser is clean.
constexpr std::size_t kMaxHeldBytes = 64 * 1024;
constexpr std::size_t kMaxWriteBytes = 32 * 1024;
// Titles xterm keeps on its stack (CSI 22 t); a program pushing more loses
// the oldest.
constexpr std::size_t kMaxSavedTitles = 10;

// Length of an unfinished UTF-8 character at the end of `data`.
std::size_t incomplete_utf8_tail(std::string_view data) {
  return data.size() - complete_utf8_prefix(data);
}

// Whether `bytes` may switch to the alternate screen: a DECSET (CSI ? ... h)
// naming mode 47, 1047 or 1049. False positives only cost the buffer early.
bool may_enter_alt_screen(std::string_view bytes) {
  for (std::size_t at = bytes.find('?'); at != std::string_view::npos;
       at = bytes.find('?', at + 1)) {
    // CSI is ESC [ or C1 0x9b (a raw byte: as UTF-8, c2 9b, it is dropped in feed()).
    const bool after_csi =
        at >= 1 &&
        (bytes[at - 1] == '\x9b' || (at >= 2 && bytes[at - 1] == '[' && bytes[at - 2] == '\x1b'));
    if (!after_csi) continue;
    bool names_alt = false;
    int param = 0;
    std::size_t i = at + 1;
    for (; i < bytes.size(); ++i) {
      const char c = bytes[i];
      if (c >= '0' && c <= '9') {
        param = std::min(param * 10 + (c - '0'), 100000);
      } else if (c == ';' || c == ':') {
        names_alt |= param == 47 || param == 1047 || param == 1049;
        param = 0;
      } else {
        break;
      }
    }
    names_alt |= param == 47 || param == 1047 || param == 1049;
    if (names_alt && i < bytes.size() && bytes[i] == 'h') return true;
  }
  return false;
}

std::string cup(int row, int col) {
  return "\x1b[" + std::to_string(row + 1) + ";" + std::to_string(col + 1) + "H";
}

}  // namespace

// What an ended execution's screen still answers with once libvterm is gone.
struct FrozenScreen {
  pty::TerminalSize size;
  std::vector<std::string> lines;
  std::vector<std::string> styled_lines;
  std::string ansi;
  ScreenCursor cursor;
  ScreenModes modes;
};

struct Screen::Impl {
  std::unique_ptr<FrozenScreen> frozen;
  std::unique_ptr<VTerm, VTermDeleter> vt;
  VTermScreen* vscreen = nullptr;
  VTermState* state = nullptr;
  std::string replies;
  std::string* output_sink = &replies;  // diverted while probing modes
  // Bytes of an unfinished escape sequence or UTF-8 character, held back so
  // that libvterm's parser is always between sequences after feed(): that
  // keeps mode probes safe and OSC strings whole across PTY reads.
  EscapeScanner scanner;
  std::string held;
  bool parser_clean = true;
  std::map<int, bool> mode_cache;           // answers from the last clean probe
  LineRing scrollback;                      // styled (SGR), as styled_lines()
  std::vector<VTermScreenCell> pushed_row;  // the row on_sb_pushline repairs
  std::uint64_t scrolled_off = 0;           // lines ever pushed to it
  std::size_t scrollback_limit = 0;
  bool capture_scrollback = true;
  std::string title;
  std::vector<std::string> saved_titles;  // CSI 22 t pushes, CSI 23 t pops
  bool alt_screen = false;
  bool alt_screen_allocated = false;
  bool cursor_visible = true;

  VTermScreenCell cell_at(int row, int col) const {
    VTermScreenCell cell{};
    vterm_screen_get_cell(vscreen, VTermPos{row, col}, &cell);
    return cell;
  }

  std::vector<VTermScreenCell> row_cells(int row, int cols) const {
    std::vector<VTermScreenCell> cells(static_cast<std::size_t>(cols));
    for (int col = 0; col < cols; ++col) cells[static_cast<std::size_t>(col)] = cell_at(row, col);
    repair_wide_halves(cells.data(), cols);
    return cells;
  }

  // The pen programs draw with next.
  VTermScreenCell pen() const {
    VTermScreenCell pen{};
    VTermValue v;
    vterm_state_get_penattr(state, VTERM_ATTR_BOLD, &v), pen.attrs.bold = v.boolean;
    vterm_state_get_penattr(state, VTERM_ATTR_ITALIC, &v), pen.attrs.italic = v.boolean;
    vterm_state_get_penattr(state, VTERM_ATTR_UNDERLINE, &v), pen.attrs.underline = v.number;
    vterm_state_get_penattr(state, VTERM_ATTR_BLINK, &v), pen.attrs.blink = v.boolean;
    vterm_state_get_penattr(state, VTERM_ATTR_REVERSE, &v), pen.attrs.reverse = v.boolean;
    vterm_state_get_penattr(state, VTERM_ATTR_STRIKE, &v), pen.attrs.strike = v.boolean;
    vterm_state_get_penattr(state, VTERM_ATTR_FOREGROUND, &v), pen.fg = v.color;
    vterm_state_get_penattr(state, VTERM_ATTR_BACKGROUND, &v), pen.bg = v.color;
    return pen;
  }

  void push_scrollback(std::string_view styled_line) {
    scrollback.push_back(styled_line);
    ++scrolled_off;
    while (scrollback.size() > scrollback_limit ||
           scrollback.bytes() > Screen::kMaxScrollbackBytes) {
      scrollback.pop_front();
    }
  }

  // Feeds a query and returns libvterm's answer instead of queueing it.
  std::string ask(std::string_view query) {
    std::string answer;
    output_sink = &answer;
    vterm_input_write(vt.get(), query.data(), query.size());
    output_sink = &replies;
    return answer;
  }

  // DECRQM for a private mode: reply is CSI ? mode ; Pm $ y, Pm 1/3 = set.
  bool dec_mode(int mode) {
    if (!parser_clean) return mode_cache[mode];
    std::string answer = ask("\x1b[?" + std::to_string(mode) + "$p");
    auto semi = answer.find(';');
    if (semi == std::string::npos || semi + 1 >= answer.size()) return false;
    char pm = answer[semi + 1];
    return mode_cache[mode] = (pm == '1' || pm == '3');
  }

  // libvterm 0.1 sizes a stack array by the whole rest of the buffer at every
  // text run, so one large write overflows the stack: write in pieces, cut
  // after a LF where possible (a cut inside an OSC string truncates it).
  void write(std::string_view bytes) {
    // The alternate screen's cells (~170 KB at 120x40) are allocated when a
    // program first asks for it, not for every execution: most never do,
    // and an ended one's screen is kept for looks.
    if (!alt_screen_allocated && may_enter_alt_screen(bytes)) {
      vterm_screen_enable_altscreen(vscreen, 1);
      alt_screen_allocated = true;
    }
    // xterm's CSI 3 J (the last part of `clear`) erases the scrollback, as
    // xterm.js and tmux do; libvterm ignores it, and the scrollback is ours.
    constexpr std::string_view kEraseScrollback = "\x1b[3J";
    while (!bytes.empty()) {
      std::size_t piece = bytes.size();
      if (piece > kMaxWriteBytes) {
        auto lf = bytes.substr(0, kMaxWriteBytes).rfind('\n');
        piece = lf == std::string_view::npos ? kMaxWriteBytes : lf + 1;
      }
      const std::size_t erase = bytes.substr(0, piece).find(kEraseScrollback);
      if (erase != std::string_view::npos) piece = erase + kEraseScrollback.size();
      vterm_input_write(vt.get(), bytes.data(), piece);
      if (erase != std::string_view::npos) scrollback = LineRing{};
      bytes.remove_prefix(piece);
    }
  }

  void feed(std::string_view bytes) {
    std::uint64_t held_start = scanner.position() - held.size();
    scanner.scan(bytes);
    std::string joined;
    std::string_view data = bytes;
    if (!held.empty()) {
      joined = std::move(held) + std::string(bytes);
      held.clear();
      data = joined;
    }
    std::size_t keep = data.size();
    bool clean = true;
    if (scanner.in_ground()) {
      keep -= incomplete_utf8_tail(data);
    } else if (scanner.sequence_start() >= held_start) {
      keep = static_cast<std::size_t>(scanner.sequence_start() - held_start);
    } else {
      clean = false;  // began in bytes already given up on
    }
    if (data.size() - keep > kMaxHeldBytes) {
      keep = data.size();
      clean = false;
    }
    std::string without_c1;
    std::string widened;
    write(with_wide_stand_ins(without_utf8_c1_controls(data.substr(0, keep), without_c1), widened));
    held.assign(data.substr(keep));
    parser_clean = clean;
  }

  static void on_output(const char* bytes, std::size_t len, void* user) {
    static_cast<Impl*>(user)->output_sink->append(bytes, len);
  }
  static int on_settermprop(VTermProp prop, VTermValue* value, void* user) {
    auto* self = static_cast<Impl*>(user);
    switch (prop) {
      case VTERM_PROP_ALTSCREEN:
        self->alt_screen = value->boolean != 0;
        break;
      case VTERM_PROP_CURSORVISIBLE:
        self->cursor_visible = value->boolean != 0;
        break;
      case VTERM_PROP_TITLE:
        self->title = without_wide_stand_ins(value->string ? value->string : "");
        break;
      default:
        break;
    }
    return 1;  // 0 would make libvterm reject the change (e.g. alt screen)
  }
  static int on_sb_pushline(int cols, const VTermScreenCell* cells, void* user) {
    auto* self = static_cast<Impl*>(user);
    if (!self->capture_scrollback) return 1;
    self->pushed_row.assign(cells, cells + cols);  // reused: a flood scrolls every line
    repair_wide_halves(self->pushed_row.data(), cols);
    self->push_scrollback(cells_to_styled(self->pushed_row.data(), cols));
    return 1;
  }
  static int on_sb_popline(int, VTermScreenCell*, void*) { return 0; }

  // XTWINOPS title stack, which libvterm 0.1 leaves to its user: CSI 22;Ps t
  // saves and CSI 23;Ps t restores the window title (Ps 0: with the icon
  // name, 2: alone, 1: the icon name only, which is not modelled).
  static int on_unrecognised_csi(const char* leader, const long args[], int argcount,
                                 const char* intermed, char command, void* user) {
    if (command != 't' || leader || intermed || argcount < 1) return 0;
    long op = CSI_ARG(args[0]);
    long which = argcount > 1 && !CSI_ARG_IS_MISSING(args[1]) ? CSI_ARG(args[1]) : 0;
    if ((op != 22 && op != 23) || which == 1) return 0;
    auto* self = static_cast<Impl*>(user);
    if (op == 22) {
      self->saved_titles.push_back(self->title);
      if (self->saved_titles.size() > kMaxSavedTitles) {
        self->saved_titles.erase(self->saved_titles.begin());
      }
    } else if (!self->saved_titles.empty()) {
      self->title = std::move(self->saved_titles.back());
      self->saved_titles.pop_back();
    }
    return 1;
  }

  static constexpr VTermScreenCallbacks kCallbacks = {
      .damage = nullptr,
      .moverect = nullptr,
      .movecursor = nullptr,
      .settermprop = &on_settermprop,
      .bell = nullptr,
      .resize = nullptr,
      .sb_pushline = &on_sb_pushline,
      .sb_popline = &on_sb_popline,
  };
  static constexpr VTermParserCallbacks kFallbacks = {
      .text = nullptr,
      .control = nullptr,
      .escape = nullptr,
      .csi = &on_unrecognised_csi,
      .osc = nullptr,
      .dcs = nullptr,
      .resize = nullptr,
  };
};

Screen::Screen(pty::TerminalSize size, std::size_t scrollback_limit)
    : impl_(std::make_unique<Impl>()) {
  impl_->scrollback_limit = scrollback_limit;
  impl_->vt.reset(vterm_new(size.rows, size.cols));
  if (!impl_->vt) std::abort();
  VTerm* vt = impl_->vt.get();
  vterm_set_utf8(vt, 1);
  vterm_output_set_callback(vt, &Impl::on_output, impl_.get());
  impl_->vscreen = vterm_obtain_screen(vt);
  impl_->state = vterm_obtain_state(vt);
  vterm_screen_set_callbacks(impl_->vscreen, &Impl::kCallbacks, impl_.get());
  vterm_screen_set_unrecognised_fallbacks(impl_->vscreen, &Impl::kFallbacks, impl_.get());
  vterm_screen_reset(impl_->vscreen, 1);
}

Screen::~Screen() = default;

void Screen::feed(std::string_view bytes) {
  if (!impl_->frozen) impl_->feed(bytes);
}

void Screen::resize(pty::TerminalSize size) {
  if (size.rows == 0 || size.cols == 0 || impl_->frozen) return;
  vterm_set_size(impl_->vt.get(), size.rows, size.cols);
}

pty::TerminalSize Screen::size() const {
  if (impl_->frozen) return impl_->frozen->size;
  int rows = 0, cols = 0;
  vterm_get_size(impl_->vt.get(), &rows, &cols);
  return pty::TerminalSize{static_cast<std::uint16_t>(cols), static_cast<std::uint16_t>(rows)};
}

std::string Screen::take_replies() {
  return std::exchange(impl_->replies, {});
}

const std::string& Screen::title() const {
  return impl_->title;
}

ScreenModes Screen::modes() const {
  if (impl_->frozen) return impl_->frozen->modes;
  ScreenModes modes;
  modes.alt_screen = impl_->alt_screen;
  modes.application_cursor_keys = impl_->dec_mode(1);
  modes.bracketed_paste = impl_->dec_mode(2004);
  modes.mouse = impl_->dec_mode(1000) || impl_->dec_mode(1002) || impl_->dec_mode(1003);
  return modes;
}

ScreenCursor Screen::cursor() const {
  if (impl_->frozen) return impl_->frozen->cursor;
  VTermPos pos{};
  vterm_state_get_cursorpos(impl_->state, &pos);
  return ScreenCursor{pos.row, pos.col, impl_->cursor_visible};
}

ScreenSnapshot Screen::snapshot(std::size_t scrollback_lines) const {
  ScreenSnapshot snap;
  auto size = this->size();
  snap.cols = size.cols;
  snap.rows = size.rows;
  if (impl_->frozen) {
    snap.lines = impl_->frozen->lines;
  } else {
    for (int row = 0; row < size.rows; ++row) {
      snap.lines.push_back(cells_to_text(impl_->row_cells(row, size.cols).data(), size.cols));
    }
  }
  for (auto& line : styled_scrollback(scrollback_lines)) {
    snap.scrollback.push_back(without_sgr(line));
  }
  snap.cursor = cursor();
  snap.modes = modes();
  snap.title = impl_->title;
  return snap;
}

std::string Screen::render_ansi() const {
  if (impl_->frozen) return impl_->frozen->ansi;
  auto size = this->size();
  std::string out =
      "\x1b"
      "c";
  if (impl_->alt_screen) out += "\x1b[?1049h";
  if (!impl_->title.empty()) {
    out += "\x1b]2;";
    for (char c : impl_->title) {
      if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
    }
    out += '\x07';
  }
  for (int row = 0; row < size.rows; ++row) {
    auto cells = impl_->row_cells(row, size.cols);
    int last = last_shown_col(cells.data(), size.cols);
    if (last < 0) continue;
    out += cup(row, 0);
    VTermScreenCell pen{};
    bool pen_known = false;
    for (int col = 0; col <= last; ++col) {
      const auto& cell = cells[static_cast<std::size_t>(col)];
      if (cell.chars[0] == kWidePlaceholder) continue;
      if (!pen_known || !same_look(cell, pen)) {
        out += sgr_for(cell.attrs, cell.fg, cell.bg);
        pen = cell;
        pen_known = true;
      }
      append_cell_text(out, cell);
    }
    out += "\x1b[0m";
  }
  // The pen programs will draw with next.
  auto pen = impl_->pen();
  out += sgr_for(pen.attrs, pen.fg, pen.bg);

  for (int mode : {1, 2004, 1000, 1002, 1003, 1005, 1006, 1015}) {
    if (impl_->dec_mode(mode)) out += "\x1b[?" + std::to_string(mode) + "h";
  }
  VTermPos pos{};
  vterm_state_get_cursorpos(impl_->state, &pos);
  out += cup(pos.row, pos.col);
  if (!impl_->cursor_visible) out += "\x1b[?25l";
  return out;
}

std::vector<std::string> Screen::styled_lines() const {
  if (impl_->frozen) return impl_->frozen->styled_lines;
  auto size = this->size();
  std::vector<std::string> rows;
  rows.reserve(static_cast<std::size_t>(size.rows));
  for (int row = 0; row < size.rows; ++row) {
    rows.push_back(cells_to_styled(impl_->row_cells(row, size.cols).data(), size.cols));
  }
  return rows;
}

std::uint64_t Screen::scrolled_off_lines() const {
  return impl_->scrolled_off;
}

std::vector<std::string> Screen::styled_scrollback(std::size_t lines) const {
  return impl_->scrollback.newest(lines);
}

bool Screen::plain_text_scrolls_simply() const {
  if (impl_->frozen || impl_->alt_screen || !impl_->parser_clean || !impl_->held.empty())
    return false;
  // Lines the feeder stores itself get the pen's colours (append_scrollback);
  // a background, reverse video or underline would also show on blanks.
  if (!looks_default(impl_->pen())) return false;
  // DECRQSS for DECSTBM: DCS 1 $ r top ; bottom r ST.
  std::string region = impl_->ask("\x1bP$qr\x1b\\");
  std::string full = "1$r1;" + std::to_string(size().rows) + "r";
  if (region.find(full) == std::string::npos) return false;
  return impl_->dec_mode(7) && !impl_->dec_mode(69);
}

void Screen::freeze() {
  if (impl_->frozen) return;
  auto frozen = std::make_unique<FrozenScreen>();
  frozen->size = size();
  frozen->lines = snapshot().lines;
  frozen->styled_lines = styled_lines();
  frozen->ansi = render_ansi();
  frozen->cursor = cursor();
  frozen->modes = modes();
  impl_->frozen = std::move(frozen);
  impl_->vt.reset();
  impl_->vscreen = nullptr;
  impl_->state = nullptr;
  std::string().swap(impl_->held);
  std::string().swap(impl_->replies);
  impl_->scrollback.shrink_to_fit();
}

bool Screen::frozen() const {
  return impl_->frozen != nullptr;
}

void Screen::set_scrollback_capture(bool on) {
  impl_->capture_scrollback = on;
}

void Screen::append_scrollback(std::string line) {
  if (impl_->frozen) return;
  auto pen = impl_->pen();
  if (line.empty() || looks_plain(pen)) return impl_->push_scrollback(line);
  impl_->push_scrollback(sgr_for(pen.attrs, pen.fg, pen.bg) + line + "\x1b[0m");
}

}  // namespace agentty::session
