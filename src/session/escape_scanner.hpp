// EscapeScanner: a small shadow of libvterm's parser that follows a terminal
// byte stream just far enough to answer three questions cheaply:
//  - did a query libvterm answers (DA, DSR/CPR, DECRQM, DECRQSS) just end?
//  - is the stream between escape sequences ("ground"), and where did the
//    unfinished sequence at the end begin?
//  - does printable ASCII print as itself (G0 = ASCII shifted in, no insert
//    mode IRM, no newline mode LNM)? libvterm 0.1 cannot be asked this.
//  - how many sequences that may rewrite the whole screen (erase in display,
//    reset, alignment test, index and reverse index, insert and delete
//    lines, scroll, scroll region, alternate screen) went by: libvterm's
//    cost for each is the screen's size, not the sequence's.
//
// It errs on the safe side: string sequences (OSC, DCS, ...) end only where
// libvterm certainly ends them, and any CSI ending in c, n or p counts as a
// query. Only 7-bit sequences exist here because libvterm runs in UTF-8
// mode, where 0x80-0x9F are not C1 controls.
//
// Threading: a plain value; one owner.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace agentty::session {

class EscapeScanner {
 public:
  // Advances over every byte exactly (tracks SO/SI). True if a query ended.
  bool step(unsigned char c) {
    ++position_;
    switch (state_) {
      case State::ground:
        return ground(c);
      case State::escape:
        return escape(c);
      case State::escape_intermediate:
        return escape_intermediate(c);
      case State::csi:
        return csi(c);
      case State::string:
        return string(c);
      case State::string_escape:
        return string_escape(c);
    }
    return false;
  }

  // Like step() over all bytes, but skips text with memchr. Does not follow
  // SO/SI, so plain_ascii_is_literal() is meaningless for an instance fed
  // this way. True if any query ended.
  bool scan(std::string_view bytes) {
    bool query = false;
    const char* p = bytes.data();
    const char* end = p + bytes.size();
    while (p < end) {
      if (state_ == State::ground) {
        const void* esc = std::memchr(p, 0x1b, static_cast<std::size_t>(end - p));
        if (!esc) {
          position_ += static_cast<std::uint64_t>(end - p);
          break;
        }
        position_ += static_cast<std::uint64_t>(static_cast<const char*>(esc) - p);
        p = static_cast<const char*>(esc);
      }
      query |= step(static_cast<unsigned char>(*p++));
    }
    return query;
  }

  bool in_ground() const { return state_ == State::ground; }
  std::uint64_t screen_wide_sequences() const { return screen_wide_sequences_; }
  std::uint64_t position() const { return position_; }
  // Position of the ESC that began the unfinished sequence (when not ground).
  std::uint64_t sequence_start() const { return sequence_start_; }
  bool plain_ascii_is_literal() const {
    return gl_ == 0 && g_ascii_[0] && !insert_mode_ && !newline_mode_;
  }

 private:
  enum class State { ground, escape, escape_intermediate, csi, string, string_escape };
  static constexpr unsigned char kEsc = 0x1b, kCan = 0x18, kSub = 0x1a, kBel = 0x07;

  bool ground(unsigned char c) {
    if (c == kEsc) begin_escape();
    if (c == 0x0e) gl_ = 1;  // SO
    if (c == 0x0f) gl_ = 0;  // SI
    return false;
  }
  void begin_escape() {
    state_ = State::escape;
    sequence_start_ = position_ - 1;
  }
  bool escape(unsigned char c) {
    if (c == kEsc) return begin_escape(), false;
    if (c == kCan || c == kSub) return state_ = State::ground, false;
    if (c < 0x20) return false;  // C0 controls execute inside the sequence
    if (c >= 0x20 && c <= 0x2f) {
      intermediate_ = c;
      state_ = State::escape_intermediate;
      return false;
    }
    state_ = State::ground;
    if (c == 'c' || c == 'D' || c == 'E' || c == 'M')
      ++screen_wide_sequences_;  // RIS, IND, NEL, RI
    switch (c) {
      case '[':
        state_ = State::csi;
        csi_private_ = false;
        csi_intermediate_ = 0;
        csi_param_ = 0;
        csi_has_4_ = csi_has_20_ = csi_has_alt_screen_ = false;
        break;
      case ']':
      case 'P':
      case 'X':
      case '^':
      case '_':
        state_ = State::string;
        string_kind_ = static_cast<char>(c);
        break;
      case 'c':
        reset();
        break;  // RIS
      case 'n':
        gl_ = 2;
        break;  // LS2
      case 'o':
        gl_ = 3;
        break;  // LS3
      default:
        break;
    }
    return false;
  }
  bool escape_intermediate(unsigned char c) {
    if (c == kEsc) return begin_escape(), false;
    if (c == kCan || c == kSub) return state_ = State::ground, false;
    if (c < 0x30) return false;
    state_ = State::ground;
    if (intermediate_ >= '(' && intermediate_ <= '+') g_ascii_[intermediate_ - '('] = (c == 'B');
    if (intermediate_ == '#' && c == '8') ++screen_wide_sequences_;  // DECALN
    return false;
  }
  bool csi(unsigned char c) {
    if (c == kEsc) return begin_escape(), false;
    if (c == kCan || c == kSub) return state_ = State::ground, false;
    if (c < 0x20) return false;
    if (c >= '0' && c <= '9') {
      csi_param_ = csi_param_ * 10 + (c - '0');
      if (csi_param_ > 100000) csi_param_ = 100000;
      return false;
    }
    if (c == ';' || c == ':') return end_param(), false;
    if (c >= '<' && c <= '?') return csi_private_ = true, false;
    if (c < 0x40) return csi_intermediate_ = static_cast<char>(c), false;
    end_param();
    state_ = State::ground;
    if (std::strchr("JLMSTr", c) || ((c == 'h' || c == 'l') && csi_has_alt_screen_))
      ++screen_wide_sequences_;
    if (c == 'c' || c == 'n' || c == 'p') return true;
    if ((c == 'h' || c == 'l') && !csi_private_ && csi_intermediate_ == 0) {
      if (csi_has_4_) insert_mode_ = (c == 'h');
      if (csi_has_20_) newline_mode_ = (c == 'h');
    }
    return false;
  }
  void end_param() {
    csi_has_4_ |= csi_param_ == 4;
    csi_has_20_ |= csi_param_ == 20;
    csi_has_alt_screen_ |=
        csi_private_ && (csi_param_ == 47 || csi_param_ == 1047 || csi_param_ == 1049);
    csi_param_ = 0;
  }
  bool string(unsigned char c) {
    if (c == kEsc) state_ = State::string_escape;
    if (c == kBel && string_kind_ == ']') state_ = State::ground;
    return false;
  }
  bool string_escape(unsigned char c) {
    if (c == '\\') {
      state_ = State::ground;
      return string_kind_ == 'P';  // DECRQSS and other DCS requests
    }
    // ESC inside a string that is not ST: treat as a new escape sequence.
    state_ = State::escape;
    sequence_start_ = position_ - 2;
    return escape(c);
  }
  void reset() {
    gl_ = 0;
    g_ascii_[0] = g_ascii_[1] = g_ascii_[2] = g_ascii_[3] = true;
    insert_mode_ = newline_mode_ = false;
  }

  State state_ = State::ground;
  std::uint64_t position_ = 0;
  std::uint64_t sequence_start_ = 0;
  unsigned char intermediate_ = 0;
  char string_kind_ = 0;
  bool csi_private_ = false;
  char csi_intermediate_ = 0;
  int csi_param_ = 0;
  bool csi_has_4_ = false;
  bool csi_has_20_ = false;
  bool csi_has_alt_screen_ = false;
  int gl_ = 0;
  std::uint64_t screen_wide_sequences_ = 0;
  bool g_ascii_[4] = {true, true, true, true};
  bool insert_mode_ = false;
  bool newline_mode_ = false;
};

}  // namespace agentty::session
