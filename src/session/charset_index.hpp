// CharsetIndex: the character sets (Charsets) in use at any position of an
// output log, so a page of the text view that starts after `ESC ( 0` (or
// after `ESC ) 0` and SO) still reads DEC line drawing as box-drawing
// characters, and pages read one by one give the text of one big read.
//
// Built lazily from the log's bytes, the first time a position is asked
// for, and only ever forward: it remembers how far it has followed the log
// (the frontier) and the state there, plus a mark every 64 KiB.
// A position past the frontier moves it (each byte is followed once, as a
// cursor pages on); one behind it is followed from the nearest mark before
// it (at most 64 KiB). Following skips all but ESC, SO and SI.
// A position inside a unit (a cut not made by a page) gets the state before
// that unit. Output evicted before it was followed is lost: the state
// starts again as ASCII at the first retained byte.
//
// Threading: the I/O event loop, as the log.
#pragma once

#include <cstdint>
#include <vector>

#include "session/charsets.hpp"

namespace agentty::session {

class OutputLog;

class CharsetIndex {
 public:
  Charsets at(const OutputLog& log, std::uint64_t seq);

 private:
  struct Mark {
    std::uint64_t seq = 1;
    Charsets charsets;
  };
  // Moves `from` forward over whole units, up to `to` at most.
  void follow(const OutputLog& log, Mark& from, std::uint64_t to, bool add_marks);
  void forget_evicted(std::uint64_t first_retained);

  Mark frontier_;
  std::vector<Mark> marks_ = {Mark{}};  // ascending; the first at the start followed
};

}  // namespace agentty::session
