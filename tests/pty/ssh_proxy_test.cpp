#include "pty/ssh_proxy.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <string>

namespace agentty::pty {
namespace {

TEST(ProxyCommandTest, TokensAreFilledInAsOpenSshDoes) {
  const ProxyTokens tokens{"10.0.0.5", 2222, "deploy", "me", "/home/me"};
  auto line = expand_proxy_command("ssh -W [%h]:%p -l %r bastion -i %d/.ssh/k # %u 100%%", tokens);
  ASSERT_TRUE(line) << line.error();
  EXPECT_EQ(*line, "ssh -W [10.0.0.5]:2222 -l deploy bastion -i /home/me/.ssh/k # me 100%");
}

TEST(ProxyCommandTest, AnUnknownTokenIsNamed) {
  auto line = expand_proxy_command("nc %h %p %C", ProxyTokens{});
  ASSERT_FALSE(line);
  EXPECT_NE(line.error().find("has %C, which agentty does not fill in"), std::string::npos)
      << line.error();
}

std::size_t open_fds() {
  return static_cast<std::size_t>(std::distance(
      std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{}));
}

// Its stdin and stdout are the socket libssh gets; what it prints on
// stderr is kept for the error; it leaves no fd or process behind.
TEST(ProxyCommandTest, TheSocketCarriesItsOutputAndStderrIsKept) {
  boost::asio::io_context io;
  // The loop's own fds (epoll, eventfd, timerfd) come with its first use.
  ASSERT_TRUE(ProxyProcess::start(io, "true"));
  const auto fds_before = open_fds();
  {
    const std::string command = "sh -c 'read line; echo \"got $line\"; echo refused >&2; exit 1'";
    auto proxy = ProxyProcess::start(io, command);
    ASSERT_TRUE(proxy) << proxy.error();
    const int fd = proxy.value().take_socket();
    ASSERT_EQ(::write(fd, "hello\n", 6), 6);
    std::string received;
    for (;;) {
      pollfd ready{fd, POLLIN, 0};
      ASSERT_EQ(::poll(&ready, 1, 10000), 1);
      char buffer[256];
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n <= 0) break;  // it ended
      received.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    EXPECT_EQ(received, "got hello\n");
    EXPECT_EQ(proxy.value().error_output(), "refused");
    EXPECT_EQ(proxy.value().command(), "exec " + command);
  }
  EXPECT_EQ(open_fds(), fds_before);
}

// A connection's failure asks for what the proxy said in the middle of the
// loop's work: nothing it printed may be in flight then. (Read with
// async_read_some, a handler that kept one part of it started the next read
// at once; that read took the rest out of the pipe and only queued its
// handler, so the failure found the reason neither in the pipe nor kept:
// "it printed nothing on stderr" for a bastion that had said why.)
TEST(ProxyCommandTest, WhatItSaidIsKeptWhenTheLoopHasReadItFirst) {
  boost::asio::io_context io;
  // More than one read's buffer, then it ends.
  auto proxy = ProxyProcess::start(io, "printf '%01500d' 7 >&2");
  ASSERT_TRUE(proxy) << proxy.error();
  const int fd = proxy.value().take_socket();
  pollfd ended{fd, POLLIN, 0};  // its end of the socket closes as it exits
  ASSERT_EQ(::poll(&ended, 1, 10000), 1);
  ::close(fd);
  ASSERT_EQ(io.run_one(), 1u);  // one turn of the loop, which reads the pipe
  const auto said = proxy.value().error_output();
  EXPECT_EQ(said.size(), 1500u);
  EXPECT_TRUE(said.ends_with("07")) << said;
}

// Its stderr is read as it comes: a proxy that prints more than the pipe
// holds (ssh -v through a jump host) goes on carrying the connection.
TEST(ProxyCommandTest, AVerboseProxyIsNotBlockedOnItsStderr) {
  boost::asio::io_context io;
  auto proxy = ProxyProcess::start(
      io, "sh -c 'yes | head -c 200000 >&2; echo carried; echo last words >&2'");
  ASSERT_TRUE(proxy) << proxy.error();
  const int fd = proxy.value().take_socket();
  std::string received;
  for (int waited = 0; waited < 10000; waited += 10) {  // until it ends
    io.poll();
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 10) != 1) continue;
    char buffer[256];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    received.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  EXPECT_EQ(received, "carried\n");
  const auto said = proxy.value().error_output();
  EXPECT_TRUE(said.ends_with("y\ny\nlast words")) << said;
}

}  // namespace
}  // namespace agentty::pty
