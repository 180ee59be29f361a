#include "mcp/response_funnel.hpp"

#include <gtest/gtest.h>

namespace agentty::mcp {
namespace {

class Funnel : public ::testing::Test {
 protected:
  static std::string reply(const json& id, const std::string& text) {
    return serialize(make_result(id, {{"text", text}}));
  }
  // The lines sent so far, taken.
  std::vector<std::string> take() { return std::exchange(sent_, {}); }

  std::vector<std::string> sent_;
  ResponseFunnel funnel_{[this](std::string line) { sent_.push_back(std::move(line)); }};
};

TEST_F(Funnel, AResponseToARequestOnItsOwnLineGoesOutAtOnce) {
  funnel_.begin(1, nullptr);
  EXPECT_TRUE(funnel_.unanswered(1));
  funnel_.answer(1, reply(1, "a"));
  EXPECT_EQ(take(), std::vector<std::string>{reply(1, "a")});
  EXPECT_FALSE(funnel_.unanswered(1));
}

// The refusal of a request reusing an id comes after the first request's
// answer, however many there are.
TEST_F(Funnel, ResponsesForAnIdNotAnsweredYetWaitForItsAnswer) {
  funnel_.begin("x", nullptr);
  for (int i = 0; i < 3; ++i) funnel_.respond("x", nullptr, reply("x", "refused"));
  funnel_.respond(nullptr, nullptr, reply(nullptr, "unrelated"));
  EXPECT_EQ(take(), std::vector<std::string>{reply(nullptr, "unrelated")});
  funnel_.answer("x", reply("x", "first"));
  EXPECT_EQ(take(), (std::vector<std::string>{reply("x", "first"), reply("x", "refused"),
                                              reply("x", "refused"), reply("x", "refused")}));
}

TEST_F(Funnel, ACancelledRequestSendsNothingAndReleasesWhatWaitedForIt) {
  funnel_.begin(7, nullptr);
  funnel_.respond(7, nullptr, reply(7, "refused"));
  funnel_.drop(7);
  EXPECT_EQ(take(), std::vector<std::string>{reply(7, "refused")});
  EXPECT_FALSE(funnel_.unanswered(7));
}

TEST_F(Funnel, ABatchIsOneArrayLineOnceItsLastResponseIsIn) {
  auto batch = funnel_.open_batch();
  funnel_.begin(1, batch);
  funnel_.answer(1, reply(1, "ping"));
  funnel_.begin(2, batch);  // a call still running
  funnel_.respond(nullptr, batch, reply(nullptr, "invalid element"));
  funnel_.close_batch(batch);
  EXPECT_TRUE(take().empty());
  EXPECT_TRUE(funnel_.unanswered(1)) << "its answer has not reached the client";
  funnel_.answer(2, reply(2, "call"));
  EXPECT_EQ(take(), std::vector<std::string>{"[" + reply(1, "ping") + "," +
                                             reply(nullptr, "invalid element") + "," +
                                             reply(2, "call") + "]"});
  EXPECT_FALSE(funnel_.unanswered(1));
}

// JSON-RPC: a batch with nothing to answer gets no answer, not "[]".
TEST_F(Funnel, ABatchWithNothingToAnswerSendsNothing) {
  auto notifications = funnel_.open_batch();
  funnel_.close_batch(notifications);
  auto cancelled = funnel_.open_batch();
  funnel_.begin(1, cancelled);
  funnel_.begin(2, cancelled);
  funnel_.close_batch(cancelled);
  funnel_.drop(1);
  funnel_.answer(2, reply(2, "done"));
  EXPECT_EQ(take(), std::vector<std::string>{"[" + reply(2, "done") + "]"});
  auto all_cancelled = funnel_.open_batch();
  funnel_.begin(3, all_cancelled);
  funnel_.close_batch(all_cancelled);
  funnel_.drop(3);
  EXPECT_TRUE(take().empty());
}

// Waiting for the array to go out would wait for itself: the refusal joins
// the array right after the answer it follows.
TEST_F(Funnel, AnIdReusedInsideABatchIsAnsweredInItAfterTheFirst) {
  auto batch = funnel_.open_batch();
  funnel_.begin(5, batch);  // a call
  funnel_.respond(5, batch, reply(5, "refused"));
  funnel_.begin(6, batch);  // a ping, answered at once
  funnel_.answer(6, reply(6, "pong"));
  funnel_.respond(6, batch, reply(6, "refused"));
  funnel_.close_batch(batch);
  EXPECT_TRUE(take().empty());
  funnel_.answer(5, reply(5, "call"));
  EXPECT_EQ(take(),
            std::vector<std::string>{"[" + reply(6, "pong") + "," + reply(6, "refused") + "," +
                                     reply(5, "call") + "," + reply(5, "refused") + "]"});
}

TEST_F(Funnel, ALineReusingAnIdAnsweredInABatchStillBeingAssembledWaitsForTheBatch) {
  auto batch = funnel_.open_batch();
  funnel_.begin(1, batch);
  funnel_.answer(1, reply(1, "ping"));
  funnel_.begin(2, batch);
  funnel_.close_batch(batch);
  ASSERT_TRUE(funnel_.unanswered(1));
  funnel_.respond(1, nullptr, reply(1, "refused"));
  EXPECT_TRUE(take().empty());
  funnel_.answer(2, reply(2, "call"));
  EXPECT_EQ(take(), (std::vector<std::string>{"[" + reply(1, "ping") + "," + reply(2, "call") + "]",
                                              reply(1, "refused")}));
}

TEST_F(Funnel, ABatchReusingTheIdOfACallInProgressGoesOutAfterThatCallsAnswer) {
  funnel_.begin(9, nullptr);
  auto batch = funnel_.open_batch();
  funnel_.respond(9, batch, reply(9, "refused"));
  funnel_.begin(10, batch);
  funnel_.answer(10, reply(10, "pong"));
  funnel_.close_batch(batch);
  EXPECT_TRUE(take().empty());
  funnel_.answer(9, reply(9, "call"));
  EXPECT_EQ(take(), (std::vector<std::string>{reply(9, "call"), "[" + reply(10, "pong") + "," +
                                                                    reply(9, "refused") + "]"}));
  // The refusal's id stays unanswered until its batch went out: it has.
  EXPECT_FALSE(funnel_.unanswered(9));
}

// A second answer for one request (a handler that threw after answering is
// answered again with -32603) must not count as another element's: the
// batch went out early, or agentty aborted on the count going below zero.
TEST_F(Funnel, ASecondAnswerToARequestOfABatchIsKeptWithoutCuttingTheBatchShort) {
  auto batch = funnel_.open_batch();
  funnel_.begin(1, batch);
  funnel_.begin(2, batch);
  funnel_.close_batch(batch);
  funnel_.answer(1, reply(1, "first"));
  funnel_.answer(1, reply(1, "again"));
  EXPECT_TRUE(take().empty()) << "request 2 has not answered";
  funnel_.answer(2, reply(2, "two"));
  EXPECT_EQ(take(), std::vector<std::string>{"[" + reply(1, "first") + "," + reply(1, "again") +
                                             "," + reply(2, "two") + "]"});
}

TEST_F(Funnel, AResponsePastTheBatchBoundIsReplacedByAnErrorSayingSo) {
  auto batch = funnel_.open_batch();
  const std::string big(ResponseFunnel::kMaxBatchBytes / 2 + 1, 'x');
  for (int id : {1, 2}) {
    funnel_.begin(id, batch);
    funnel_.answer(id, reply(id, big));
  }
  funnel_.close_batch(batch);
  auto lines = take();
  ASSERT_EQ(lines.size(), 1u);
  const json array = json::parse(lines[0]);
  ASSERT_EQ(array.size(), 2u);
  EXPECT_EQ(array[0]["result"]["text"], big);
  EXPECT_EQ(array[1]["id"], 2);
  EXPECT_EQ(array[1]["error"]["code"], rpc_error::internal_error);
  EXPECT_NE(array[1]["error"]["message"].get<std::string>().find("lines of their own"),
            std::string::npos);
}

}  // namespace
}  // namespace agentty::mcp
