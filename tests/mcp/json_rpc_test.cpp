#include "mcp/json_rpc.hpp"

#include <gtest/gtest.h>

namespace agentty::mcp {
namespace {

const ErrorReply& error_of(const Message& message) {
  return std::get<ErrorReply>(message);
}

// The one message of a line that is not a batch.
Message parse_message(std::string_view line) {
  auto parsed = parse_line(line);
  EXPECT_FALSE(parsed.is_batch) << line;
  EXPECT_EQ(parsed.messages.size(), 1u) << line;
  return parsed.messages.empty() ? Message{} : std::move(parsed.messages.front());
}

// A number JSON allows and a double cannot hold threw out_of_range, which
// nothing caught: agentty ended.
TEST(JsonRpc, ANumberOutOfRangeIsAParseErrorWithTheRequestId) {
  for (const char* number : {"1e400", "-1e400"}) {
    const auto message = parse_message(
        std::string(R"({"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":)") + number + "}}");
    ASSERT_TRUE(std::holds_alternative<ErrorReply>(message)) << number;
    EXPECT_EQ(error_of(message).id, 4);
    EXPECT_EQ(error_of(message).code, rpc_error::parse_error);
    EXPECT_NE(error_of(message).message.find("out of range"), std::string::npos)
        << error_of(message).message;
  }
}

// Copying or printing a json value recurses per level: 200,000 levels
// overflowed the stack once the parser (iterative) had read them.
TEST(JsonRpc, NestingPastTheLimitIsRefusedWithTheRequestId) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const auto message =
      parse_message(R"({"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":)" + deep + "}}");
  ASSERT_TRUE(std::holds_alternative<ErrorReply>(message));
  EXPECT_EQ(error_of(message).id, "a");
  EXPECT_EQ(error_of(message).code, rpc_error::invalid_request);
  EXPECT_NE(error_of(message).message.find("200002 levels"), std::string::npos)
      << error_of(message).message;
}

TEST(JsonRpc, BracketsInsideStringsAndModestNestingAreRead) {
  const std::string brackets(1000, '[');
  const auto in_string = parse_message(
      R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":")" + brackets + R"(\"["}})");
  EXPECT_TRUE(std::holds_alternative<Request>(in_string));
  const auto modest = parse_message(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" +
                                    std::string(100, '[') + std::string(100, ']') + "}}");
  EXPECT_TRUE(std::holds_alternative<Request>(modest));
}

// The answers to the server's own requests (elicitation/create) carry their
// result or the client's error.
TEST(JsonRpc, AResponseCarriesItsResultOrTheClientsError) {
  const auto result =
      parse_message(R"({"jsonrpc":"2.0","id":"agentty-1","result":{"action":"accept"}})");
  ASSERT_TRUE(std::holds_alternative<Response>(result));
  EXPECT_EQ(std::get<Response>(result).id, "agentty-1");
  EXPECT_EQ(std::get<Response>(result).result, (json{{"action", "accept"}}));
  EXPECT_FALSE(std::get<Response>(result).error);

  const auto error = parse_message(
      R"({"jsonrpc":"2.0","id":"agentty-2","error":{"code":-32601,"message":"Method not found"}})");
  ASSERT_TRUE(std::holds_alternative<Response>(error));
  const auto& failure = std::get<Response>(error).error;
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->code, rpc_error::method_not_found);
  EXPECT_EQ(failure->message, "Method not found");
}

// A client that could not read a request answers with "id": null; answering
// that with an error of our own would start an exchange of errors.
TEST(JsonRpc, AnErrorAnswerWithANullIdIsAResponseNotAnInvalidRequest) {
  const auto message = parse_message(
      R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
  ASSERT_TRUE(std::holds_alternative<Response>(message));
  EXPECT_TRUE(std::get<Response>(message).id.is_null());
  EXPECT_EQ(std::get<Response>(message).error->code, rpc_error::parse_error);
}

// JSON-RPC 2.0 batches: each element is read as a line of its own would be,
// an invalid one becoming the error to put in the answer.
TEST(JsonRpc, ABatchIsEachOfItsMessagesReadAsAlone) {
  const auto parsed =
      parse_line(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},)"
                 R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},)"
                 R"(1,{"jsonrpc":"1.0","id":"b","method":"ping"},)"
                 R"({"jsonrpc":"2.0","id":"agentty-1","result":{}}])");
  ASSERT_TRUE(parsed.is_batch);
  ASSERT_EQ(parsed.messages.size(), 5u);
  EXPECT_EQ(std::get<Request>(parsed.messages[0]).id, 1);
  EXPECT_EQ(std::get<Notification>(parsed.messages[1]).method, "notifications/cancelled");
  EXPECT_TRUE(error_of(parsed.messages[2]).id.is_null());
  EXPECT_EQ(error_of(parsed.messages[2]).code, rpc_error::invalid_request);
  EXPECT_EQ(error_of(parsed.messages[3]).id, "b");
  EXPECT_EQ(std::get<Response>(parsed.messages[4]).id, "agentty-1");
}

TEST(JsonRpc, AnEmptyBatchIsOneInvalidRequest) {
  const auto parsed = parse_line(" [ ] ");
  EXPECT_FALSE(parsed.is_batch);
  ASSERT_EQ(parsed.messages.size(), 1u);
  EXPECT_TRUE(error_of(parsed.messages[0]).id.is_null());
  EXPECT_EQ(error_of(parsed.messages[0]).code, rpc_error::invalid_request);
}

// An id found in a broken batch belongs to one request of several: the
// error is the whole line's (JSON-RPC: one response, id null).
TEST(JsonRpc, ABatchThatIsNotJsonIsOneParseErrorWithANullId) {
  const auto parsed = parse_line(R"([{"jsonrpc":"2.0","id":7,"method":"ping"},{"id":8)");
  EXPECT_FALSE(parsed.is_batch);
  ASSERT_EQ(parsed.messages.size(), 1u);
  EXPECT_TRUE(error_of(parsed.messages[0]).id.is_null());
  EXPECT_EQ(error_of(parsed.messages[0]).code, rpc_error::parse_error);
}

TEST(JsonRpc, TextThatIsNotUnicodeMarksOnlyTheBatchElementHoldingIt) {
  const auto parsed = parse_line(
      R"([{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"input":"a\ud800"}}},)"
      R"({"jsonrpc":"2.0","id":2,"method":"ping"}])");
  ASSERT_TRUE(parsed.is_batch);
  ASSERT_EQ(parsed.messages.size(), 2u);
  EXPECT_EQ(std::get<Request>(parsed.messages[0]).invalid_text_at, "arguments.input");
  EXPECT_EQ(std::get<Request>(parsed.messages[1]).invalid_text_at, "");
}

}  // namespace
}  // namespace agentty::mcp
