// LoopThread: an io_context run on its own thread, as the server runs its
// loop, for tests that block on results from the test thread. State owned by
// the loop is touched only through on_loop(), which runs a function there and
// waits for its result.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <unistd.h>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <thread>

namespace agentty::test_support {

// co_spawn for a coroutine whose result type has no default value (an
// Expected): `done` gets the result; an exception is rethrown.
template <class T, class Done>
void spawn_with_result(boost::asio::io_context& io, boost::asio::awaitable<T> task, Done done) {
  auto delivered = [](boost::asio::awaitable<T> inner, Done to) -> boost::asio::awaitable<void> {
    to(co_await std::move(inner));
  };
  boost::asio::co_spawn(io, delivered(std::move(task), std::move(done)),
                        [](std::exception_ptr failed) {
                          if (failed) std::rethrow_exception(failed);
                        });
}

class LoopThread {
 public:
  LoopThread() = default;
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;
  ~LoopThread() { stop(); }

  boost::asio::io_context& io() { return io_; }
  void start() {
    thread_ = std::thread([this] { io_.run(); });
  }
  // Lets the loop run out of work, then stops it and joins the thread.
  void stop() {
    guard_.reset();
    if (!thread_.joinable()) return;
    io_.stop();
    thread_.join();
  }
  template <class F>
  auto on_loop(F f) {
    std::promise<decltype(f())> promise;
    boost::asio::post(io_, [&] { promise.set_value(f()); });
    return promise.get_future().get();
  }
  // Runs the coroutine `f()` returns on the loop and waits for its result.
  template <class F>
  auto await_on_loop(F f) {
    using Result = typename decltype(f())::value_type;
    std::promise<Result> promise;
    boost::asio::post(io_, [&] {
      spawn_with_result(io_, f(), [&](Result result) { promise.set_value(std::move(result)); });
    });
    return promise.get_future().get();
  }

 private:
  boost::asio::io_context io_{1};
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard_{
      boost::asio::make_work_guard(io_)};
  std::thread thread_;
};

// A state directory named after the running test, unique per process.
inline std::filesystem::path test_state_dir(const std::string& prefix) {
  return std::filesystem::temp_directory_path() /
         (prefix + std::to_string(::getpid()) + "-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

}  // namespace agentty::test_support
