// Recorder: writes one execution's terminal session as an asciicast v2 file
// (https://docs.asciinema.org/manual/asciicast/v2/), playable with
// `asciinema play` and printable with `asciinema cat`.
//
// File layout: a header line {"version":2,"width","height","timestamp",
// "title","env":{"TERM","SHELL"}}, then one JSON array per event:
// [seconds_since_start, code, data] with code "o" (output), "i" (input),
// "r" (resize, "COLSxROWS") or "m" (marker). asciicast has one input code,
// so a marker ("agent input" / "human input") is written whenever the source
// of input changes; takeover, release and handoff are markers too.
//
// Invariants: every line is valid JSON and every event string valid UTF-8.
// A UTF-8 character split across two output (or input) chunks is held back
// and written whole with the next chunk; bytes that are not UTF-8 become
// U+FFFD. The file never grows past `max_bytes` (plus one final marker):
// recording stops with a marker saying so, and later events are dropped.
//
// Events are written as they come (one write(2) per event), so the file is
// complete up to the last event even if the process dies. A write error stops
// the recording; error() says why. The event cut short is truncated away and
// a marker saying why is written if it fits (truncating gives back the room
// the cut event took), so the file stays valid and does not pass for the
// whole session; the stop is logged once. open() removes a file it could not
// even write the header to (a full disk): no empty "recording" is left.
//
// Threading: not thread-safe; used on the execution's strand only.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/expected.hpp"
#include "base/unique_fd.hpp"

namespace agentty::session {

struct RecorderOptions {
  std::filesystem::path path;  // created (0600) or truncated; the directory must exist
  int cols = 120;
  int rows = 40;
  std::string title;                       // empty: omitted
  std::string shell;                       // header env.SHELL; empty: omitted
  std::uint64_t max_bytes = 256ull << 20;  // file size cap
  // The zero of the recording's clock: when the program was started. Not
  // when the recording opens, later (after a loaded loop's turn): the times
  // then fell short of the program's own, and 1 s between two lines
  // replayed as less.
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

class Recorder {
 public:
  static Expected<std::unique_ptr<Recorder>> open(const RecorderOptions& options);
  ~Recorder();  // calls finish()
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void output(std::string_view bytes);
  void input(std::string_view bytes, bool human);
  void resize(int cols, int rows);
  void marker(std::string_view label);
  // Writes any held-back partial character; later events are dropped.
  void finish();

  bool stopped() const { return stopped_; }  // size cap, write error or finish()
  std::uint64_t bytes_written() const { return *bytes_written_; }
  // The same count, for whoever adds up the recordings' sizes (retention).
  std::shared_ptr<const std::uint64_t> size_counter() const { return bytes_written_; }
  const std::string& error() const { return error_; }

 private:
  Recorder(UniqueFd fd, std::filesystem::path path, std::uint64_t max_bytes,
           std::chrono::steady_clock::time_point start);
  std::chrono::steady_clock::duration since_start() const;
  double elapsed_seconds() const;
  void write_event(std::string_view code, std::string_view data);
  bool write_line(std::string_view line);
  // Cuts a partly written line off (the file ends on a whole event).
  void truncate_to(std::uint64_t size);
  void stop_for_write_error(const std::string& time);

  UniqueFd fd_;
  std::filesystem::path path_;
  std::uint64_t max_bytes_;
  std::shared_ptr<std::uint64_t> bytes_written_ = std::make_shared<std::uint64_t>(0);
  std::chrono::steady_clock::time_point start_;
  std::string output_carry_;  // incomplete UTF-8 at the end of the last output chunk
  std::string input_carry_;
  std::string line_;  // the event being written (its capacity is reused)
  std::optional<bool> last_input_human_;
  bool stopped_ = false;
  std::string error_;
};

// Splits `carry + bytes` into the part that ends on a whole UTF-8 character
// (returned) and an incomplete trailing sequence (left in `carry`).
std::string take_complete_utf8(std::string& carry, std::string_view bytes);

}  // namespace agentty::session
