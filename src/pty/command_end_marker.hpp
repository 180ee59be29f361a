#pragma once

#include <string>
#include <string_view>

namespace agentty::pty {

// On a host the end of a command that left jobs in the background (`server
// &`) is not seen: its shell waits for them (waiting_for_background_jobs)
// and the host's /proc is a probe away. So the shell's EXIT trap prints this
// private OSC sequence before it waits, and the channel takes it out of the
// output: from then on what runs is what the command left behind, as
// left_running_after tells locally. Terminals ignore an OSC they do not know,
// so a marker that got through would show nothing.
inline constexpr std::string_view kCommandEndMarker = "\033]7771;agentty-command-ended\007";

// Takes the marker out of a channel's output, whichever reads it arrives
// split across. Bytes that may start it are held back until the next chunk
// tells (flush() gives them up at the end); once it has been seen, every
// byte passes untouched.
class CommandEndFilter {
 public:
  // The bytes of `chunk` to pass on, without the marker: a view of `chunk`
  // or of `scratch`, valid until the next call.
  std::string_view filter(std::string_view chunk, std::string& scratch);
  // What is held back (a possible start of the marker), now given up.
  std::string flush();
  bool seen() const { return seen_; }

 private:
  std::string held_;
  bool seen_ = false;
};

}  // namespace agentty::pty
