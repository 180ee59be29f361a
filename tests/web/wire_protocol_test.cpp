#include "web/wire_protocol.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "session/screen.hpp"

namespace agentty::web::wire {
namespace {

// Every `export const NAME = value;` line of web-ui/src/protocol.ts.
std::map<std::string, std::string> typescript_constants() {
  std::ifstream file(std::string(AGENTTY_SOURCE_DIR) + "/web-ui/src/protocol.ts");
  EXPECT_TRUE(file) << "cannot read web-ui/src/protocol.ts";
  std::map<std::string, std::string> constants;
  std::regex line_re(R"re(^export const ([A-Z_]+) = (?:"([^"]*)"|([0-9]+));\s*$)re");
  std::string line;
  while (std::getline(file, line)) {
    std::smatch m;
    if (std::regex_match(line, m, line_re)) constants[m[1]] = m[2].matched ? m[2] : m[3];
  }
  return constants;
}

TEST(WireProtocol, TypeScriptMirrorAgreesWithTheHeader) {
  const std::map<std::string, std::string> expected{
      {"SUBPROTOCOL", std::string(kSubprotocol)},
      {"TOKEN_PROTOCOL_PREFIX", std::string(kTokenProtocolPrefix)},
      {"TOKEN_HEADER", std::string(kTokenHeader)},
      {"TOKEN_FRAGMENT_KEY", std::string(kTokenFragmentKey)},
      {"TERMINAL_PAGE_PREFIX", std::string(kTerminalPagePrefix)},
      {"TERMINAL_SOCKET_PREFIX", std::string(kTerminalSocketPrefix)},
      {"DASHBOARD_SOCKET_PATH", std::string(kDashboardSocketPath)},
      {"EXECUTIONS_API_PATH", std::string(kExecutionsApiPath)},
      {"SERVERS_API_PATH", std::string(kServersApiPath)},
      {"RECORDINGS_API_PATH", std::string(kRecordingsApiPath)},
      {"REPLAY_PAGE_PREFIX", std::string(kReplayPagePrefix)},
      {"MESSAGE_TAKE_OVER", std::string(kMessageTakeOver)},
      {"MESSAGE_RELEASE", std::string(kMessageRelease)},
      {"MESSAGE_RESIZE", std::string(kMessageResize)},
      {"MESSAGE_PAUSE", std::string(kMessagePause)},
      {"MESSAGE_RESUME", std::string(kMessageResume)},
      {"MESSAGE_STATE", std::string(kMessageState)},
      {"MESSAGE_SNAPSHOT", std::string(kMessageSnapshot)},
      {"MESSAGE_REFUSED", std::string(kMessageRefused)},
      {"MESSAGE_EXECUTIONS", std::string(kMessageExecutions)},
      {"CLIENT_BROWSER", std::string(kClientBrowser)},
      {"CLIENT_ATTACH", std::string(kClientAttach)},
      {"CLOSE_EXECUTION_REMOVED", std::to_string(kCloseExecutionRemoved)},
      {"MAX_COLS", std::to_string(kMaxCols)},
      {"MAX_ROWS", std::to_string(kMaxRows)},
      {"MAX_MESSAGE_BYTES", std::to_string(kMaxMessageBytes)},
  };
  // Same names and values both ways: a constant added on one side only fails.
  EXPECT_EQ(typescript_constants(), expected);
}

TEST(WireProtocol, ClientMessagesRoundTrip) {
  std::vector<ClientMessage> messages{TakeOver{pty::TerminalSize{100, 30}, "attach"},
                                      TakeOver{std::nullopt, "browser"},
                                      Release{},
                                      Resize{pty::TerminalSize{1000, 500}},
                                      Pause{},
                                      Resume{}};
  for (const auto& message : messages) {
    auto text = encode(message);
    auto decoded = decode_client_message(text);
    ASSERT_TRUE(decoded) << text << ": " << decoded.error();
    EXPECT_EQ(decoded->index(), message.index()) << text;
    EXPECT_EQ(encode(*decoded), text);
  }
  auto take = decode_client_message(R"({"type":"take_over","cols":80,"rows":24})");
  ASSERT_TRUE(take);
  const auto& t = std::get<TakeOver>(*take);
  ASSERT_TRUE(t.size);
  EXPECT_EQ(t.size->cols, 80);
  EXPECT_EQ(t.size->rows, 24);
  EXPECT_EQ(t.client, "browser");
}

TEST(WireProtocol, HostileClientMessagesAreErrorsNotCrashes) {
  for (std::string text : {
           "",
           "null",
           "[]",
           "42",
           "{",
           "{\"type\":7}",
           "{\"cols\":80}",
           R"({"type":"nope"})",
           R"({"type":"resize"})",
           R"({"type":"resize","cols":"80","rows":24})",
           R"({"type":"resize","cols":0,"rows":24})",
           R"({"type":"resize","cols":80,"rows":501})",
           R"({"type":"resize","cols":-1,"rows":24})",
           R"({"type":"resize","cols":1e9,"rows":24})",
           R"({"type":"resize","cols":99999999999999999999,"rows":24})",
           R"({"type":"take_over","cols":80})",
           R"({"type":"take_over","client":"root"})",
           R"({"type":"take_over","client":5})",
           R"({"type":"take_over","client":null})",
       }) {
    EXPECT_FALSE(decode_client_message(text)) << text;
  }
  EXPECT_FALSE(decode_client_message(std::string(kMaxMessageBytes + 1, ' ')));
}

TEST(WireProtocol, ServerMessagesRoundTrip) {
  ViewerState state;
  state.execution_id = "e-1";
  state.status = "completed";
  state.exit_code = 3;
  state.exit_description = "exited with code 3";
  state.held = true;
  state.held_by_you = true;
  state.held_by = "browser 127.0.0.1:5000";
  state.handoff_reason = "needs a 2FA code";
  state.waiting_for_input = true;
  state.size = {132, 43};
  state.name = "deploy";
  state.purpose = "ship it";
  state.command = "make deploy";
  auto decoded = decode_server_message(encode(state));
  ASSERT_TRUE(decoded) << decoded.error();
  const auto& s = std::get<ViewerState>(*decoded);
  EXPECT_EQ(encode(s), encode(state));

  auto snapshot = decode_server_message(encode(Snapshot{{80, 24}, 12345, 678}));
  ASSERT_TRUE(snapshot);
  EXPECT_EQ(std::get<Snapshot>(*snapshot).seq, 12345u);
  EXPECT_EQ(std::get<Snapshot>(*snapshot).size.cols, 80);
  EXPECT_EQ(std::get<Snapshot>(*snapshot).scrollback_bytes, 678u);
  auto older = decode_server_message(R"({"type":"snapshot","cols":80,"rows":24,"seq":5})");
  ASSERT_TRUE(older);
  EXPECT_EQ(std::get<Snapshot>(*older).scrollback_bytes, 0u);
  EXPECT_FALSE(std::get<Snapshot>(*older).keeps_history);
  auto keeping = decode_server_message(encode(Snapshot{{80, 24}, 7, 9, true}));
  ASSERT_TRUE(keeping);
  EXPECT_TRUE(std::get<Snapshot>(*keeping).keeps_history);

  auto refused = decode_server_message(encode(Refused{"take_over", "already held"}));
  ASSERT_TRUE(refused);
  EXPECT_EQ(std::get<Refused>(*refused).message, "already held");
}

TEST(WireProtocol, InvalidUtf8InStateIsReplacedNotThrown) {
  ViewerState state;
  state.status = "running";
  state.size = {80, 24};
  state.command = "printf '\xff\xfe'";
  auto text = encode(state);
  EXPECT_TRUE(decode_server_message(text));
}

// A redraw with history, fed to a fresh terminal (libvterm, as xterm.js would
// take it): the history ends up in its scrollback in order, the screen is
// drawn as before, whether there are fewer or more lines than rows.
TEST(WireProtocol, ScrollbackInARedrawLandsInTheTerminalsHistory) {
  for (int count : {1, 3, 10, 25}) {
    session::Screen original(pty::TerminalSize{40, 6});
    original.feed("top\r\n\x1b[31mred\x1b[0m\r\n$ ");
    std::vector<std::string> lines;
    for (int i = 0; i < count; ++i) lines.push_back("history line " + std::to_string(i));
    std::string redraw = original.render_ansi();
    auto bytes = insert_scrollback(redraw, lines, 6);
    ASSERT_GT(bytes, 0u);

    session::Screen fresh(pty::TerminalSize{40, 6});
    fresh.feed("stale\r\n");
    fresh.feed(redraw);
    auto got = fresh.snapshot(1000);
    ASSERT_GE(got.scrollback.size(), lines.size()) << count;
    std::vector<std::string> tail(got.scrollback.end() - static_cast<std::ptrdiff_t>(lines.size()),
                                  got.scrollback.end());
    EXPECT_EQ(tail, lines) << count;
    EXPECT_EQ(got.lines, original.snapshot().lines) << count;
    EXPECT_EQ(got.cursor.row, original.snapshot().cursor.row);
    EXPECT_EQ(got.cursor.col, original.snapshot().cursor.col);

    EXPECT_EQ(without_scrollback(redraw, bytes), original.render_ansi());
  }
  std::string not_a_redraw = "plain";
  EXPECT_EQ(insert_scrollback(not_a_redraw, {"x"}, 6), 0u);
  EXPECT_EQ(not_a_redraw, "plain");
}

// A terminal that shows an earlier redraw (and, from before it, history and
// modes) takes a keeps_history redraw: its history gains the new lines after
// the old ones, the screen and modes end up as the original's.
TEST(WireProtocol, KeepsHistoryRedrawAddsToTheTerminalsHistory) {
  for (int count : {0, 1, 3, 10, 25}) {
    session::Screen original(pty::TerminalSize{40, 6});
    original.feed("top\r\n\x1b[31mred\x1b[0m\r\n\x1b[4m$ ");
    std::vector<std::string> lines;
    for (int i = 0; i < count; ++i) lines.push_back("\x1b[0;32mnew line " + std::to_string(i));
    std::string redraw = original.render_ansi();
    auto bytes = continue_history(redraw, lines, 6);
    EXPECT_FALSE(redraw.starts_with("\033c"));

    session::Screen client(pty::TerminalSize{40, 6});
    client.feed("old 1\r\nold 2\r\n\r\n\r\n\r\n\r\n\r\n");  // two lines of history
    client.feed("\x1b[?2004h\x1b[?1h\x1b[2;4r\x1b[1;44mstale screen");
    client.feed(redraw);
    auto got = client.snapshot(1000);
    std::vector<std::string> want_history{"old 1", "old 2"};
    for (int i = 0; i < count; ++i) want_history.push_back("new line " + std::to_string(i));
    EXPECT_EQ(got.scrollback, want_history) << count;
    EXPECT_EQ(client.styled_scrollback(1000).back(),
              count ? "\x1b[0;32mnew line " + std::to_string(count - 1) + "\x1b[0m" : "old 2");
    EXPECT_EQ(got.lines, original.snapshot().lines) << count;
    EXPECT_EQ(client.styled_lines(), original.styled_lines()) << count;
    EXPECT_EQ(got.cursor.row, original.snapshot().cursor.row);
    EXPECT_EQ(got.cursor.col, original.snapshot().cursor.col);
    EXPECT_FALSE(got.modes.bracketed_paste);
    EXPECT_FALSE(got.modes.application_cursor_keys);
    EXPECT_EQ(client.render_ansi(), original.render_ansi()) << count;

    // A client that keeps its own history (attach) gets a plain redraw.
    EXPECT_EQ(without_scrollback(redraw, bytes), original.render_ansi());
  }
}

}  // namespace
}  // namespace agentty::web::wire
