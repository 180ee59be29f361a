// Starting an execution from a benchmark: Registry::start_local is a
// coroutine (the loop runs on while the program starts); these wait for it.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <cstdio>
#include <functional>
#include <future>
#include <memory>

#include "session/registry.hpp"

namespace agentty::bench {

using Started = Expected<std::shared_ptr<session::Execution>>;

// Starts `spec` on `io`; `done` gets the answer, on the loop.
inline void start_then(boost::asio::io_context& io, session::Registry& registry,
                       session::ExecutionSpec spec, std::function<void(Started)> done) {
  auto run = [](session::Registry& r, session::ExecutionSpec s,
                std::function<void(Started)> to) -> boost::asio::awaitable<void> {
    to(co_await r.start_local(std::move(s)));
  };
  boost::asio::co_spawn(io, run(registry, std::move(spec), std::move(done)), boost::asio::detached);
}

inline std::shared_ptr<session::Execution> answer_or_report(Started started) {
  if (started) return started.value();
  std::fprintf(stderr, "start: %s\n", started.error().c_str());
  return nullptr;
}

// For a loop this thread runs: runs it until the execution has started.
inline std::shared_ptr<session::Execution> start_here(boost::asio::io_context& io,
                                                      session::Registry& registry,
                                                      session::ExecutionSpec spec) {
  std::optional<std::shared_ptr<session::Execution>> answer;
  start_then(io, registry, std::move(spec),
             [&](Started started) { answer = answer_or_report(std::move(started)); });
  while (!answer && io.run_one() > 0) {
  }
  return answer.value_or(nullptr);
}

// For a loop another thread runs: waits for the execution to have started.
inline std::shared_ptr<session::Execution> start_on_loop(boost::asio::io_context& io,
                                                         session::Registry& registry,
                                                         session::ExecutionSpec spec) {
  std::promise<std::shared_ptr<session::Execution>> answer;
  boost::asio::post(io, [&] {
    start_then(io, registry, std::move(spec),
               [&](Started started) { answer.set_value(answer_or_report(std::move(started))); });
  });
  return answer.get_future().get();
}

}  // namespace agentty::bench
