#include "mcp/client_requests.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace agentty::mcp {
namespace {

// Requests as the client would see them, and answers fed back as lines.
struct Fixture {
  std::vector<json> sent;
  ClientRequests requests{[this](const json& message) { sent.push_back(message); }};

  bool answer(const std::string& line) {
    auto message = parse_line(line).messages.front();
    auto* response = std::get_if<Response>(&message);
    EXPECT_NE(response, nullptr) << line << " is not read as a response";
    return response && requests.on_response(*response);
  }
};

std::string result_line(const std::string& id, const std::string& result) {
  return R"({"jsonrpc":"2.0","id":")" + id + R"(","result":)" + result + "}";
}

TEST(ClientRequests, EachRequestGoesOutWithAnIdOfItsOwn) {
  Fixture f;
  const auto a = f.requests.start("elicitation/create", {{"mode", "url"}}, nullptr);
  const auto b = f.requests.start("elicitation/create", {{"mode", "url"}}, nullptr);
  EXPECT_NE(a, b);
  ASSERT_EQ(f.sent.size(), 2u);
  EXPECT_EQ(f.sent[0], (json{{"jsonrpc", "2.0"},
                             {"id", a},
                             {"method", "elicitation/create"},
                             {"params", {{"mode", "url"}}}}));
  EXPECT_EQ(f.sent[1]["id"], b);
  EXPECT_EQ(f.requests.pending(), 2u);
}

TEST(ClientRequests, AResultReachesItsOwnRequestOnce) {
  Fixture f;
  std::vector<std::string> answered;
  const auto a = f.requests.start("x", json::object(), [&](const ClientRequests::Answer& r) {
    answered.push_back("a:" + r.result.dump());
  });
  const auto b = f.requests.start("x", json::object(), [&](const ClientRequests::Answer& r) {
    answered.push_back("b:" + r.result.dump());
  });
  EXPECT_TRUE(f.answer(result_line(b, R"({"action":"decline"})")));
  EXPECT_TRUE(f.answer(result_line(a, R"({"action":"accept"})")));
  EXPECT_EQ(answered,
            (std::vector<std::string>{R"(b:{"action":"decline"})", R"(a:{"action":"accept"})"}));
  // Answered twice: the second is nobody's.
  EXPECT_FALSE(f.answer(result_line(a, R"({"action":"cancel"})")));
  EXPECT_EQ(answered.size(), 2u);
  EXPECT_EQ(f.requests.pending(), 0u);
}

TEST(ClientRequests, AnErrorReplyReachesTheRequestAsAnError) {
  Fixture f;
  std::optional<ClientRequests::Answer> got;
  const auto id = f.requests.start("elicitation/create", json::object(),
                                   [&](const ClientRequests::Answer& answer) { got = answer; });
  EXPECT_TRUE(f.answer(R"({"jsonrpc":"2.0","id":")" + id +
                       R"(","error":{"code":-32601,"message":"Method not found"}})"));
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->error);
  EXPECT_EQ(got->error->code, rpc_error::method_not_found);
  EXPECT_EQ(got->error->message, "Method not found");
  EXPECT_TRUE(got->result.is_null());
}

TEST(ClientRequests, AnswersToIdsNobodyWaitsForAreIgnored) {
  Fixture f;
  int answered = 0;
  const auto id =
      f.requests.start("x", json::object(), [&](const ClientRequests::Answer&) { ++answered; });
  for (const std::string& line : {
           std::string(R"({"jsonrpc":"2.0","id":1,"result":{}})"),  // a number: not ours
           result_line("agentty-999", "{}"),
           result_line(id + "0", "{}"),
           result_line("agentty-", "{}"),
           result_line("other-1", "{}"),
           std::string(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})"),
           std::string(R"({"jsonrpc":"2.0","id":")" + id + R"(x","error":"not an object"})"),
       }) {
    EXPECT_FALSE(f.answer(line)) << line;
  }
  EXPECT_EQ(answered, 0);
  EXPECT_EQ(f.requests.pending(), 1u);
}

TEST(ClientRequests, AnAnswerAfterTheServerGaveUpIsIgnored) {
  Fixture f;
  int answered = 0;
  const auto id =
      f.requests.start("x", json::object(), [&](const ClientRequests::Answer&) { ++answered; });
  f.requests.abandon(id);
  EXPECT_EQ(f.requests.pending(), 0u);
  EXPECT_FALSE(f.answer(result_line(id, R"({"action":"accept"})")));
  EXPECT_EQ(answered, 0);
}

TEST(ClientRequests, PastTheLimitTheOldestUnansweredIsGivenUp) {
  Fixture f;
  std::vector<std::string> answered;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i <= ClientRequests::kMaxPending; ++i) {
    ids.push_back(f.requests.start("x", json::object(), [&answered, i](const auto&) {
      answered.push_back(std::to_string(i));
    }));
  }
  EXPECT_EQ(f.requests.pending(), ClientRequests::kMaxPending);
  EXPECT_FALSE(f.answer(result_line(ids.front(), "{}")));
  EXPECT_TRUE(f.answer(result_line(ids.back(), "{}")));
  EXPECT_TRUE(f.answer(result_line(ids[1], "{}")));
  EXPECT_EQ(answered, (std::vector<std::string>{std::to_string(ClientRequests::kMaxPending), "1"}));
  // MCP timeouts: a sender that stops waiting SHOULD cancel the request.
  const auto cancelled = std::find_if(f.sent.begin(), f.sent.end(), [](const json& message) {
    return message.value("method", "") == "notifications/cancelled";
  });
  ASSERT_NE(cancelled, f.sent.end());
  EXPECT_EQ((*cancelled)["params"]["requestId"], ids.front());
  EXPECT_FALSE(cancelled->contains("id")) << "a notification";
  EXPECT_EQ(std::count_if(f.sent.begin(), f.sent.end(),
                          [](const json& message) {
                            return message.value("method", "") == "notifications/cancelled";
                          }),
            1);
}

TEST(ClientRequests, ACallbackMayStartTheNextRequest) {
  Fixture f;
  std::string second;
  const auto first = f.requests.start("x", json::object(), [&](const auto&) {
    second = f.requests.start("y", json::object(), nullptr);
  });
  EXPECT_TRUE(f.answer(result_line(first, "{}")));
  EXPECT_FALSE(second.empty());
  EXPECT_NE(second, first);
  EXPECT_EQ(f.requests.pending(), 1u);
}

}  // namespace
}  // namespace agentty::mcp
