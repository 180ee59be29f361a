#include "mcp/json_rpc.hpp"

#include "mcp/message_salvage.hpp"

#include <algorithm>

namespace agentty::mcp {

namespace {

bool valid_id(const json& id) {
  return id.is_string() || id.is_number_integer();
}

// A message without a method that answers a request: `result` or `error`.
Response response_of(json id, json& message) {
  Response response{std::move(id), nullptr, std::nullopt};
  auto error = message.find("error");
  if (error == message.end()) {
    response.result = std::move(message["result"]);
    return response;
  }
  ResponseError failure;
  if (error->is_object()) {
    auto code = error->find("code");
    if (code != error->end() && code->is_number_integer()) failure.code = code->get<int>();
    auto text = error->find("message");
    if (text != error->end() && text->is_string()) failure.message = text->get<std::string>();
  }
  response.error = std::move(failure);
  return response;
}

// Copying, comparing and printing a json value recurse once per level: a
// line of 200 KB of '[' parsed fine (the parser keeps its own stack) and then
// overflowed the stack of whatever touched it. MCP messages nest a handful
// of levels; this leaves room for any client's _meta.
constexpr std::size_t kMaxNestingDepth = 128;

// The deepest nesting of arrays and objects in `line`, strings skipped; an
// unbalanced line counts its open brackets.
std::size_t nesting_depth(std::string_view line) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

ErrorReply parse_error_reply(std::string_view line) {
  std::string problem = "invalid JSON";
  try {  // only on the error path: parse again, with exceptions, for the byte
    [[maybe_unused]] json parsed = json::parse(line);
  } catch (const json::parse_error& e) {
    problem += " at byte " + std::to_string(e.byte);
  } catch (const json::exception& e) {
    // A number no double holds (1e400) is out_of_range, not a parse_error:
    // uncaught, it ended agentty. Its text names the number.
    const std::string what = e.what();
    const auto bracket = what.find("] ");
    problem = "a number is out of range (" +
              (bracket == std::string::npos ? what : what.substr(bracket + 2)) +
              "); numbers must fit a 64-bit float";
  }
  return ErrorReply{find_request_id(line, line), rpc_error::parse_error,
                    "Parse error: " + problem + "; send one JSON-RPC message per line, as UTF-8"};
}

// One message of a line, or of a batch. `text_replaced`: the line held text
// that is not Unicode, replaced with U+FFFD to read the rest.
Message classify(json& message, bool text_replaced) {
  if (!message.is_object())
    return ErrorReply{nullptr, rpc_error::invalid_request, "Invalid Request: not an object"};
  std::string invalid_text_at;
  if (text_replaced) {
    if (auto p = message.find("params"); p != message.end())
      invalid_text_at = path_of_replaced_text(*p);
    if (invalid_text_at.empty() && !path_of_replaced_text(message).empty())
      invalid_text_at = "(the message)";
  }
  json id = message.contains("id") ? message["id"] : json();
  bool has_id = message.contains("id");
  const bool answer = !message.contains("method") && has_id &&
                      (message.contains("result") || message.contains("error"));
  if (answer && id.is_null() && message.contains("error")) return response_of(nullptr, message);
  if (has_id && !valid_id(id)) {
    return ErrorReply{nullptr, rpc_error::invalid_request,
                      "Invalid Request: id must be a string or an integer"};
  }
  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return ErrorReply{id, rpc_error::invalid_request, "Invalid Request: jsonrpc must be \"2.0\""};
  }
  auto method = message.find("method");
  if (method == message.end()) {
    if (answer) return response_of(std::move(id), message);
    return ErrorReply{id, rpc_error::invalid_request, "Invalid Request: missing method"};
  }
  if (!method->is_string())
    return ErrorReply{id, rpc_error::invalid_request, "Invalid Request: method must be a string"};
  json params = json::object();
  if (auto p = message.find("params"); p != message.end()) {
    if (!p->is_object() && !p->is_array()) {
      return ErrorReply{id, rpc_error::invalid_request,
                        "Invalid Request: params must be an object"};
    }
    params = std::move(*p);
  }
  if (!has_id) return Notification{method->get<std::string>(), std::move(params)};
  return Request{id, method->get<std::string>(), std::move(params), std::move(invalid_text_at)};
}

ParsedLine one(Message message) {
  ParsedLine parsed;
  parsed.messages.push_back(std::move(message));
  return parsed;
}

}  // namespace

ParsedLine parse_line(std::string_view line) {
  if (const auto depth = nesting_depth(line); depth > kMaxNestingDepth) {
    return one(ErrorReply{find_request_id(line, line), rpc_error::invalid_request,
                          "Invalid Request: arrays and objects nested " + std::to_string(depth) +
                              " levels deep; agentty reads at most " +
                              std::to_string(kMaxNestingDepth) +
                              " (its tools take a few); send the values flatter"});
  }
  json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
  bool text_replaced = false;
  if (message.is_discarded()) {
    auto repaired = replace_invalid_text(line);
    if (!repaired) return one(parse_error_reply(line));
    message = json::parse(*repaired, nullptr, /*allow_exceptions=*/false);
    if (message.is_discarded()) return one(parse_error_reply(line));
    text_replaced = true;
  }
  if (!message.is_array()) return one(classify(message, text_replaced));
  if (message.empty()) {
    return one(ErrorReply{nullptr, rpc_error::invalid_request,
                          "Invalid Request: an empty batch (a JSON array needs at least one "
                          "message)"});
  }
  ParsedLine batch;
  batch.is_batch = true;
  batch.messages.reserve(message.size());
  for (auto& element : message) batch.messages.push_back(classify(element, text_replaced));
  return batch;
}

std::string serialize(const json& message) {
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

json make_result(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error(const json& id, int code, const std::string& message) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json make_notification(const std::string& method, json params) {
  return json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

}  // namespace agentty::mcp
