#include "web/wire_protocol.hpp"

#include <nlohmann/json.hpp>

namespace agentty::web::wire {
namespace {

using nlohmann::json;

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Expected<json> parse_object(std::string_view text) {
  if (text.size() > kMaxMessageBytes) return make_error("message larger than 64 KiB");
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error("message is not valid JSON");
  if (!j.is_object()) return make_error("message is not a JSON object");
  if (!j.contains("type") || !j["type"].is_string()) return make_error("message has no \"type\"");
  return j;
}

// cols/rows must both be integers in range; anything else is refused.
Expected<pty::TerminalSize> size_from(const json& j) {
  auto cols = j.find("cols");
  auto rows = j.find("rows");
  if (cols == j.end() || rows == j.end() || !cols->is_number_integer() ||
      !rows->is_number_integer()) {
    return make_error("\"cols\" and \"rows\" must be integers");
  }
  auto c = cols->get<std::int64_t>();
  auto r = rows->get<std::int64_t>();
  if (c < 1 || c > kMaxCols || r < 1 || r > kMaxRows) {
    return make_error("terminal size out of range (cols 1..1000, rows 1..500)");
  }
  return pty::TerminalSize{static_cast<std::uint16_t>(c), static_cast<std::uint16_t>(r)};
}

std::string string_or(const json& j, const char* key, std::string fallback = {}) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::optional<std::string> optional_string(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int> optional_int(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

bool bool_or(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

Expected<ClientMessage> decode_take_over(const json& j) {
  TakeOver take;
  if (j.contains("cols") || j.contains("rows")) {
    auto size = size_from(j);
    if (!size) return Error{size.error()};
    take.size = *size;
  }
  // A "client" of another type is refused, not taken for a browser.
  auto given = j.find("client");
  auto client = given == j.end() ? std::string(kClientBrowser) : string_or(j, "client");
  if (client != kClientBrowser && client != kClientAttach) {
    return make_error("\"client\" must be \"browser\" or \"attach\"");
  }
  take.client = client;
  return ClientMessage{take};
}

}  // namespace

std::string encode(const ClientMessage& message) {
  json j = std::visit(
      Overloaded{
          [](const TakeOver& m) {
            json o{{"type", kMessageTakeOver}, {"client", m.client}};
            if (m.size) {
              o["cols"] = m.size->cols;
              o["rows"] = m.size->rows;
            }
            return o;
          },
          [](const Release&) {
            return json{{"type", kMessageRelease}};
          },
          [](const Resize& m) {
            return json{{"type", kMessageResize}, {"cols", m.size.cols}, {"rows", m.size.rows}};
          },
          [](const Pause&) {
            return json{{"type", kMessagePause}};
          },
          [](const Resume&) {
            return json{{"type", kMessageResume}};
          },
      },
      message);
  return dump(j);
}

Expected<ClientMessage> decode_client_message(std::string_view text) {
  auto parsed = parse_object(text);
  if (!parsed) return Error{parsed.error()};
  const json& j = *parsed;
  auto type = j["type"].get<std::string>();
  if (type == kMessageTakeOver) return decode_take_over(j);
  if (type == kMessageRelease) return ClientMessage{Release{}};
  if (type == kMessagePause) return ClientMessage{Pause{}};
  if (type == kMessageResume) return ClientMessage{Resume{}};
  if (type == kMessageResize) {
    auto size = size_from(j);
    if (!size) return Error{size.error()};
    return ClientMessage{Resize{*size}};
  }
  return make_error("unknown message type \"" + type + "\"");
}

std::string encode(const ViewerState& s) {
  json j{{"type", kMessageState},
         {"execution_id", s.execution_id},
         {"status", s.status},
         {"exit_code", s.exit_code ? json(*s.exit_code) : json(nullptr)},
         {"signal", s.signal ? json(*s.signal) : json(nullptr)},
         {"exit_description", s.exit_description},
         {"held", s.held},
         {"held_by_you", s.held_by_you},
         {"held_by", s.held_by ? json(*s.held_by) : json(nullptr)},
         {"handoff_reason", s.handoff_reason ? json(*s.handoff_reason) : json(nullptr)},
         {"waiting_for_input", s.waiting_for_input},
         {"cols", s.size.cols},
         {"rows", s.size.rows},
         {"name", s.name},
         {"purpose", s.purpose},
         {"command", s.command}};
  return dump(j);
}

std::string encode(const Snapshot& snapshot) {
  return dump(json{{"type", kMessageSnapshot},
                   {"cols", snapshot.size.cols},
                   {"rows", snapshot.size.rows},
                   {"seq", snapshot.seq},
                   {"scrollback_bytes", snapshot.scrollback_bytes},
                   {"keeps_history", snapshot.keeps_history}});
}

std::string encode(const Refused& refused) {
  return dump(
      json{{"type", kMessageRefused}, {"action", refused.action}, {"message", refused.message}});
}

Expected<ServerMessage> decode_server_message(std::string_view text) {
  auto parsed = parse_object(text);
  if (!parsed) return Error{parsed.error()};
  const json& j = *parsed;
  auto type = j["type"].get<std::string>();
  if (type == kMessageRefused) {
    return ServerMessage{Refused{string_or(j, "action"), string_or(j, "message")}};
  }
  auto size = size_from(j);
  if (!size) return Error{size.error()};
  if (type == kMessageSnapshot) {
    auto seq = j.find("seq");
    if (seq == j.end() || !seq->is_number_unsigned()) return make_error("snapshot without \"seq\"");
    std::uint64_t scrollback = 0;
    if (auto bytes = j.find("scrollback_bytes"); bytes != j.end()) {
      if (!bytes->is_number_unsigned()) return make_error("snapshot: bad \"scrollback_bytes\"");
      scrollback = bytes->get<std::uint64_t>();
    }
    return ServerMessage{
        Snapshot{*size, seq->get<std::uint64_t>(), scrollback, bool_or(j, "keeps_history")}};
  }
  if (type != kMessageState) return make_error("unknown message type \"" + type + "\"");
  ViewerState s;
  s.execution_id = string_or(j, "execution_id");
  s.status = string_or(j, "status");
  s.exit_code = optional_int(j, "exit_code");
  s.signal = optional_int(j, "signal");
  s.exit_description = string_or(j, "exit_description");
  s.held = bool_or(j, "held");
  s.held_by_you = bool_or(j, "held_by_you");
  s.held_by = optional_string(j, "held_by");
  s.handoff_reason = optional_string(j, "handoff_reason");
  s.waiting_for_input = bool_or(j, "waiting_for_input");
  s.size = *size;
  s.name = string_or(j, "name");
  s.purpose = string_or(j, "purpose");
  s.command = string_or(j, "command");
  return ServerMessage{s};
}

namespace {
constexpr std::string_view kReset =
    "\x1b"
    "c";
// What a `keeps_history` redraw starts with instead of the reset: what RIS
// resets that a redraw may depend on (DECSTR, and explicitly for terminals
// whose DECSTR does less: margins, origin, insert and wrap mode; the modes
// render_ansi sets; pen, shown cursor), then the screen is cleared, the
// history is not.
constexpr std::string_view kKeepHistory =
    "\x1b[!p\x1b[?69l\x1b[r\x1b[?6l\x1b[4l\x1b[?7h\x1b[?1l\x1b[?2004l\x1b[?1000l\x1b[?1002l"
    "\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?25h\x1b[0m\x1b[H\x1b[2J";

// The lines, each ended by CR LF, then the line feeds that scroll them all
// off the top of a blank screen of `rows` rows; empty without lines.
std::string history_block(const std::vector<std::string>& lines, int rows) {
  std::string block;
  if (lines.empty() || rows < 1) return block;
  for (const auto& line : lines) {
    block += line;
    block += "\r\n";
  }
  // From wherever the lines left the cursor, rows - 1 line feeds scroll every
  // one of them off the top.
  block.append(static_cast<std::size_t>(rows - 1), '\n');
  return block;
}
}  // namespace

std::uint64_t insert_scrollback(std::string& redraw, const std::vector<std::string>& lines,
                                int rows) {
  if (!redraw.starts_with(kReset)) return 0;
  std::string block = history_block(lines, rows);
  redraw.insert(kReset.size(), block);
  return block.size();
}

std::uint64_t continue_history(std::string& redraw, const std::vector<std::string>& lines,
                               int rows) {
  if (!redraw.starts_with(kReset)) return 0;
  std::string block = history_block(lines, rows);
  redraw.replace(0, kReset.size(), std::string(kKeepHistory) + block);
  return block.size();
}

std::string without_scrollback(std::string_view redraw, std::uint64_t scrollback_bytes) {
  for (auto start : {kReset, kKeepHistory}) {
    if (redraw.starts_with(start) && redraw.size() - start.size() >= scrollback_bytes) {
      return std::string(kReset) + std::string(redraw.substr(start.size() + scrollback_bytes));
    }
  }
  return std::string(redraw);
}

}  // namespace agentty::web::wire
