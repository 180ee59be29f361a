// HandoffElicitations against real executions: what goes to the client when
// a handoff starts, is renewed, is answered late, and ends (the e2e test
// handoff_elicitation.test.mjs covers the SDK client and the web takeover).
#include "mcp/handoff_elicitations.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "support/registry_fixture.hpp"

namespace agentty::mcp {
namespace {

class HandoffElicitationsTest : public test_support::RegistryFixture {
 protected:
  void SetUp() override {
    RegistryFixture::SetUp();
    loop_.on_loop([this] {
      auto send = [this](const json& message) { sent_.push_back(message); };
      requests_.emplace(send);
      elicitations_.emplace(*registry_, *requests_, send, [this](const std::string& id) {
        return url_.empty() ? url_ : url_ + id;
      });
      elicitations_->set_client_can_ask(true);
      return 0;
    });
  }
  void TearDown() override {
    loop_.on_loop([this] {
      elicitations_.reset();
      requests_.reset();
      return 0;
    });
    RegistryFixture::TearDown();
  }

  // The messages sent since the last call, taken on the loop.
  std::vector<json> take_sent() {
    return loop_.on_loop([this] { return std::exchange(sent_, {}); });
  }
  std::string state(const std::string& id) {
    return loop_.on_loop([&] { return elicitations_->state(id); });
  }
  void answer(const json& request_id, const json& result) {
    loop_.on_loop([&] {
      return requests_->on_response(Response{request_id, result, std::nullopt});
    });
  }

  std::string url_ = "http://127.0.0.1:1/t/";
  std::vector<json> sent_;
  std::optional<ClientRequests> requests_;
  std::optional<HandoffElicitations> elicitations_;
};

TEST_F(HandoffElicitationsTest, ANewReasonEndsTheOldQuestionAndAsksAgain) {
  auto cat = start("cat");
  ASSERT_TRUE(cat);
  loop_.on_loop([&] {
    cat->request_handoff("Enter the password");
    return 0;
  });
  auto first = take_sent();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]["method"], "elicitation/create");
  EXPECT_EQ(first[0]["params"]["mode"], "url");
  EXPECT_EQ(first[0]["params"]["url"], url_ + cat->id());
  EXPECT_NE(first[0]["params"]["message"].get<std::string>().find("Enter the password"),
            std::string::npos);
  EXPECT_EQ(state(cat->id()), "asked");

  // The same reason again: the person is not asked twice.
  loop_.on_loop([&] {
    cat->request_handoff("Enter the password");
    return 0;
  });
  EXPECT_TRUE(take_sent().empty());

  loop_.on_loop([&] {
    cat->request_handoff("Approve the deploy");
    return 0;
  });
  auto renewed = take_sent();
  ASSERT_EQ(renewed.size(), 2u);
  EXPECT_EQ(renewed[0]["method"], "notifications/elicitation/complete");
  EXPECT_EQ(renewed[0]["params"]["elicitationId"], first[0]["params"]["elicitationId"]);
  EXPECT_EQ(renewed[1]["method"], "elicitation/create");
  EXPECT_NE(renewed[1]["params"]["elicitationId"], first[0]["params"]["elicitationId"]);

  // The answer to the question no longer asked changes nothing.
  answer(first[0]["id"], {{"action", "decline"}});
  EXPECT_EQ(state(cat->id()), "asked");
  answer(renewed[1]["id"], {{"action", "decline"}});
  EXPECT_EQ(state(cat->id()), "declined");

  // Taken over and handed back: over, and closed in the client.
  loop_.on_loop([&] {
    EXPECT_TRUE(cat->take_over("person", std::nullopt));
    EXPECT_TRUE(cat->release("person"));
    return 0;
  });
  auto done = take_sent();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0]["method"], "notifications/elicitation/complete");
  EXPECT_EQ(done[0]["params"]["elicitationId"], renewed[1]["params"]["elicitationId"]);
  EXPECT_EQ(state(cat->id()), "");
}

TEST_F(HandoffElicitationsTest, NothingIsSentWithoutTheCapabilityOrATerminalUrl) {
  auto cat = start("cat");
  ASSERT_TRUE(cat);
  loop_.on_loop([&] {
    elicitations_->set_client_can_ask(false);
    cat->request_handoff("first");
    return 0;
  });
  EXPECT_TRUE(take_sent().empty());
  loop_.on_loop([&] {
    elicitations_->set_client_can_ask(true);
    url_.clear();  // no web server: an empty terminal_url
    cat->request_handoff("second");
    return 0;
  });
  EXPECT_TRUE(take_sent().empty());
  EXPECT_EQ(state(cat->id()), "");
}

TEST_F(HandoffElicitationsTest, AClientErrorIsRecordedAndNothingIsCompleted) {
  auto cat = start("cat");
  ASSERT_TRUE(cat);
  loop_.on_loop([&] {
    cat->request_handoff("Enter the password");
    return 0;
  });
  auto asked = take_sent();
  ASSERT_EQ(asked.size(), 1u);
  loop_.on_loop([&] {
    return requests_->on_response(Response{
        asked[0]["id"], nullptr, ResponseError{rpc_error::method_not_found, "Method not found"}});
  });
  EXPECT_EQ(state(cat->id()), "failed");
  loop_.on_loop([&] {
    cat->kill_now();
    return 0;
  });
  EXPECT_TRUE(eventually([&] { return cat->finished(); }));
  EXPECT_TRUE(take_sent().empty());
  EXPECT_EQ(state(cat->id()), "");
}

}  // namespace
}  // namespace agentty::mcp
