#include "session/recorder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/errno_message.hpp"
#include "base/fd_io.hpp"
#include "base/json_string.hpp"
#include "base/log.hpp"
#include "base/utf8.hpp"

namespace agentty::session {

namespace {

// A larger event buffer is released after use rather than kept for the
// execution's lifetime (bulk output chunks are 64 KiB, plus escapes).
constexpr std::size_t kMaxKeptLineCapacity = 256 << 10;

std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

}  // namespace

std::string take_complete_utf8(std::string& carry, std::string_view bytes) {
  std::string data = std::move(carry);
  carry.clear();
  data.append(bytes);
  const std::size_t complete = complete_utf8_prefix(data);
  carry = data.substr(complete);
  data.resize(complete);
  return data;
}

Expected<std::unique_ptr<Recorder>> Recorder::open(const RecorderOptions& options) {
  UniqueFd fd(
      ::open(options.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) {
    return make_error("cannot create recording '" + options.path.string() +
                      "': " + errno_message("open"));
  }
  std::unique_ptr<Recorder> recorder(
      new Recorder(std::move(fd), options.path, options.max_bytes, options.start));
  const auto started =
      std::chrono::system_clock::now() -
      std::chrono::duration_cast<std::chrono::system_clock::duration>(recorder->since_start());
  nlohmann::ordered_json header = {
      {"version", 2},
      {"width", options.cols},
      {"height", options.rows},
      {"timestamp",
       std::chrono::duration_cast<std::chrono::seconds>(started.time_since_epoch()).count()}};
  if (!options.title.empty()) header["title"] = options.title;
  header["env"] = {{"TERM", "xterm-256color"}};
  if (!options.shell.empty()) header["env"]["SHELL"] = options.shell;
  const std::string line =
      header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (!recorder->write_line(line)) {
    // An empty file would be listed (and offered for replay) as a recording.
    ::unlink(options.path.c_str());
    return make_error("cannot write recording '" + options.path.string() +
                      "': " + recorder->error_);
  }
  return recorder;
}

Recorder::Recorder(UniqueFd fd, std::filesystem::path path, std::uint64_t max_bytes,
                   std::chrono::steady_clock::time_point start)
    : fd_(std::move(fd)), path_(std::move(path)), max_bytes_(max_bytes), start_(start) {}

Recorder::~Recorder() {
  finish();
}

std::chrono::steady_clock::duration Recorder::since_start() const {
  return std::chrono::steady_clock::now() - start_;
}

double Recorder::elapsed_seconds() const {
  return std::chrono::duration<double>(since_start()).count();
}

void Recorder::output(std::string_view bytes) {
  if (stopped_) return;
  if (!output_carry_.empty()) {
    const std::string data = take_complete_utf8(output_carry_, bytes);
    if (!data.empty()) write_event("o", data);
    return;
  }
  // The common case, without copying the chunk.
  const std::size_t complete = complete_utf8_prefix(bytes);
  output_carry_.assign(bytes.substr(complete));
  if (complete > 0) write_event("o", bytes.substr(0, complete));
}

void Recorder::input(std::string_view bytes, bool human) {
  if (stopped_) return;
  if (last_input_human_ != human) {
    // A half-typed character from the other source will never be completed.
    if (!input_carry_.empty()) write_event("i", std::exchange(input_carry_, {}));
    write_event("m", human ? "human input" : "agent input");
    last_input_human_ = human;
  }
  const std::string data = take_complete_utf8(input_carry_, bytes);
  if (!data.empty()) write_event("i", data);
}

void Recorder::resize(int cols, int rows) {
  if (stopped_) return;
  write_event("r", std::to_string(cols) + "x" + std::to_string(rows));
}

void Recorder::marker(std::string_view label) {
  if (stopped_) return;
  write_event("m", label);
}

void Recorder::finish() {
  if (stopped_) return;
  if (!output_carry_.empty()) write_event("o", std::exchange(output_carry_, {}));
  if (!input_carry_.empty()) write_event("i", std::exchange(input_carry_, {}));
  stopped_ = true;
}

void Recorder::write_event(std::string_view code, std::string_view data) {
  if (stopped_) return;
  char time[32];
  std::snprintf(time, sizeof time, "%.6f", elapsed_seconds());
  // One buffer reused for every event: bulk output makes 64 KiB events, and a
  // fresh allocation each time went to the kernel (brk) and back.
  std::string& line = line_;
  line.clear();
  line.append("[").append(time).append(", \"").append(code).append("\", ");
  append_json_string(line, data);
  line.append("]\n");
  if (*bytes_written_ + line.size() > max_bytes_) {
    line = std::string("[") + time + ", \"m\", " +
           json_string("recording stopped: size limit of " + std::to_string(max_bytes_) +
                       " bytes reached") +
           "]\n";
    write_line(line);
    stopped_ = true;
    return;
  }
  if (!write_line(line)) stop_for_write_error(time);
  if (line.capacity() > kMaxKeptLineCapacity) std::string().swap(line);
}

bool Recorder::write_line(std::string_view line) {
  const std::uint64_t before = *bytes_written_;
  std::size_t written = 0;
  auto result = write_all(fd_.get(), line, &written);
  *bytes_written_ += written;
  if (!result) {
    error_ = result.error();
    stopped_ = true;
    if (written > 0) truncate_to(before);
  }
  return result.ok();
}

void Recorder::truncate_to(std::uint64_t size) {
  // The file position stays where the cut line ended: move it back too, or
  // a later write would leave a hole of zero bytes (invalid JSON).
  if (::ftruncate(fd_.get(), static_cast<off_t>(size)) == 0 &&
      ::lseek(fd_.get(), static_cast<off_t>(size), SEEK_SET) >= 0)
    *bytes_written_ = size;
}

void Recorder::stop_for_write_error(const std::string& time) {
  const std::string cause = error_;
  // The replay page shows markers: without one a cut recording passes for
  // the whole session. It may not fit on a full disk; the log still says it.
  const std::string marker = "[" + time + ", \"m\", " +
                             json_string("recording stopped: cannot write it (" + cause + ")") +
                             "]\n";
  write_line(marker);
  error_ = cause;
  spdlog::warn(
      "recording {} stopped at {} bytes: {}; the execution goes on unrecorded. Free space "
      "in the state directory (or make its recordings/ writable) for the next ones",
      path_.string(), *bytes_written_, cause);
}

}  // namespace agentty::session
