// SSH backend throughput and latency against a local OpenSSH sshd (the test
// fixture's), compared with OpenSSH's own client in the same run:
//  - `cat` of a 100 MB file under a PTY: agentty's SshChannel on a warm
//    connection vs `ssh -tt` through a warm ControlMaster connection;
//  - `true` on a warm connection: median open-to-exit latency over 50 runs.
//    The remote side runs `bash -c true` (the login shell); the fixture's
//    sshd sets SHLVL=1 so bash skips ~/.bashrc, which Debian's bash would
//    otherwise source for every SSH command (this machine's root rc runs
//    `pyenv init`: that, not the channel setup, was the 2.6 s median).
// Logs in as the user who runs it: ./build/bench/ssh_throughput_bench
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "../tests/pty/sshd_fixture.hpp"
#include "pty/ssh_channel.hpp"
#include "pty/ssh_connection.hpp"

using namespace agentty::pty;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kFileBytes = 100'000'000;
constexpr int kLatencyRuns = 50;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void write_test_file(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  std::string line;
  for (int i = 0; i < 99; ++i) line += static_cast<char>('!' + (i * 7) % 90);
  line += '\n';
  for (std::size_t written = 0; written < kFileBytes; written += line.size()) out << line;
}

// Runs `command` on the pool's warm connection; returns received byte count.
std::size_t run_remote(boost::asio::io_context& io, SshConnectionPool& pool,
                       agentty::pty::test_util::SshdFixture& sshd, const std::string& command) {
  std::unique_ptr<SshChannel> channel;
  std::size_t received = 0;
  bool done = false;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        // Named, not braced temporaries: GCC 12 destroys temporaries inside
        // a co_await expression twice.
        SshLaunch launch;
        launch.command = command;
        SshTarget target{"127.0.0.1", sshd.login_user(), sshd.port()};
        auto opened = co_await pool.open_channel(std::move(target), std::move(launch));
        if (!opened) {
          std::fprintf(stderr, "open failed: %s\n", opened.error().c_str());
          done = true;
          co_return;
        }
        channel = std::move(opened).value();
        channel->start({[&](std::string_view bytes) { received += bytes.size(); },
                        [&](ExitStatus) { done = true; }});
      },
      boost::asio::detached);
  const auto deadline = Clock::now() + std::chrono::minutes(5);
  while (!done && Clock::now() < deadline) io.run_one_for(std::chrono::milliseconds(100));
  if (!done) std::fprintf(stderr, "timed out running %s\n", command.c_str());
  return received;
}

std::string openssh_args(agentty::pty::test_util::SshdFixture& sshd) {
  return "-p " + std::to_string(sshd.port()) + " -i " + sshd.client_key() +
         " -o UserKnownHostsFile=" + sshd.known_hosts() +
         " -o BatchMode=yes -o ControlPath=" + sshd.dir() + "/control -F /dev/null";
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main() {
  if (auto why = agentty::pty::test_util::SshdFixture::unusable_reason()) {
    std::fprintf(stderr, "%s\n", why->c_str());
    return 1;
  }
  agentty::pty::test_util::SshdFixture sshd;
  const std::string file = sshd.dir() + "/data";
  write_test_file(file);
  const std::string ssh = "ssh " + openssh_args(sshd);
  const std::string login = " " + sshd.login_user() + "@127.0.0.1";
  // A warm master connection; its output must not hold our stdout open.
  if (std::system((ssh + " -M -f -N" + login + " < /dev/null > /dev/null 2>&1").c_str()) != 0)
    return 1;
  std::fprintf(stderr, "sshd on port %d, file written, ssh master up\n", sshd.port());

  boost::asio::io_context io;
  SshOptions options;
  options.known_hosts = sshd.known_hosts();
  options.config_file = sshd.ssh_config();
  options.identity_files = {sshd.client_key()};
  SshConnectionPool pool(io, options);
  run_remote(io, pool, sshd, "true");  // warm the connection

  auto start = Clock::now();
  std::size_t received = run_remote(io, pool, sshd, "cat " + file);
  const double agentty_seconds = seconds_since(start);
  std::fprintf(stderr, "agentty cat: %.2f s\n", agentty_seconds);

  start = Clock::now();
  if (std::system((ssh + " -tt" + login + " cat " + file + " < /dev/null > /dev/null").c_str()) !=
      0)
    return 1;
  const double openssh_seconds = seconds_since(start);
  std::fprintf(stderr, "openssh cat: %.2f s\n", openssh_seconds);

  std::vector<double> agentty_latency, openssh_latency;
  for (int i = 0; i < kLatencyRuns; ++i) {
    start = Clock::now();
    run_remote(io, pool, sshd, "true");
    agentty_latency.push_back(seconds_since(start) * 1000);
  }
  for (int i = 0; i < kLatencyRuns; ++i) {
    start = Clock::now();
    if (std::system((ssh + " -tt" + login + " true < /dev/null > /dev/null 2>&1").c_str()) != 0)
      return 1;
    openssh_latency.push_back(seconds_since(start) * 1000);
  }
  std::system((ssh + " -O exit" + login + " 2>/dev/null").c_str());

  const double mb = kFileBytes / 1e6;
  std::printf("%-44s %12s %12s\n", "measure", "agentty", "openssh");
  std::printf("%-44s %9.1f MB/s %7.1f MB/s\n", "cat 100 MB file under PTY, warm connection",
              mb / agentty_seconds, mb / openssh_seconds);
  std::printf("%-44s %12.2f\n", "agentty / openssh throughput", openssh_seconds / agentty_seconds);
  std::printf("%-44s %9.1f ms %9.1f ms\n", "`true`, warm connection, median of 50",
              median(agentty_latency), median(openssh_latency));
  std::printf("(agentty received %zu bytes: the file plus one CR per line)\n", received);
  return 0;
}
