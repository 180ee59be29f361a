// Wire protocol between the server and its viewers (the browser terminal page,
// the dashboard, `agentty attach`). Mirrored constant for constant by
// web-ui/src/protocol.ts; tests/web/wire_protocol_test.cpp checks they agree.
//
// One WebSocket per viewer:
//  - binary frame, server -> client: terminal output, the bytes the PTY
//    produced (after redaction). A `snapshot` text message is followed by one
//    binary frame holding a redraw of the whole screen; the client resets its
//    terminal, takes the size from the message, then writes the frame.
//    The redraw starts with a reset (ESC c); when the snapshot's
//    `scrollback_bytes` is not 0, that many bytes follow the reset: the lines
//    the screen scrolled off, each with CR LF, then line feeds that scroll
//    them all into the client's scrollback before the screen is drawn (a
//    fresh terminal has no history). A client whose terminal keeps its own
//    history (attach) cuts them out with without_scrollback().
//    A snapshot with `keeps_history` is sent to a client whose terminal shows
//    the previous redraw and nothing since (during a flood, ten a second):
//    the client does not reset, so its history and a person's scroll
//    position stay; the redraw resets modes, margins and pen, clears the
//    screen, then scrolls the `scrollback_bytes` of lines that scrolled off
//    since into the history, then draws the screen.
//  - binary frame, client -> server: keystrokes. Accepted only from the viewer
//    that holds the execution; anyone else gets a `refused` message.
//  - text frame, either way: one JSON object whose "type" is one of the
//    kMessage* names below.
// Authentication: the client offers two subprotocols, kSubprotocol and
// kTokenProtocolPrefix + secret; the server answers with kSubprotocol. Plain
// HTTP data requests carry the secret in kTokenHeader (or Authorization: Bearer).
//
// Decoding treats every peer as hostile: anything malformed is an Error, and
// the caller ends that request or connection, never the server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/expected.hpp"
#include "pty/pty_channel.hpp"

namespace agentty::web::wire {

inline constexpr std::string_view kSubprotocol = "agentty.v1";
inline constexpr std::string_view kTokenProtocolPrefix = "agentty-token.";
inline constexpr std::string_view kTokenHeader = "X-Agentty-Token";
inline constexpr std::string_view kTokenFragmentKey = "token";

inline constexpr std::string_view kTerminalPagePrefix = "/t/";
inline constexpr std::string_view kTerminalSocketPrefix = "/ws/terminal/";
inline constexpr std::string_view kDashboardSocketPath = "/ws/dashboard";
inline constexpr std::string_view kExecutionsApiPath = "/api/executions";
// Every agentty server of this user on this machine (see ServerDirectory).
inline constexpr std::string_view kServersApiPath = "/api/servers";
// The asciicast recordings in the state directory (recordings_api.hpp), and
// the page that replays one.
inline constexpr std::string_view kRecordingsApiPath = "/api/recordings";
inline constexpr std::string_view kReplayPagePrefix = "/r/";

// Client -> server.
inline constexpr std::string_view kMessageTakeOver = "take_over";
inline constexpr std::string_view kMessageRelease = "release";
inline constexpr std::string_view kMessageResize = "resize";
inline constexpr std::string_view kMessagePause = "pause";
inline constexpr std::string_view kMessageResume = "resume";
// Server -> client.
inline constexpr std::string_view kMessageState = "state";
inline constexpr std::string_view kMessageSnapshot = "snapshot";
inline constexpr std::string_view kMessageRefused = "refused";
inline constexpr std::string_view kMessageExecutions = "executions";

// Who is taking over, as the client declares it (shown to the agent).
inline constexpr std::string_view kClientBrowser = "browser";
inline constexpr std::string_view kClientAttach = "attach";

// WebSocket close code (private range) when the server ends a terminal
// viewer because its execution's record was removed (cleanup, retention):
// nothing more will come, and a reconnect finds no such execution.
inline constexpr std::uint16_t kCloseExecutionRemoved = 4404;

inline constexpr int kMaxCols = 1000;
inline constexpr int kMaxRows = 500;
inline constexpr std::size_t kMaxMessageBytes = 64 * 1024;

struct TakeOver {
  std::optional<pty::TerminalSize> size;
  std::string client{kClientBrowser};
};
struct Release {};
struct Resize {
  pty::TerminalSize size;
};
struct Pause {};
struct Resume {};
using ClientMessage = std::variant<TakeOver, Release, Resize, Pause, Resume>;

// What a terminal viewer is told whenever the execution's state changes.
struct ViewerState {
  std::string execution_id;
  std::string status;  // ExecutionStatus as text
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string exit_description;  // "exited with code 0"; empty while running
  bool held = false;
  bool held_by_you = false;
  std::optional<std::string> held_by;
  std::optional<std::string> handoff_reason;
  bool waiting_for_input = false;
  pty::TerminalSize size;
  std::string name;
  std::string purpose;
  std::string command;
};

// Precedes one binary frame: a redraw of the screen as of output position `seq`.
struct Snapshot {
  pty::TerminalSize size;
  std::uint64_t seq = 1;
  std::uint64_t scrollback_bytes = 0;  // history right after the redraw's reset
  bool keeps_history = false;          // no reset: the lines add to the client's history
};

struct Refused {
  std::string action;  // the message type or "input"
  std::string message;
};

using ServerMessage = std::variant<ViewerState, Snapshot, Refused>;

std::string encode(const ClientMessage& message);
Expected<ClientMessage> decode_client_message(std::string_view text);

std::string encode(const ViewerState& state);
std::string encode(const Snapshot& snapshot);
std::string encode(const Refused& refused);
Expected<ServerMessage> decode_server_message(std::string_view text);

// Puts `lines` (oldest first, plain text) into a redraw that starts with a
// reset, as described above, for a terminal of `rows` rows; returns the
// snapshot's scrollback_bytes (0 when nothing was added).
std::uint64_t insert_scrollback(std::string& redraw, const std::vector<std::string>& lines,
                                int rows);
// Makes a redraw that starts with a reset into a `keeps_history` one that
// first adds `lines` (oldest first, may be empty) to the client's history;
// returns the snapshot's scrollback_bytes.
std::uint64_t continue_history(std::string& redraw, const std::vector<std::string>& lines,
                               int rows);
// The redraw without its scrollback block (a `keeps_history` one becomes a
// plain redraw with a reset).
std::string without_scrollback(std::string_view redraw, std::uint64_t scrollback_bytes);

}  // namespace agentty::web::wire
