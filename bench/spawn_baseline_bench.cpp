// Baseline for the MCP round-trip benchmark: median and p99 time of
// posix_spawn + waitpid of /bin/echo, in microseconds.
// Usage: spawn_baseline_bench [N] (default 500); prints one JSON line.
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  // A count, or anything else (bench/run-all passes "--repeats N"): the default.
  int n = argc > 1 ? std::atoi(argv[1]) : 0;
  if (n <= 0) n = 500;
  std::vector<double> us;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", 0x1 /*O_WRONLY*/, 0);
  const char* args[] = {"/bin/echo", "hi", nullptr};
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, "/bin/echo", &actions, nullptr, const_cast<char**>(args), environ) != 0)
      return 1;
    int status = 0;
    waitpid(pid, &status, 0);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(us.begin(), us.end());
  std::printf("{\"median_us\": %.1f, \"p99_us\": %.1f, \"n\": %d}\n", us[us.size() / 2],
              us[us.size() * 99 / 100], n);
  return 0;
}
