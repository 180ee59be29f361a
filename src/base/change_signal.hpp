// ChangeSignal: lets coroutines sleep until "something changed" or a deadline.
//
// The owner calls notify() whenever state that waiters look at changes (new
// output, exit, held/released). Waiters re-check their own condition after
// every wake, so a notify never carries data and spurious wakes are harmless.
// Single-threaded: owned by, and used only on, the one I/O event loop.
// A waiter whose coroutine is cancelled (MCP notifications/cancelled) wakes
// at once with `Wake::cancelled`.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <list>

namespace agentty {

class ChangeSignal {
 public:
  enum class Wake { changed, deadline, cancelled };

  void notify() {
    for (auto* timer : waiters_) timer->cancel();
  }

  // Suspends until notify(), `deadline`, or cancellation of the calling coroutine.
  boost::asio::awaitable<Wake> wait_until(std::chrono::steady_clock::time_point deadline) {
    // Cancelled before this wait began (e.g. while its call started a program).
    if ((co_await boost::asio::this_coro::cancellation_state).cancelled() !=
        boost::asio::cancellation_type::none)
      co_return Wake::cancelled;
    auto executor = co_await boost::asio::this_coro::executor;
    boost::asio::steady_timer timer(executor, deadline);
    auto slot = waiters_.insert(waiters_.end(), &timer);
    auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    waiters_.erase(slot);
    auto state = co_await boost::asio::this_coro::cancellation_state;
    if (state.cancelled() != boost::asio::cancellation_type::none) co_return Wake::cancelled;
    co_return ec ? Wake::changed : Wake::deadline;
  }

  std::size_t waiter_count() const { return waiters_.size(); }

 private:
  std::list<boost::asio::steady_timer*> waiters_;
};

}  // namespace agentty
