// The labels an agent gives an execution, `name` and `purpose`, are shown
// as text in ps, the dashboard, the terminal page's title, recordings and
// the audit log. A model often adds blanks or a trailing newline around
// them, which are trimmed; a control character (an escape sequence, a
// carriage return) would draw or overwrite text where a person reads the
// label, so it is refused with its position instead of kept.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include "base/expected.hpp"

namespace agentty::mcp::tools {

using json = nlohmann::json;

enum class LabelLines { one, many };

// args[key] trimmed of surrounding white space (empty when absent), or why
// it cannot be a label: a control character other than the newlines and
// tabs a `LabelLines::many` label may hold.
Expected<std::string> label_argument(const json& args, std::string_view key, LabelLines lines);

}  // namespace agentty::mcp::tools
