// McpServer over its line interface: lines in, the lines it sends out, with
// a real Registry on a loop of its own thread (support/tool_fixture.hpp).
// Only requests answered at once are used, so the lines an exchange returns
// are all it will send for them.
#include "mcp/mcp_server.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/tool_fixture.hpp"

namespace agentty::mcp {
namespace {

class McpServerLines : public test_support::ToolFixture {
 protected:
  void SetUp() override {
    ToolFixture::SetUp();
    on_loop([this] {
      McpServer::Hooks hooks;
      hooks.send = [this](std::string line) {
        {
          std::lock_guard lock(async_mutex_);
          async_lines_.push_back(json::parse(line));
        }
        async_sent_.notify_all();
        lines_.push_back(std::move(line));
      };
      hooks.terminal_url = [](const std::string& id) { return "http://127.0.0.1:9/#e=" + id; };
      server_.emplace(io_, *registry_, config_, &policy_, std::move(hooks));
      return 0;
    });
  }
  void TearDown() override {
    on_loop([this] {
      server_.reset();
      return 0;
    });
    ToolFixture::TearDown();
  }

  // Hands `line` to the server; the lines it sent for it, parsed.
  std::vector<json> exchange(const std::string& line) {
    return on_loop([&] {
      lines_.clear();
      server_->handle_line(line);
      std::vector<json> sent;
      for (const auto& l : lines_) sent.push_back(json::parse(l));
      return sent;
    });
  }

  // The first line the server sent, at any time, that `matches` (a tool
  // call's answer comes from its coroutine, after the exchange).
  json await_line(const std::function<bool(const json&)>& matches) {
    std::unique_lock lock(async_mutex_);
    json found;
    const bool sent = async_sent_.wait_for(lock, std::chrono::seconds(30), [&] {
      for (const auto& line : async_lines_)
        if (matches(line)) return found = line, true;
      return false;
    });
    EXPECT_TRUE(sent) << "no such line came";
    return found;
  }
  bool was_sent(const std::function<bool(const json&)>& matches) {
    std::lock_guard lock(async_mutex_);
    return std::any_of(async_lines_.begin(), async_lines_.end(), matches);
  }

  void initialize(const std::string& version, json capabilities = json::object(),
                  bool initialized = true) {
    auto sent = exchange(json{{"jsonrpc", "2.0"},
                              {"id", "init"},
                              {"method", "initialize"},
                              {"params",
                               {{"protocolVersion", version},
                                {"capabilities", capabilities},
                                {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}}
                             .dump());
    ASSERT_EQ(sent.size(), 1u);
    ASSERT_EQ(sent[0]["result"]["protocolVersion"], version);
    if (initialized) send_initialized();
  }
  void send_initialized() {
    EXPECT_TRUE(exchange(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").empty());
  }
  // The id of a `sleep 30` started for a call to watch; empty if it failed.
  std::string start_sleep() {
    session::ExecutionSpec spec;
    spec.argv = {"sleep", "30"};
    spec.command_text = "sleep 30";
    auto started = loop_.await_on_loop([&] { return registry_->start_local(spec); });
    EXPECT_TRUE(started) << started.error();
    return started ? started.value()->id() : "";
  }

  std::vector<std::string> lines_;
  std::mutex async_mutex_;
  std::condition_variable async_sent_;
  std::vector<json> async_lines_;
  std::optional<McpServer> server_;
};

constexpr const char* kPingBatch =
    R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}])";

// Only 2025-03-26 has batches (2025-06-18 removed them; 2024-11-05's schema
// has no batch message); initialize itself is never part of one.
TEST_F(McpServerLines, ABatchIsRefusedBeforeInitializeAndInSessionsOfAnotherVersion) {
  auto before = exchange(kPingBatch);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_TRUE(before[0]["id"].is_null());
  EXPECT_EQ(before[0]["error"]["code"], rpc_error::invalid_request);
  EXPECT_NE(before[0]["error"]["message"].get<std::string>().find("not been initialized"),
            std::string::npos)
      << before[0];
  initialize("2025-06-18");
  auto after = exchange(kPingBatch);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0]["id"].is_null());
  EXPECT_NE(after[0]["error"]["message"].get<std::string>().find("speaks MCP 2025-06-18"),
            std::string::npos)
      << after[0];
}

TEST_F(McpServerLines, ABatchIsRefusedInA2024_11_05Session) {
  initialize("2024-11-05");
  auto sent = exchange(kPingBatch);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["error"]["code"], rpc_error::invalid_request);
}

// JSON-RPC 2.0: one array holding a response per request (and per invalid
// element), none for notifications.
TEST_F(McpServerLines, InA2025_03_26SessionABatchIsAnsweredWithOneArray) {
  initialize("2025-03-26");
  auto sent =
      exchange(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},)"
               R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},)"
               R"(5,)"
               R"({"jsonrpc":"2.0","id":"t","method":"tools/list"},)"
               R"({"jsonrpc":"2.0","id":"x","method":"no/such"}])");
  ASSERT_EQ(sent.size(), 1u);
  const json& array = sent[0];
  ASSERT_TRUE(array.is_array()) << array;
  ASSERT_EQ(array.size(), 4u) << array;
  EXPECT_EQ(array[0]["id"], 1);
  EXPECT_EQ(array[0]["result"], json::object());
  EXPECT_TRUE(array[1]["id"].is_null());
  EXPECT_EQ(array[1]["error"]["code"], rpc_error::invalid_request);
  EXPECT_EQ(array[2]["id"], "t");
  EXPECT_FALSE(array[2]["result"]["tools"].empty());
  EXPECT_EQ(array[3]["id"], "x");
  EXPECT_EQ(array[3]["error"]["code"], rpc_error::method_not_found);
}

TEST_F(McpServerLines, ABatchOfNotificationsOnlyIsNotAnswered) {
  initialize("2025-03-26");
  EXPECT_TRUE(exchange(R"([{"jsonrpc":"2.0","method":"notifications/initialized"},)"
                       R"({"jsonrpc":"2.0","method":"notifications/whatever"}])")
                  .empty());
  auto empty = exchange("[]");
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0]["error"]["code"], rpc_error::invalid_request);
}

// MCP lifecycle: initialize is the first interaction; ping may come before.
TEST_F(McpServerLines, BeforeInitializeOnlyPingIsServed) {
  auto pong = exchange(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  ASSERT_EQ(pong.size(), 1u);
  EXPECT_EQ(pong[0]["result"], json::object());
  for (const char* method : {"tools/list", "tools/call", "resources/list", "logging/setLevel"}) {
    auto refused = exchange(
        json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", method}, {"params", json::object()}}.dump());
    ASSERT_EQ(refused.size(), 1u) << method;
    EXPECT_EQ(refused[0]["error"]["code"], rpc_error::invalid_request) << method;
    EXPECT_NE(refused[0]["error"]["message"].get<std::string>().find("before initialize"),
              std::string::npos)
        << refused[0];
  }
  initialize("2025-06-18");
  auto listed = exchange(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_TRUE(listed[0].contains("result")) << listed[0];
}

// MCP 2025-03-26: "The initialize request MUST NOT be part of a JSON-RPC batch".
TEST_F(McpServerLines, InitializeInABatchIsRefusedInsideTheArray) {
  initialize("2025-03-26");
  auto sent = exchange(
      R"([{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"x","version":"1"}}},)"
      R"({"jsonrpc":"2.0","id":2,"method":"ping"}])");
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_EQ(sent[0].size(), 2u) << sent[0];
  EXPECT_EQ(sent[0][0]["error"]["code"], rpc_error::invalid_request);
  EXPECT_EQ(sent[0][1]["result"], json::object());
  // The session's version is still 2025-03-26: batches are still read.
  EXPECT_TRUE(exchange(kPingBatch)[0].is_array());
}

// Pagination: invalid cursors SHOULD be -32602; agentty never gives one.
TEST_F(McpServerLines, ACursorOnAListIsInvalidParamsAndANullOneIsNone) {
  initialize("2025-11-25");
  for (const char* method : {"tools/list", "resources/list", "resources/templates/list"}) {
    auto refused = exchange(
        json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", {{"cursor", "abc"}}}}
            .dump());
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0]["error"]["code"], rpc_error::invalid_params) << method;
    auto first_page = exchange(
        json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", method}, {"params", {{"cursor", nullptr}}}}
            .dump());
    EXPECT_TRUE(first_page[0].contains("result")) << method << first_page[0];
  }
}

// MCP cancellation: "Both parties SHOULD log cancellation reasons".
TEST_F(McpServerLines, ACancelledCallIsLoggedWithItsReason) {
  initialize("2025-06-18");
  const std::string execution = start_sleep();
  ASSERT_FALSE(execution.empty());
  EXPECT_TRUE(exchange(json{{"jsonrpc", "2.0"},
                            {"id", "w"},
                            {"method", "tools/call"},
                            {"params",
                             {{"name", "wait"},
                              {"arguments", {{"execution_id", execution}, {"until", "exit"}}}}}}
                           .dump())
                  .empty());
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  spdlog::default_logger()->sinks().push_back(sink);
  EXPECT_TRUE(
      exchange(
          R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"user pressed Esc"}})")
          .empty());
  spdlog::default_logger()->sinks().pop_back();
  EXPECT_NE(log.str().find(R"(the client cancelled request "w": user pressed Esc)"),
            std::string::npos)
      << log.str();
}

// MCP lifecycle: the server SHOULD NOT send requests other than pings and
// logging before the initialized notification.
TEST_F(McpServerLines, NoElicitationIsSentBeforeTheInitializedNotification) {
  initialize("2025-11-25", {{"elicitation", {{"url", json::object()}}}}, /*initialized=*/false);
  const std::string execution = start_sleep();
  ASSERT_FALSE(execution.empty());
  auto handoff = [&](const std::string& id) {
    exchange(json{{"jsonrpc", "2.0"},
                  {"id", id},
                  {"method", "tools/call"},
                  {"params",
                   {{"name", "handoff"},
                    {"arguments", {{"execution_id", execution}, {"reason", "type " + id}}}}}}
                 .dump());
    return await_line([&](const json& line) { return line.value("id", json()) == id; });
  };
  auto early = handoff("early");
  EXPECT_EQ(early["result"]["structuredContent"]["asked_in_client"], false) << early;
  auto is_elicitation = [](const json& line) {
    return line.value("method", "") == "elicitation/create";
  };
  EXPECT_FALSE(was_sent(is_elicitation));
  send_initialized();
  auto later = handoff("later");
  EXPECT_EQ(later["result"]["structuredContent"]["asked_in_client"], true) << later;
  EXPECT_TRUE(was_sent(is_elicitation));
}

}  // namespace
}  // namespace agentty::mcp
