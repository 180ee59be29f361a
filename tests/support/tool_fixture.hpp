// ToolFixture: the MCP tools over a real Registry whose event loop runs on
// its own thread, as in the server. The test thread calls tool handlers from
// the tool table with call() and touches everything else the registry owns
// through on_loop().
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "mcp/tool.hpp"
#include "session/policy.hpp"
#include "support/loop_thread.hpp"

namespace agentty::test_support {

class ToolFixture : public ::testing::Test {
 protected:
  template <class F>
  auto on_loop(F f) {
    return loop_.on_loop(std::move(f));
  }

  void SetUp() override {
    state_dir_ = test_state_dir("agentty-mcp-test-");
    session::RegistryOptions options;
    options.state_dir = state_dir_;
    options.record = false;
    registry_.emplace(io_, options);
    context_.emplace(mcp::ToolContext{*registry_, config_, &policy_, nullptr, {}, {}, {}});
    tools_ = mcp::make_tool_table(config_);
    loop_.start();
  }

  void TearDown() override {
    // Destroyed on the loop's thread, before it ends: the spare maker dies
    // with the thread that started it (PR_SET_PDEATHSIG), and one killed
    // between forking a spare and saying its pid left the spare unknown.
    on_loop([this] {
      registry_->shutdown(std::chrono::milliseconds(0));
      context_.reset();
      registry_.reset();  // kills what is still running
      return 0;
    });
    loop_.stop();
    std::filesystem::remove_all(state_dir_);
  }

  // Runs one tool call on the loop and returns its result.
  mcp::ToolResult call(const std::string& name, const mcp::json& args) {
    auto tool = std::find_if(tools_.begin(), tools_.end(),
                             [&](const mcp::ToolDefinition& t) { return t.name == name; });
    if (tool == tools_.end()) return mcp::tool_error("no tool " + name);
    std::promise<mcp::ToolResult> promise;
    boost::asio::co_spawn(io_, tool->handler(*context_, args),
                          [&](std::exception_ptr error, mcp::ToolResult result) {
                            if (error) result = mcp::tool_error("the handler threw");
                            promise.set_value(std::move(result));
                          });
    return promise.get_future().get();
  }

  // The whole output (out of band, from seq 1) comes to match `pattern`.
  void expect_output(const std::string& id, const std::string& pattern) {
    auto waited = call("wait", {{"execution_id", id},
                                {"until", "match"},
                                {"pattern", pattern},
                                {"since_seq", 1},
                                {"timeout_ms", 30000}});
    EXPECT_EQ(waited.content.value("wait_result", ""), "matched")
        << pattern << ": " << waited.content.dump();
  }

  LoopThread loop_;
  boost::asio::io_context& io_ = loop_.io();
  std::filesystem::path state_dir_;
  mcp::ToolConfig config_;
  session::Policy policy_;
  std::optional<session::Registry> registry_;
  std::optional<mcp::ToolContext> context_;
  std::vector<mcp::ToolDefinition> tools_;
};

}  // namespace agentty::test_support
