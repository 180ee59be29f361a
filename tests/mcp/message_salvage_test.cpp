#include "mcp/message_salvage.hpp"

#include <gtest/gtest.h>

#include "mcp/json_rpc.hpp"

namespace agentty::mcp {
namespace {

TEST(MessageSalvage, UnpairedSurrogateEscapesAreReplacedAndPairsKept) {
  auto repaired = replace_invalid_text(R"({"a":"x\ud800y","b":"\ud83d\ude00","c":"\udc00"})");
  ASSERT_TRUE(repaired);
  EXPECT_EQ(*repaired, R"({"a":"x\ufffdy","b":"\ud83d\ude00","c":"\ufffd"})");
  EXPECT_FALSE(replace_invalid_text(R"({"b":"\ud83d\ude00","d":"\\ud800"})"));
}

TEST(MessageSalvage, BytesThatAreNotUtf8AreReplaced) {
  auto repaired = replace_invalid_text("{\"a\":\"x\xff\xc3(\xed\xa0\x80\",\"b\":\"\xc3\xa9\"}");
  ASSERT_TRUE(repaired);
  EXPECT_EQ(*repaired,
            "{\"a\":\"x\xEF\xBF\xBD\xEF\xBF\xBD(\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\",\"b\":"
            "\"\xc3\xa9\"}");
}

TEST(MessageSalvage, PathNamesTheArgumentHoldingReplacedText) {
  auto value = nlohmann::json::parse(R"({"name":"execute","arguments":{"env":{"K":"a\ufffd"}}})");
  EXPECT_EQ(path_of_replaced_text(value), "arguments.env.K");
  value = nlohmann::json::parse(R"({"arguments":{"argv":["ok","\ufffd"]}})");
  EXPECT_EQ(path_of_replaced_text(value), "arguments.argv[1]");
  EXPECT_EQ(path_of_replaced_text(nlohmann::json::parse(R"({"a":"fine"})")), "");
}

TEST(MessageSalvage, RequestIdIsFoundAtTheStartOrTheEnd) {
  EXPECT_EQ(find_request_id(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{)", ""), 7);
  EXPECT_EQ(find_request_id(R"({"id":"abc", "method")", ""), "abc");
  EXPECT_EQ(find_request_id(R"({"method":"x")", R"(...xyz"}},"jsonrpc":"2.0","id":12})"), 12);
  // An id inside params is not the request's.
  EXPECT_TRUE(
      find_request_id(R"({"method":"x","params":{"id":5}})", R"({"method":"x","params":{"id":5}})")
          .is_null());
  EXPECT_TRUE(find_request_id("garbage", "garbage").is_null());
}

TEST(JsonRpc, RequestWithTextThatIsNotUnicodeIsReadAndMarked) {
  auto message =
      parse_line(
          R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute","arguments":{"command":"echo \ud83d"}}})")
          .messages.front();
  auto* request = std::get_if<Request>(&message);
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(request->id, 3);
  EXPECT_EQ(request->invalid_text_at, "arguments.command");
}

TEST(JsonRpc, ParseErrorCarriesTheRequestIdWhenItCanBeFound) {
  auto message = parse_line(R"({"jsonrpc":"2.0","id":9,"method":"ping",,})").messages.front();
  auto* error = std::get_if<ErrorReply>(&message);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->id, 9);
  EXPECT_EQ(error->code, rpc_error::parse_error);
  EXPECT_NE(error->message.find("at byte"), std::string::npos) << error->message;
}

}  // namespace
}  // namespace agentty::mcp
