// JSON-RPC 2.0 framing for MCP over stdio: one message per line.
//
// parse_line() classifies each message of a line as a request, a
// notification or a response, or gives the JSON-RPC error to send back
// (-32700 parse error, -32600 invalid request), with the request's id
// whenever it can be found (message_salvage.hpp), so a client is answered
// rather than left waiting. A line holding a JSON array is a batch: each
// element is read as it would be on a line of its own (whether the session
// takes batches is the server's business); an empty array is -32600.
// A response (to a request this server sent) carries its result or the
// client's error; one whose id cannot be read but that is an error answer
// (`"id": null`, a request the client could not parse) is a Response too,
// never answered back: JSON-RPC forbids answering a response.
// Serialisation never throws: invalid UTF-8 (PTY output often has it) is
// replaced with U+FFFD.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace agentty::mcp {

using json = nlohmann::json;

namespace rpc_error {
constexpr int parse_error = -32700;
constexpr int invalid_request = -32600;
constexpr int method_not_found = -32601;
constexpr int invalid_params = -32602;
constexpr int internal_error = -32603;
constexpr int resource_not_found = -32002;  // MCP's code for resources/read
}  // namespace rpc_error

struct Request {
  json id;  // string or number
  std::string method;
  json params;  // object (empty object when absent)
  // Where params held text that is not Unicode (replaced with U+FFFD to read
  // the rest), e.g. "arguments.command"; empty when none. Such a request is
  // answered with an error naming it and is never carried out.
  std::string invalid_text_at;
};

struct Notification {
  std::string method;
  json params;
};

// The error object of a response: its code and message ("" when absent).
struct ResponseError {
  int code = 0;
  std::string message;
};

struct Response {
  json id;      // null only with `error` (the client could not read our id)
  json result;  // null when `error` is set
  std::optional<ResponseError> error;
};

struct ErrorReply {
  json id;  // null when the request id could not be read
  int code;
  std::string message;
};

using Message = std::variant<Request, Notification, Response, ErrorReply>;

struct ParsedLine {
  std::vector<Message> messages;  // one, unless the line is a batch
  bool is_batch = false;          // a JSON array of messages
};

ParsedLine parse_line(std::string_view line);

// One line of JSON, no embedded newline, invalid UTF-8 replaced.
std::string serialize(const json& message);

json make_result(const json& id, json result);
json make_error(const json& id, int code, const std::string& message);
json make_notification(const std::string& method, json params);

}  // namespace agentty::mcp
