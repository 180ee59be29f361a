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

}  // namespace
}  // namespace agentty::mcp
