// The registry's own timer against its destruction: a prune that came due
// in the same pass of the loop as the handler destroying the registry is
// already queued as done (not cancelled) and must not run on it.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "session/registry.hpp"
#include "support/loop_thread.hpp"

namespace agentty::session {
namespace {

TEST(RegistryLifetime, APruneDueAsTheRegistryIsDestroyedDoesNotRunOnIt) {
  const auto dir = test_support::test_state_dir("agentty-registry-lifetime-");
  boost::asio::io_context io;
  RegistryOptions options;
  options.state_dir = dir;
  options.record = false;
  std::optional<Registry> registry(std::in_place, io, options);
  // The execution's end arms the prune, due at once; this timer, due
  // earlier still, comes out of the same pass first and destroys the registry.
  boost::asio::steady_timer destroy(io);
  registry->add_observer([&](Execution& execution) {
    if (!execution.finished()) return;
    destroy.expires_at(std::chrono::steady_clock::time_point::min());
    destroy.async_wait([&](boost::system::error_code) { registry.reset(); });
  });
  ExecutionSpec spec;
  spec.argv = {"/bin/sh", "-c", "exit 0"};
  spec.command_text = "exit 0";
  boost::asio::co_spawn(
      io, [&]() -> boost::asio::awaitable<void> { (void)co_await registry->start_local(spec); },
      [](std::exception_ptr failed) {
        if (failed) std::rethrow_exception(failed);
      });
  io.run_for(std::chrono::seconds(30));
  EXPECT_FALSE(registry);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace agentty::session
