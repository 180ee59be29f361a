// Bulk output throughput: how fast `cat` of a 128 MB text file (100-column
// lines) reaches its reader through
//   (a) a minimal blocking reader on a raw PTY (forkpty + read, 64 KiB),
//   (b) tmux with no client attached (its own terminal emulation),
//   (c) PtyProcess into a sink that only counts bytes,
//   (d) PtyProcess into an OutputLog with a spool file,
//   (e) a whole Execution started by the Registry, as `execute` does: output
//       log with spool, screen model (made exact at the end), asciicast
//       recording, change notifications. This is the number that matters.
// Each is run kRepeats times; the median MB/s (of file bytes) is reported, and
// the median CPU time this process spent per MB (the reader's own cost, system
// time included: a reader that keeps up makes more, smaller reads; for tmux
// only the waiting client, so not comparable).
//
// Usage: pty_throughput_bench [--repeats N] [--mb SIZE] [--only NAME-PART]
//                             [--components 1]
// --components 1 instead times each consumer of the execute path alone, on
// the file's bytes in memory (LF -> CR LF, 64 KiB chunks), by CPU time of
// this thread: a breakdown that a loaded machine disturbs far less.
// The file is cached in /tmp/agentty-bench/. Build without (d) with
// -DAGENTTY_BENCH_OUTPUT_LOG=0 while session/output_log.cpp is a placeholder.
#ifndef AGENTTY_BENCH_OUTPUT_LOG
#define AGENTTY_BENCH_OUTPUT_LOG 1
#endif

#include <fcntl.h>
#include <pty.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_cpu_time.hpp"
#include "bench_files.hpp"
#include "bench_start.hpp"
#include "pty/pty_process.hpp"
#if AGENTTY_BENCH_OUTPUT_LOG
#include "session/output_log.hpp"
#include "session/recorder.hpp"
#include "session/redactor.hpp"
#include "session/registry.hpp"
#include "session/screen.hpp"
#include "session/screen_feeder.hpp"
#endif

namespace {

using agentty::bench::ensure_lines_file;
using agentty::bench::kBenchDir;
using agentty::bench::kLineBytes;

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct Config {
  int repeats = 3;
  std::uint64_t megabytes = 128;
  std::string only;  // run only the methods whose name contains this (profiling)
  bool components = false;
};

struct Sample {
  double seconds = NAN;
  std::uint64_t bytes_read = 0;
};

// (a) forkpty + blocking read: the ceiling for any PTY consumer.
Sample run_raw(const fs::path& file) {
  struct winsize size {};
  size.ws_col = 120;
  size.ws_row = 40;
  int master = -1;
  auto start = Clock::now();
  pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  if (pid == 0) {
    ::execlp("cat", "cat", file.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (pid < 0) return {};
  std::vector<char> buffer(64 * 1024);
  Sample sample;
  for (;;) {
    ssize_t n = ::read(master, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EIO: the slave side is gone
    sample.bytes_read += static_cast<std::uint64_t>(n);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  sample.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ::close(master);
  return sample;
}

int run_command(const std::string& command) {
  return std::system(command.c_str());
}

// (b) tmux parses everything into its own screen, even with no client.
Sample run_tmux(const fs::path& file) {
  std::string tmux = "tmux -L agentty-bench-" + std::to_string(::getpid());
  std::string inner = "cat " + file.string() + "; " + tmux + " wait-for -S done; sleep 600";
  auto start = Clock::now();
  if (run_command(tmux + " -f /dev/null new-session -d -x 120 -y 40 \"" + inner + "\"") != 0)
    return {};
  int waited = run_command(tmux + " wait-for done");
  Sample sample;
  sample.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run_command(tmux + " kill-server 2>/dev/null");
  if (waited != 0) return {};
  return sample;
}

// (c)/(d) through PtyProcess on an io_context, into `sink`.
Sample run_agentty(const fs::path& file, const std::function<void(std::string_view)>& sink,
                   const std::function<void()>& at_exit) {
  boost::asio::io_context io;
  agentty::pty::SpawnOptions options;
  options.argv = {"cat", file.string()};
  auto start = Clock::now();
  auto process = agentty::pty::spawn_pty_process(io, options);
  if (!process) {
    std::fprintf(stderr, "spawn: %s\n", process.error().c_str());
    return {};
  }
  Sample sample;
  bool done = false;
  (*process)->start({[&](std::string_view bytes) {
                       sample.bytes_read += bytes.size();
                       sink(bytes);
                     },
                     [&](agentty::pty::ExitStatus) {
                       if (at_exit) at_exit();
                       done = true;
                     }});
  while (!done && io.run_one() > 0) {
  }
  sample.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return sample;
}

#if AGENTTY_BENCH_OUTPUT_LOG
Sample run_agentty_output_log(const fs::path& file) {
  agentty::session::OutputLogOptions options;
  options.spool_path = kBenchDir / ("spool-" + std::to_string(::getpid()));
  options.spool_cap_bytes = 1ull << 30;
  Sample sample;
  {
    agentty::session::OutputLog log(options);
    sample = run_agentty(
        file, [&](std::string_view bytes) { log.append(bytes); },
        [&] {
          log.mark_complete();
          log.flush();
        });
    if (log.total_bytes() != sample.bytes_read) {
      std::fprintf(stderr, "output log holds %llu of %llu bytes\n",
                   static_cast<unsigned long long>(log.total_bytes()),
                   static_cast<unsigned long long>(sample.bytes_read));
    }
  }
  fs::remove(options.spool_path);
  return sample;
}

// (e) the real path of `execute`: Registry -> Execution (log, screen, recording).
Sample run_agentty_execution(const fs::path& file) {
  boost::asio::io_context io;
  agentty::session::RegistryOptions options;
  options.state_dir = kBenchDir / ("state-" + std::to_string(::getpid()));
  options.execution.log.spool_cap_bytes = 1ull << 30;
  fs::create_directories(options.state_dir / "spool");
  Sample sample;
  {
    agentty::session::Registry registry(io, options);
    agentty::session::ExecutionSpec spec;
    spec.argv = {"cat", file.string()};
    spec.command_text = "cat " + file.string();
    auto start = Clock::now();
    auto execution = agentty::bench::start_here(io, registry, spec);
    if (!execution) return {};
    auto& running = *execution;
    while (!running.finished() && io.run_one() > 0) {
    }
    running.screen();  // the model is exact when anyone looks: include catching up
    sample.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    sample.bytes_read = running.log().total_bytes();
  }
  fs::remove_all(options.state_dir);
  return sample;
}

// --components: each consumer alone on the bytes in memory.
double thread_cpu_seconds() {
  return std::chrono::duration<double>(agentty::thread_cpu_time()).count();
}

std::string pty_bytes(const fs::path& file) {
  std::string text;
  FILE* in = std::fopen(file.c_str(), "r");
  if (!in) return text;
  text.reserve(fs::file_size(file) + fs::file_size(file) / kLineBytes);
  for (int c; (c = std::fgetc(in)) != EOF;) {
    if (c == '\n') text += '\r';
    text += static_cast<char>(c);
  }
  std::fclose(in);
  return text;
}

struct ComponentRun {
  const std::string& bytes;
  int repeats;
  std::string only;
};

void time_component(const char* name, const ComponentRun& run,
                    const std::function<std::function<void(std::string_view)>()>& make) {
  if (std::string_view(name).find(run.only) == std::string_view::npos) return;
  const std::string& bytes = run.bytes;
  const int repeats = run.repeats;
  std::vector<double> rates;
  for (int round = 0; round < repeats; ++round) {
    auto consume = make();
    const double start = thread_cpu_seconds();
    for (std::size_t at = 0; at < bytes.size(); at += 64 * 1024)
      consume(std::string_view(bytes).substr(at, 64 * 1024));
    consume({});  // end: flush, catch up
    rates.push_back(static_cast<double>(bytes.size()) / 1e6 / (thread_cpu_seconds() - start));
  }
  std::sort(rates.begin(), rates.end());
  std::printf("  %-34s %10.0f MB/s of CPU time (median of %d)\n", name, rates[rates.size() / 2],
              repeats);
}

void run_components(const fs::path& file, int repeats, const std::string& only) {
  const std::string bytes = pty_bytes(file);
  const ComponentRun run{bytes, repeats, only};
  const fs::path scratch = kBenchDir / ("components-" + std::to_string(::getpid()));
  std::printf("components: %.1f MB of PTY output, 64 KiB chunks\n",
              static_cast<double>(bytes.size()) / 1e6);
  using Consumer = std::function<void(std::string_view)>;
  time_component("OutputLog (ring + spool)", run, [&]() -> Consumer {
    agentty::session::OutputLogOptions options;
    options.spool_path = scratch;
    options.spool_cap_bytes = 1ull << 30;
    auto log = std::make_shared<agentty::session::OutputLog>(options);
    return [log](std::string_view chunk) { chunk.empty() ? log->flush() : log->append(chunk); };
  });
  time_component("ScreenFeeder (120x40, exact at end)", run, [&]() -> Consumer {
    auto feeder = std::make_shared<agentty::session::ScreenFeeder>(
        agentty::pty::TerminalSize{120, 40}, 10000);
    return [feeder](std::string_view chunk) {
      chunk.empty() ? feeder->catch_up() : feeder->on_output(chunk);
    };
  });
  time_component("Recorder (asciicast)", run, [&]() -> Consumer {
    agentty::session::RecorderOptions options;
    options.path = scratch;
    options.max_bytes = 1ull << 30;
    std::shared_ptr<agentty::session::Recorder> recorder =
        std::move(agentty::session::Recorder::open(options).value());
    return [recorder](std::string_view chunk) {
      chunk.empty() ? recorder->finish() : recorder->output(chunk);
    };
  });
  time_component("Redactor (2 secrets)", run, [&]() -> Consumer {
    auto redactor = std::make_shared<agentty::session::Redactor>(
        std::map<std::string, std::string>{{"A", "not-in-the-output-1"}, {"B", "hunter2hunter2"}});
    return [redactor](std::string_view chunk) {
      chunk.empty() ? (void)redactor->finish() : (void)redactor->process(chunk);
    };
  });
  fs::remove(scratch);
}
#endif

double median_of_values(std::vector<double> values) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// CPU time (user + system) of this process so far: what the reader itself
// spends, which a loaded machine disturbs far less than wall time. Not
// meaningful for tmux (its server is another process).
double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Method {
  std::string name;
  std::function<Sample()> run;
  std::vector<double> mb_per_second;
  std::vector<double> cpu_ms_per_mb;  // of this process
  double median() const { return median_of_values(mb_per_second); }
};

// Exits (after printing help or the mistake) when the arguments are not
// usable: a typo must not silently run the default benchmark.
Config parse_args(int argc, char** argv) {
  Config config;
  CLI::App app{"PTY bulk throughput: agentty's reader and execute path vs tmux and a raw read"};
  app.add_option("--repeats", config.repeats, "runs of each method (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--mb", config.megabytes, "size of the text file cat prints, in MB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--only", config.only, "run only the methods whose name contains this");
  app.add_option("--components", config.components,
                 "1: time each consumer of the execute path alone, on the bytes in memory")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return config;
}

bool have_tmux() {
  return run_command("command -v tmux >/dev/null 2>&1") == 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config config = parse_args(argc, argv);
  fs::path file = ensure_lines_file(config.megabytes);
  double file_mb = static_cast<double>(fs::file_size(file)) / 1e6;
#if AGENTTY_BENCH_OUTPUT_LOG
  if (config.components) {
    run_components(file, config.repeats, config.only);
    return 0;
  }
#endif
  // ONLCR turns each '\n' into "\r\n" on the way out of the PTY.
  std::uint64_t expected = fs::file_size(file) + fs::file_size(file) / kLineBytes;

  std::vector<Method> methods;
  methods.push_back({"raw PTY read (forkpty)", [&] { return run_raw(file); }, {}, {}});
  if (have_tmux()) methods.push_back({"tmux, no client", [&] { return run_tmux(file); }, {}, {}});
  methods.push_back({"agentty PtyProcess -> count",
                     [&] { return run_agentty(file, [](std::string_view) {}, {}); },
                     {},
                     {}});
#if AGENTTY_BENCH_OUTPUT_LOG
  methods.push_back(
      {"agentty PtyProcess -> OutputLog", [&] { return run_agentty_output_log(file); }, {}, {}});
  methods.push_back(
      {"agentty execute (log+screen+rec)", [&] { return run_agentty_execution(file); }, {}, {}});
#endif

  if (!config.only.empty())
    std::erase_if(methods,
                  [&](const Method& m) { return m.name.find(config.only) == m.name.npos; });
  std::printf("pty_throughput: cat of %.1f MB (%d-column lines), %d runs each, median\n", file_mb,
              kLineBytes, config.repeats);
  for (int round = 0; round < config.repeats; ++round) {
    for (auto& method : methods) {
      const double cpu_before = process_cpu_seconds();
      Sample sample = method.run();
      if (std::isnan(sample.seconds)) continue;
      method.cpu_ms_per_mb.push_back((process_cpu_seconds() - cpu_before) * 1e3 / file_mb);
      if (sample.bytes_read != 0 && sample.bytes_read != expected)
        std::fprintf(stderr, "%s: read %llu bytes, expected %llu\n", method.name.c_str(),
                     static_cast<unsigned long long>(sample.bytes_read),
                     static_cast<unsigned long long>(expected));
      method.mb_per_second.push_back(file_mb / sample.seconds);
    }
  }

  std::printf("  %-34s %12s %12s   %s\n", "method", "median MB/s", "reader CPU", "runs (MB/s)");
  for (const auto& method : methods) {
    std::string runs;
    for (double value : method.mb_per_second) runs += std::to_string(std::lround(value)) + " ";
    std::printf("  %-34s %12.1f %7.2f ms/MB   %s\n", method.name.c_str(), method.median(),
                median_of_values(method.cpu_ms_per_mb), runs.c_str());
  }
  auto median_of = [&](const std::string& prefix) {
    for (const auto& method : methods)
      if (method.name.rfind(prefix, 0) == 0) return method.median();
    return static_cast<double>(NAN);
  };
  double agentty = median_of("agentty PtyProcess -> count");
  std::printf("  ratio agentty(count)/raw:  %.2f\n", agentty / median_of("raw"));
  std::printf("  ratio agentty(count)/tmux: %.2f\n", agentty / median_of("tmux"));
#if AGENTTY_BENCH_OUTPUT_LOG
  double logged = median_of("agentty PtyProcess -> OutputLog");
  std::printf("  ratio agentty(OutputLog)/raw:  %.2f\n", logged / median_of("raw"));
  std::printf("  ratio agentty(OutputLog)/tmux: %.2f\n", logged / median_of("tmux"));
  double full = median_of("agentty execute");
  std::printf("  ratio agentty(execute)/raw:  %.2f   (target >= 0.85)\n", full / median_of("raw"));
  std::printf("  ratio agentty(execute)/tmux: %.2f   (target >= 2.5)\n", full / median_of("tmux"));
#endif
  return 0;
}
