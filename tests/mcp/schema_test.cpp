#include "mcp/schema.hpp"

#include <gtest/gtest.h>

namespace agentty::mcp {
namespace {

using nlohmann::json;

const json kSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "op": {"type": "string", "enum": ["stat", "grep"], "description": "What to do."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 10}
  },
  "required": ["op"],
  "additionalProperties": false
})");

// {action: "stat"} is a misnamed op: saying "action is unknown" (and
// what is accepted) helps; "op is required" alone does not say why.
TEST(Schema, AnUnknownArgumentIsNamedBeforeAMissingOne) {
  EXPECT_EQ(validate(kSchema, json{{"action", "stat"}}),
            "action: unknown argument; the accepted ones are: limit, op");
}

TEST(Schema, AMissingArgumentGivesItsDescription) {
  EXPECT_EQ(validate(kSchema, json::object()), "op: is required. What to do.");
}

TEST(Schema, BoundsAndEnumsNameTheArgument) {
  const auto bounds = validate(kSchema, json{{"op", "stat"}, {"limit", 11}});
  ASSERT_TRUE(bounds.has_value());
  EXPECT_EQ(bounds->rfind("limit: ", 0), 0u) << *bounds;
  const auto value = validate(kSchema, json{{"op", "find"}});
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->rfind("op: ", 0), 0u) << *value;
  EXPECT_EQ(validate(kSchema, json{{"op", "grep"}, {"limit", 3}}), std::nullopt);
}

// 1e19 is an integer (JSON has one number type): out of bounds says what to
// give; "must be an integer" did not, and the check cast it out of range.
TEST(Schema, AnIntegerTooLargeForItsBoundsIsOutOfBoundsNotAWrongType) {
  EXPECT_EQ(validate(kSchema, json{{"op", "stat"}, {"limit", 1e19}}),
            "limit: must be at most 10 (got 1e+19)");
  EXPECT_EQ(validate(kSchema, json{{"op", "stat"}, {"limit", -1e300}}),
            "limit: must be at least 1 (got -1e+300)");
  EXPECT_EQ(validate(kSchema, json{{"op", "stat"}, {"limit", 2.0}}), std::nullopt);
  EXPECT_EQ(validate(kSchema, json{{"op", "stat"}, {"limit", 2.5}}),
            "limit: must be an integer (got 2.5)");
}

// An unknown key that cannot be read as it is (empty, a control character,
// very long) is quoted, so the message still says which one.
TEST(Schema, AnUnknownKeyWithAnOddNameIsQuoted) {
  EXPECT_EQ(validate(kSchema, json{{"", 1}}),
            "\"\": unknown argument; the accepted ones are: limit, op");
  EXPECT_EQ(validate(kSchema, json{{std::string("a\0b", 3), 1}}),
            "\"a\\u0000b\": unknown argument; the accepted ones are: limit, op");
  const auto long_key = validate(kSchema, json{{std::string(5000, 'k'), 1}});
  ASSERT_TRUE(long_key.has_value());
  EXPECT_EQ(long_key->rfind("\"kkk", 0), 0u) << *long_key;
  EXPECT_LT(long_key->size(), 200u);
}

}  // namespace
}  // namespace agentty::mcp

namespace agentty::mcp {
namespace {

TEST(NameForMessage, IsPlainWhenShortAndPrintableElseQuotedAndCut) {
  EXPECT_EQ(name_for_message("frobnicate"), "frobnicate");
  EXPECT_EQ(name_for_message(""), "\"\"");
  EXPECT_EQ(name_for_message("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(name_for_message("p\xffs"), "\"p\xEF\xBF\xBDs\"");  // not UTF-8: shown replaced
  const std::string huge(200000, 'x');
  EXPECT_LE(name_for_message(huge).size(), 60u);
  EXPECT_TRUE(name_for_message(huge).ends_with("..."));
}

}  // namespace
}  // namespace agentty::mcp
