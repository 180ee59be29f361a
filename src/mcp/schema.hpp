// Validation of tool arguments against the tool's own inputSchema, so the
// schema the client sees is the single source of truth. Supports the subset
// our schemas use: type (incl. "integer" and type lists), properties,
// required, additionalProperties:false, enum, minimum, maximum, minLength,
// maxLength, minItems, maxItems, items, uniqueItems, additionalProperties as
// a schema (for string maps).
//
// Errors name the argument and say how to fix it, e.g.
// "yield_ms: must be at most 55000 (got 90000)".
//
// A string holding a NUL byte is refused unless its schema declares a
// `contentMediaType` (raw data: execute's stdin, write's input): a command,
// an argument, a path or a name cannot carry one, and the OS would cut it
// there without a word.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace agentty::mcp {

// nullopt when `value` satisfies `schema`; otherwise the first problem found.
std::optional<std::string> validate(const nlohmann::json& schema, const nlohmann::json& value,
                                    const std::string& path = "");

// A name the client sent (an argument, a tool, a URI) as a message quotes it:
// as it is when short and printable, else as JSON (control bytes escaped,
// text that is not UTF-8 shown as U+FFFD), cut to about 60 characters: a
// 200 KB name is not echoed back whole.
std::string name_for_message(const std::string& name);

}  // namespace agentty::mcp
