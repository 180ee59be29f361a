// Baseline for the MCP round-trip benchmark: median and p99 time of
// posix_spawn + waitpid of a program (default `/bin/echo hi`), in
// microseconds, output to /dev/null.
// Usage: spawn_baseline_bench [N [PROGRAM ARGS...]] (N default 500); prints
// one JSON line, with every sample when N <= 100 (for interleaved runs).
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  // A count, or anything else (bench/run-all passes "--repeats N"): the default.
  int n = argc > 1 ? std::atoi(argv[1]) : 0;
  if (n <= 0) n = 500;
  const char* echo[] = {"/bin/echo", "hi", nullptr};
  char** program =
      n > 0 && argc > 2 && std::atoi(argv[1]) > 0 ? argv + 2 : const_cast<char**>(echo);
  std::vector<double> us;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", 0x1 /*O_WRONLY*/, 0);
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, program[0], &actions, nullptr, program, environ) != 0) return 1;
    int status = 0;
    waitpid(pid, &status, 0);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::string samples;
  if (n <= 100) {
    for (double sample : us) samples += (samples.empty() ? "" : ",") + std::to_string(sample);
  }
  std::sort(us.begin(), us.end());
  std::printf("{\"median_us\": %.1f, \"p99_us\": %.1f, \"n\": %d, \"samples_us\": [%s]}\n",
              us[us.size() / 2], us[us.size() * 99 / 100], n, samples.c_str());
  return 0;
}
