// Helpers for the local PTY tests: run a real program under PtyProcess and
// drive the io_context until a condition holds or a generous deadline passes.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pty/pty_process.hpp"

namespace agentty::pty::test_util {

using namespace std::chrono_literals;

// Generous: the machine is shared and loaded.
inline constexpr auto kDeadline = 20s;

struct PtyRun {
  boost::asio::io_context io;
  std::unique_ptr<PtyProcess> process;
  std::string output;
  std::optional<ExitStatus> exit;
  int exit_calls = 0;
  std::string output_at_exit;

  // Spawns and starts; returns the spawn error, empty on success.
  std::string spawn(SpawnOptions options) { return start(spawn_pty_process(io, options)); }
  std::string spawn(std::vector<std::string> argv) {
    SpawnOptions options;
    options.argv = std::move(argv);
    return spawn(std::move(options));
  }
  // Starts the result of a spawn (or of a PtyLauncher's launch).
  std::string start(Expected<std::unique_ptr<PtyProcess>> spawned) {
    if (!spawned) return spawned.error();
    process = std::move(spawned.value());
    process->start({[this](std::string_view bytes) { output.append(bytes); },
                    [this](ExitStatus status) {
                      exit = status;
                      ++exit_calls;
                      output_at_exit = output;
                    }});
    return {};
  }

  // Runs the loop until `done()` or the deadline; returns done().
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = kDeadline) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return false;
      io.restart();
      // Bounded wait so conditions without an event (polling /proc) are re-checked.
      if (io.run_one_for(std::min<std::chrono::nanoseconds>(deadline - now, 20ms)) == 0 &&
          io.stopped())
        std::this_thread::sleep_for(10ms);  // no work left: poll the condition
    }
    return true;
  }
  bool wait_for_output(const std::string& text) {
    return run_until([&] { return output.find(text) != std::string::npos; });
  }
  bool wait_for_exit() {
    return run_until([&] { return exit.has_value(); });
  }
};

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Field 3 (state) and 4 (ppid) of /proc/<pid>/stat.
inline std::optional<std::pair<char, int>> state_and_parent(int pid) {
  std::string text = read_text_file("/proc/" + std::to_string(pid) + "/stat");
  auto paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(paren + 2));
  char state = '?';
  int parent = 0;
  rest >> state >> parent;
  return std::make_pair(state, parent);
}

// Children of this test process, optionally only zombies.
inline std::vector<int> children_of_test(bool zombies_only) {
  std::vector<int> found;
  DIR* dir = opendir("/proc");
  while (dirent* entry = readdir(dir)) {
    int pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    auto info = state_and_parent(pid);
    if (info && info->second == getpid() && (!zombies_only || info->first == 'Z'))
      found.push_back(pid);
  }
  closedir(dir);
  return found;
}

inline std::vector<std::string> fds_of(int pid) {
  std::vector<std::string> names;
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (!dir) return names;
  while (dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// A program given its stdin as a file (SpawnOptions::stdin_data), and what it
// prints when the file arrives whole: the bytes exactly (a 9999-byte line,
// then ^C and ^D as data, no final newline), nothing echoed, stdin not the
// terminal while stdout is, and no other fd left open.
inline SpawnOptions stdin_file_probe() {
  SpawnOptions options;
  options.argv = {"sh", "-c",
                  "head -c 9999 | wc -c; od -An -tx1; test -t 0 || echo stdin-is-a-file; "
                  "test -t 1 && echo stdout-is-the-terminal; ls -1 /proc/$$/fd"};
  options.stdin_data = std::string(10000, 'x') +
                       "\x03\x04"
                       "end";
  return options;
}
inline const std::string kStdinFileProbeOutput =
    "9999\r\n 78 03 04 65 6e 64\r\nstdin-is-a-file\r\nstdout-is-the-terminal\r\n0\r\n1\r\n2\r\n";

}  // namespace agentty::pty::test_util
