// RegistryFixture: a session::Registry on a LoopThread, for tests that start
// real programs under real PTYs and look at their executions from the test
// thread (through on_loop). Subclasses adjust the options in configure().
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "session/registry.hpp"
#include "support/loop_thread.hpp"

namespace agentty::test_support {

class RegistryFixture : public ::testing::Test {
 protected:
  virtual void configure(session::RegistryOptions& /*options*/) {}

  void SetUp() override {
    state_dir_ = test_state_dir("agentty-registry-");
    session::RegistryOptions options;
    options.state_dir = state_dir_;
    options.record = false;
    configure(options);
    registry_.emplace(loop_.io(), options);
    loop_.start();
  }
  void TearDown() override {
    loop_.on_loop([this] {
      registry_->shutdown(std::chrono::milliseconds(0));
      return 0;
    });
    loop_.stop();
    registry_.reset();
    std::filesystem::remove_all(state_dir_);
  }

  // Starts `/bin/sh -c command`; null (and a test failure) if it did not start.
  std::shared_ptr<session::Execution> start(const std::string& command) {
    session::ExecutionSpec spec;
    spec.argv = {"/bin/sh", "-c", command};
    spec.command_text = command;
    auto started = loop_.await_on_loop([&] { return registry_->start_local(spec); });
    EXPECT_TRUE(started) << started.error();
    return started ? started.value() : nullptr;
  }

  // Polls `condition` on the loop (no event reaches the test thread) until it
  // holds or a generous deadline passes; whether it held.
  bool eventually(const std::function<bool()>& condition) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!loop_.on_loop(condition)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  LoopThread loop_;
  std::filesystem::path state_dir_;
  std::optional<session::Registry> registry_;
};

}  // namespace agentty::test_support
