#include "mcp/line_outbox.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "base/unique_fd.hpp"

namespace agentty::mcp {
namespace {

std::vector<std::string> some_lines() {
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i) lines.push_back(std::string(i * 997 % 20000, 'a' + i % 26));
  lines.push_back("");  // an empty line is still a line
  lines.push_back(std::string(300000, 'z'));
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& line : lines) all += line + "\n";
  return all;
}

// Pushes the lines and writes whatever `writer` takes, reading the other end
// only when the writer is full: every byte comes out once, in order, with
// the newlines, however the writes split it.
std::string write_through(int writer, int reader, bool is_socket) {
  LineOutbox outbox;
  auto lines = some_lines();
  for (auto line : lines) outbox.push(line);
  EXPECT_EQ(outbox.bytes(), joined(lines).size());
  std::string received;
  for (;;) {
    const auto before = outbox.bytes();
    auto result = outbox.write_to(writer, is_socket);
    EXPECT_LE(outbox.bytes(), before);
    if (result == LineOutbox::WriteResult::kEmpty) break;
    EXPECT_EQ(result, LineOutbox::WriteResult::kWouldBlock);
    if (result != LineOutbox::WriteResult::kWouldBlock) break;
    pollfd readable{reader, POLLIN, 0};
    EXPECT_EQ(::poll(&readable, 1, 10000), 1);
    char buffer[4096];  // less than was written: the next write is partial
    ssize_t n = ::read(reader, buffer, sizeof buffer);
    if (n <= 0) break;
    received.append(buffer, static_cast<std::size_t>(n));
  }
  EXPECT_TRUE(outbox.empty());
  EXPECT_EQ(outbox.bytes(), 0u);
  char buffer[65536];
  for (ssize_t n; (n = ::read(reader, buffer, sizeof buffer)) > 0;)
    received.append(buffer, static_cast<std::size_t>(n));
  return received;
}

TEST(LineOutbox, WritesEveryLineOnceWithItsNewlineAcrossPartialPipeWrites) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  UniqueFd reader(fds[0]), writer(fds[1]);
  ::fcntl(writer.get(), F_SETPIPE_SZ, 4096);
  EXPECT_EQ(write_through(writer.get(), reader.get(), false), joined(some_lines()));
}

TEST(LineOutbox, WritesEveryLineOnceWithItsNewlineAcrossPartialSocketSends) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  UniqueFd reader(fds[0]), writer(fds[1]);
  ::fcntl(reader.get(), F_SETFL, O_NONBLOCK);  // the writer stays blocking: MSG_DONTWAIT does it
  EXPECT_EQ(write_through(writer.get(), reader.get(), true), joined(some_lines()));
}

TEST(LineOutbox, AGoneReaderIsClosedNotAnEndlessWait) {
  std::signal(SIGPIPE, SIG_IGN);  // as agentty does
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  UniqueFd reader(fds[0]), writer(fds[1]);
  reader.reset();
  LineOutbox outbox;
  outbox.push("lost");
  EXPECT_EQ(outbox.write_to(writer.get(), false), LineOutbox::WriteResult::kClosed);
}

}  // namespace
}  // namespace agentty::mcp
