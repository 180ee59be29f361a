// What can still be read of an MCP line that is not valid JSON, so that the
// client gets an answer to its request instead of waiting for ever (a
// JSON-RPC error with a null id matches no request, and an SDK client waits
// out its own timeout).
//
// - Text that is not Unicode: JSON's grammar allows an unpaired UTF-16
//   surrogate escape ("\ud800", what a JavaScript client sends when it cuts
//   a string inside an emoji), and a hostile client may send bytes that are
//   not UTF-8; the parser refuses both. They are replaced with U+FFFD so the
//   rest can be read, and the request is answered with an error naming the
//   argument that held them: no program, path or terminal can take them.
// - The request id of a line too broken (or too large) to parse: found at the
//   start ({"jsonrpc":"2.0","id":7, ...) or the end (..., "id":7}) of the
//   top-level object, where clients put it.
//
// Pure functions; no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace agentty::mcp {

// `line` with every unpaired surrogate escape inside a string written as
// \ufffd and every byte that is not part of valid UTF-8 as U+FFFD; nullopt
// when there was nothing to replace.
std::optional<std::string> replace_invalid_text(std::string_view line);

// What to tell the client about a request whose text could only be read
// with U+FFFD in place of what was not Unicode: `at` is where
// ("arguments.command", as path_of_replaced_text() gives it).
std::string invalid_text_problem(std::string at);

// The path ("arguments.command", "arguments.env.HOME") of the first string
// or key in `value` holding U+FFFD, or empty.
std::string path_of_replaced_text(const nlohmann::json& value);

// The id of the request whose line starts with `head` and ends with `tail`
// (both may be the whole line), or null when neither shows one.
nlohmann::json find_request_id(std::string_view head, std::string_view tail);

}  // namespace agentty::mcp
