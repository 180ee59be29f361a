// Web fan-out: what browser viewers cost the PTY. One execution `cat`s a
// 100 MB file of 100-column lines (the same file as pty_throughput_bench)
//   (a) with no viewer,
//   (b) with 20 WebSocket viewers reading as fast as they can,
//   (c) with 19 such viewers and one that never reads.
// Reported: the ingest rate (file bytes / time from the go signal to the
// program's exit, as the server saw it), its ratio to (a), how long the
// viewers took to reach the end of the output after that, and the process's
// peak RSS (VmHWM) after each phase. Because wall-clock rates on a shared
// 2-core machine swing with other load, the CPU time the server's I/O thread
// spent per run is reported too: it is what the viewers cost the loop that
// reads the PTY. Each scenario runs --repeats times (interleaved); medians
// are printed. The server (registry + WebServer) runs
// in-process on its own I/O thread, exactly as in agentty; all viewers share
// one client thread (Beast async clients), so the machine's two cores are
// split between the server and the viewers.
//
// Usage: web_fanout_bench [--mb SIZE] [--viewers N] [--repeats N]
#include <sys/stat.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/log.hpp"
#include "base/thread_cpu_time.hpp"
#include "bench_files.hpp"
#include "bench_start.hpp"
#include "session/registry.hpp"
#include "web/web_server.hpp"
#include "web/wire_protocol.hpp"

namespace {

using agentty::bench::ensure_lines_file;
using agentty::bench::kBenchDir;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using agentty::web::wire::decode_server_message;
using agentty::web::wire::Snapshot;

const std::string kToken(64, 'b');

struct Config {
  std::uint64_t megabytes = 100;
  int viewers = 20;
  int repeats = 1;
};

long vm_hwm_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
    status.ignore(1 << 12, '\n');
  }
  return -1;
}

// One viewer: counts where it is in the output (snapshot position + live bytes).
class BenchViewer : public std::enable_shared_from_this<BenchViewer> {
 public:
  BenchViewer(asio::io_context& io, bool reads) : ws_(io), reads_(reads) {}

  void connect(std::uint16_t port, const std::string& id) {
    beast::get_lowest_layer(ws_).connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    ws_.set_option(websocket::stream_base::decorator([](websocket::request_type& r) {
      r.set(beast::http::field::sec_websocket_protocol, "agentty.v1, agentty-token." + kToken);
    }));
    ws_.read_message_max(64 << 20);
    ws_.handshake("127.0.0.1:" + std::to_string(port), "/ws/terminal/" + id);
  }

  void start() {
    if (reads_) do_read();
  }
  void close() {
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
  }
  std::uint64_t position() const { return position_.load(); }
  int snapshots() const { return snapshots_.load(); }
  std::uint64_t received() const { return received_.load(); }

 private:
  void do_read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      if (ec) return;
      self->received_ += n;
      if (self->ws_.got_text()) {
        auto message = decode_server_message(beast::buffers_to_string(self->buffer_.data()));
        if (message) {
          if (auto* snapshot = std::get_if<Snapshot>(&*message)) {
            self->snapshot_next_ = true;
            self->position_ = snapshot->seq;
            ++self->snapshots_;
          }
        }
      } else if (self->snapshot_next_) {
        self->snapshot_next_ = false;
      } else {
        self->position_ += n;
      }
      self->buffer_.consume(self->buffer_.size());
      self->do_read();
    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buffer_;
  bool reads_;
  bool snapshot_next_ = false;
  std::atomic<std::uint64_t> position_{0};
  std::atomic<std::uint64_t> received_{0};
  std::atomic<int> snapshots_{0};
};

double thread_cpu_seconds() {
  return std::chrono::duration<double>(agentty::thread_cpu_time()).count();
}

struct Result {
  double ingest_mb_s = 0;
  double server_cpu_s = 0;
  double catch_up_s = 0;
  bool all_caught_up = true;
  int max_resyncs = 0;
  long hwm_kib = 0;
};

class Bench {
 public:
  template <class F>
  auto on_loop(F f) {
    std::promise<decltype(f())> promise;
    asio::post(io_, [&] { promise.set_value(f()); });
    return promise.get_future().get();
  }

  explicit Bench(fs::path file) : file_(std::move(file)) {
    state_dir_ = kBenchDir / ("web-fanout-state-" + std::to_string(::getpid()));
    agentty::session::RegistryOptions options;
    options.state_dir = state_dir_;
    registry_ = std::make_unique<agentty::session::Registry>(io_, options);
    agentty::web::WebOptions web;
    web.port = 0;
    web.token = kToken;
    server_ = std::make_unique<agentty::web::WebServer>(io_, *registry_, web);
    if (auto started = server_->start(); !started) {
      std::fprintf(stderr, "%s\n", started.error().c_str());
      std::exit(1);
    }
    guard_.emplace(asio::make_work_guard(io_));
    thread_ = std::thread([this] { io_.run(); });
  }

  ~Bench() {
    on_loop([this] {
      server_->stop();
      registry_->shutdown(200ms);
      return 0;
    });
    guard_.reset();
    std::this_thread::sleep_for(100ms);
    io_.stop();
    thread_.join();
    server_.reset();
    registry_.reset();
    std::error_code ec;
    fs::remove_all(state_dir_, ec);
  }

  Result run(int readers, int stalled) {
    agentty::session::ExecutionSpec spec;
    spec.argv = {"/bin/sh", "-c", "read _; exec cat '" + file_.string() + "'"};
    spec.command_text = "cat " + file_.string();
    spec.size = {100, 40};
    std::string id = agentty::bench::start_on_loop(io_, *registry_, spec)->id();
    asio::io_context client_io;
    auto work = asio::make_work_guard(client_io);
    std::vector<std::shared_ptr<BenchViewer>> viewers;
    for (int i = 0; i < readers + stalled; ++i) {
      auto viewer = std::make_shared<BenchViewer>(client_io, i < readers);
      viewer->connect(server_->port(), id);
      viewer->start();
      viewers.push_back(viewer);
    }
    std::thread client_thread([&] { client_io.run(); });

    auto go = std::chrono::system_clock::now();
    double cpu_at_go = on_loop([&] {
      (void)registry_->find(id)->write("\n", agentty::session::InputSource::agent);
      return thread_cpu_seconds();
    });
    // The program's exit is an event on the server loop; from here we can only poll it.
    while (!on_loop([&] { return registry_->find(id)->finished(); }))
      std::this_thread::sleep_for(5ms);
    auto [ended, latest] = on_loop([&] {
      auto execution = registry_->find(id);
      return std::make_pair(*execution->ended_at(), execution->log().latest_seq());
    });
    Result result;
    result.server_cpu_s = on_loop([] { return thread_cpu_seconds(); }) - cpu_at_go;
    double seconds = std::chrono::duration<double>(ended - go).count();
    result.ingest_mb_s = static_cast<double>(latest - 1) / (1 << 20) / seconds;

    auto caught_up_at = Clock::now();
    auto deadline = caught_up_at + 120s;
    auto behind = [&] {
      return std::any_of(viewers.begin(), viewers.begin() + readers,
                         [&](const auto& v) { return v->position() < latest; });
    };
    while (behind() && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    result.all_caught_up = !behind();
    result.catch_up_s = std::chrono::duration<double>(Clock::now() - caught_up_at).count();
    for (int i = 0; i < readers; ++i) {
      result.max_resyncs = std::max(result.max_resyncs, viewers[i]->snapshots() - 1);
    }
    result.hwm_kib = vm_hwm_kib();
    for (auto& viewer : viewers) {
      asio::post(client_io, [viewer] { viewer->close(); });
    }
    work.reset();
    client_thread.join();
    on_loop([&] { return registry_->cleanup(0ms, 0ms); });
    return result;
  }

 private:
  fs::path file_;
  fs::path state_dir_;
  asio::io_context io_{1};
  std::unique_ptr<agentty::session::Registry> registry_;
  std::unique_ptr<agentty::web::WebServer> server_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard_;
  std::thread thread_;
};

// Exits (after printing help or the mistake) when the arguments are not usable.
Config parse(int argc, char** argv) {
  Config config;
  CLI::App app{"one flooding execution fanned out to many WebSocket viewers"};
  app.add_option("--mb", config.megabytes, "size of the text file cat prints, in MB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--viewers", config.viewers, "viewers attached to the execution")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--repeats", config.repeats, "runs of each case (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return config;
}

Result median(std::vector<Result> results) {
  auto middle = [&](auto key) {
    std::sort(results.begin(), results.end(),
              [&](const Result& a, const Result& b) { return key(a) < key(b); });
    return results[results.size() / 2];
  };
  Result out = middle([](const Result& r) { return r.ingest_mb_s; });
  out.server_cpu_s = middle([](const Result& r) { return r.server_cpu_s; }).server_cpu_s;
  for (const auto& r : results) {
    out.all_caught_up = out.all_caught_up && r.all_caught_up;
    out.max_resyncs = std::max(out.max_resyncs, r.max_resyncs);
    out.hwm_kib = std::max(out.hwm_kib, r.hwm_kib);
    out.catch_up_s = std::max(out.catch_up_s, r.catch_up_s);
  }
  return out;
}

void report(const std::string& label, const Result& r, const Result* baseline) {
  std::printf(
      "%-30s ingest %6.1f MB/s (x%.2f)  server loop CPU %5.2f s (x%.2f)  viewers at the end "
      "%4.2f s later%s  resyncs <= %d  VmHWM %ld MiB\n",
      label.c_str(), r.ingest_mb_s, baseline ? r.ingest_mb_s / baseline->ingest_mb_s : 1.0,
      r.server_cpu_s, baseline ? r.server_cpu_s / baseline->server_cpu_s : 1.0, r.catch_up_s,
      r.all_caught_up ? "" : " (NOT ALL)", r.max_resyncs, r.hwm_kib / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  auto config = parse(argc, argv);
  (void)agentty::init_logging({"warn", ""});  // stderr only: cannot fail
  auto file = ensure_lines_file(config.megabytes);
  std::printf("cat of %llu MB through one execution, %d viewers, repeats %d\n",
              static_cast<unsigned long long>(config.megabytes), config.viewers, config.repeats);
  Bench bench(file);
  std::vector<Result> none, all, stalled;
  for (int repeat = 0; repeat < config.repeats; ++repeat) {
    none.push_back(bench.run(0, 0));
    all.push_back(bench.run(config.viewers, 0));
    stalled.push_back(bench.run(config.viewers - 1, 1));
  }
  auto baseline = median(none);
  report("no viewer", baseline, nullptr);
  report(std::to_string(config.viewers) + " viewers", median(all), &baseline);
  report(std::to_string(config.viewers - 1) + " viewers + 1 never reading", median(stalled),
         &baseline);
  return 0;
}
