// StdioTransport's reader thread and the transport's end. The reader blocks
// in read(2) on stdin and is detached when the transport is destroyed (at
// exit, while the client may still write): it used the destroyed transport
// (its line cap and its backlog) for the next line it read, an ASan
// heap-use-after-free (stack memory in agentty, where the transport lives on
// run_mcp_server's stack while the registry shuts down).
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mcp/stdio_transport.hpp"

namespace agentty::mcp {
namespace {

using namespace std::chrono_literals;

std::size_t thread_count() {
  auto tasks = std::filesystem::directory_iterator("/proc/self/task");
  return static_cast<std::size_t>(std::distance(tasks, std::filesystem::directory_iterator{}));
}

// Stdin replaced by a pipe the test writes, restored at the end.
class PipedStdin {
 public:
  PipedStdin() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    saved_ = ::dup(STDIN_FILENO);
    ::dup2(fds[0], STDIN_FILENO);
    ::close(fds[0]);
    writer_ = fds[1];
  }
  ~PipedStdin() {
    if (writer_ >= 0) ::close(writer_);
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
  }
  void write(const std::string& text) {
    EXPECT_EQ(::write(writer_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void close() { ::close(std::exchange(writer_, -1)); }

 private:
  int saved_ = -1;
  int writer_ = -1;
};

TEST(StdioTransport, ALineReadAfterTheTransportIsGoneReachesNothing) {
  PipedStdin input;
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::vector<std::string> lines;
  bool closed = false;
  const std::size_t threads_before = thread_count();
  auto transport = std::make_unique<StdioTransport>(
      io, 1024,
      StdioTransport::Handlers{[&](std::string line) { lines.push_back(std::move(line)); },
                               [&](std::size_t, std::string, std::string) {},
                               [&] { closed = true; }});
  transport->start();
  input.write("first\n");
  io.run_one();  // its delivery: the reader is running
  ASSERT_EQ(lines, std::vector<std::string>{"first"});

  transport.reset();  // the reader is detached, blocked reading stdin
  input.write("second\n");
  input.close();
  // The reader reads the line, finds the transport closing and ends.
  // Nothing announces a detached thread's end: polled, generous deadline.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (thread_count() > threads_before && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(thread_count(), threads_before);
  io.poll();
  EXPECT_EQ(lines, std::vector<std::string>{"first"});
  EXPECT_FALSE(closed);
}

}  // namespace
}  // namespace agentty::mcp
