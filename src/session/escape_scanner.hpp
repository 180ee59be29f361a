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
//  - is the sequence that just ended a repeat that changes nothing? Erase
//    in display 2 and 3, reset (RIS) and cursor home are each idempotent and
//    commute with one another, so in a run of them with no other byte in
//    between, only the first of each kind has an effect. A program printing
//    `\e[2J` or `\ec` flat out sends nothing else, and each one costs
//    libvterm ~10 us (the screen's every cell). A screen alignment test
//    (DECALN, `\e#8`) right after another changes nothing either: it fills
//    every cell with E in the current pen and moves nothing, so with no byte
//    between, the second writes what the first did. It does not commute
//    with the others, so only a DECALN directly after a DECALN counts.
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
    redundant_ = false;
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
          passed_text();
          position_ += static_cast<std::uint64_t>(end - p);
          break;
        }
        if (esc != p) passed_text();
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
  // Whether the latest step() ended a sequence that changes nothing: an
  // idempotent screen-wide operation already done in the current run of
  // them (see above). Only a sequence begun in ground with no control
  // executed inside it counts; whoever drops it must hold all its bytes.
  bool ended_redundant_sequence() const { return redundant_; }
  // The caller passed over bytes between sequences without step(): they
  // end the current run of idempotent operations.
  void passed_text() {
    run_ops_ = 0;
    after_alignment_ = false;
  }

 private:
  enum class State { ground, escape, escape_intermediate, csi, string, string_escape };
  static constexpr unsigned char kEsc = 0x1b, kCan = 0x18, kSub = 0x1a, kBel = 0x07;
  // The idempotent, mutually commuting operations (bits of run_ops_).
  static constexpr std::uint8_t kEraseDisplay = 1, kEraseScrollback = 2, kReset = 4,
                                kCursorHome = 8;

  bool ground(unsigned char c) {
    if (c == kEsc) return begin_escape(), false;
    passed_text();
    if (c == 0x0e) gl_ = 1;  // SO
    if (c == 0x0f) gl_ = 0;  // SI
    return false;
  }
  void begin_escape() {
    // A sequence begun inside another is not clean: the one it cut short
    // may have executed a control.
    clean_ = state_ == State::ground;
    state_ = State::escape;
    sequence_start_ = position_ - 1;
  }
  // A sequence ended (or was cancelled); `op` is its bit, 0 if it is none of
  // the idempotent operations.
  void end_sequence(std::uint8_t op) {
    state_ = State::ground;
    after_alignment_ = false;
    if (op == 0 || !clean_) {
      run_ops_ = 0;
      return;
    }
    redundant_ = (run_ops_ & op) != 0;
    run_ops_ |= op;
  }
  void executed_control() { clean_ = false; }
  bool escape(unsigned char c) {
    if (c == kEsc) return begin_escape(), false;
    if (c == kCan || c == kSub) return end_sequence(0), false;
    if (c < 0x20) return executed_control(), false;  // C0 controls execute inside the sequence
    if (c >= 0x20 && c <= 0x2f) {
      intermediate_ = c;
      single_intermediate_ = true;
      state_ = State::escape_intermediate;
      return false;
    }
    if (c == '[') return begin_csi(), false;
    if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
      state_ = State::string;
      string_kind_ = static_cast<char>(c);
      return false;
    }
    end_sequence(c == 'c' ? kReset : 0);
    if (c == 'c' || c == 'D' || c == 'E' || c == 'M')
      ++screen_wide_sequences_;  // RIS, IND, NEL, RI
    if (c == 'c') reset();       // RIS
    if (c == 'n') gl_ = 2;       // LS2
    if (c == 'o') gl_ = 3;       // LS3
    return false;
  }
  void begin_csi() {
    state_ = State::csi;
    csi_private_ = false;
    csi_intermediate_ = 0;
    csi_param_ = 0;
    csi_params_ = 0;
    csi_first_param_ = 0;
    csi_all_params_at_most_1_ = true;
    csi_has_4_ = csi_has_20_ = csi_has_alt_screen_ = false;
  }
  bool escape_intermediate(unsigned char c) {
    if (c == kEsc) return begin_escape(), false;
    if (c == kCan || c == kSub) return end_sequence(0), false;
    if (c < 0x20) return executed_control(), false;
    if (c < 0x30) return single_intermediate_ = false, false;
    if (intermediate_ == '#' && c == '8' && single_intermediate_) return end_alignment(), false;
    end_sequence(0);
    if (intermediate_ >= '(' && intermediate_ <= '+') g_ascii_[intermediate_ - '('] = (c == 'B');
    return false;
  }
  // DECALN ended: a repeat if the latest thing was a clean DECALN too.
  void end_alignment() {
    ++screen_wide_sequences_;
    const bool repeat = after_alignment_ && clean_;
    end_sequence(0);  // ends any run of the commuting operations
    redundant_ = repeat;
    after_alignment_ = clean_;
  }
  bool csi(unsigned char c) {
    if (c == kEsc) return begin_escape(), false;
    if (c == kCan || c == kSub) return end_sequence(0), false;
    if (c < 0x20) return executed_control(), false;
    if (c >= '0' && c <= '9') {
      csi_param_ = csi_param_ * 10 + (c - '0');
      if (csi_param_ > 100000) csi_param_ = 100000;
      return false;
    }
    if (c == ':') clean_ = false;  // sub-parameters: not worth following
    if (c == ';' || c == ':') return end_param(), false;
    if (c >= '<' && c <= '?') return csi_private_ = true, false;
    if (c < 0x40) return csi_intermediate_ = static_cast<char>(c), false;
    end_param();
    end_sequence(idempotent_csi(c));
    if (std::strchr("JLMSTr", c) || ((c == 'h' || c == 'l') && csi_has_alt_screen_))
      ++screen_wide_sequences_;
    if (c == 'c' || c == 'n' || c == 'p') return true;
    if ((c == 'h' || c == 'l') && !csi_private_ && csi_intermediate_ == 0) {
      if (csi_has_4_) insert_mode_ = (c == 'h');
      if (csi_has_20_) newline_mode_ = (c == 'h');
    }
    return false;
  }
  // The bit of an ended CSI among the idempotent operations, or 0.
  std::uint8_t idempotent_csi(unsigned char final) const {
    if (csi_private_ || csi_intermediate_ != 0) return 0;
    if (final == 'J' && csi_params_ == 1 && csi_first_param_ == 2) return kEraseDisplay;
    if (final == 'J' && csi_params_ == 1 && csi_first_param_ == 3) return kEraseScrollback;
    if ((final == 'H' || final == 'f') && csi_params_ <= 2 && csi_all_params_at_most_1_)
      return kCursorHome;
    return 0;
  }
  void end_param() {
    if (csi_params_++ == 0) csi_first_param_ = csi_param_;
    csi_all_params_at_most_1_ &= csi_param_ <= 1;
    csi_has_4_ |= csi_param_ == 4;
    csi_has_20_ |= csi_param_ == 20;
    csi_has_alt_screen_ |=
        csi_private_ && (csi_param_ == 47 || csi_param_ == 1047 || csi_param_ == 1049);
    csi_param_ = 0;
  }
  bool string(unsigned char c) {
    if (c == kEsc) state_ = State::string_escape;
    if (c == kBel && string_kind_ == ']') end_sequence(0);
    return false;
  }
  bool string_escape(unsigned char c) {
    if (c == '\\') {
      end_sequence(0);
      return string_kind_ == 'P';  // DECRQSS and other DCS requests
    }
    // ESC inside a string that is not ST: treat as a new escape sequence.
    state_ = State::escape;
    clean_ = false;
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
  int csi_params_ = 0;
  int csi_first_param_ = 0;
  bool csi_all_params_at_most_1_ = true;
  bool clean_ = false;                // the current sequence began in ground, no control inside
  bool redundant_ = false;            // the latest step() ended a repeat (see above)
  std::uint8_t run_ops_ = 0;          // idempotent operations since the latest other byte
  bool after_alignment_ = false;      // the latest thing was a clean DECALN
  bool single_intermediate_ = false;  // the escape has one intermediate byte
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
