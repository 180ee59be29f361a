// Wire protocol between the server and its viewers: the TypeScript mirror of
// src/web/wire_protocol.hpp (read its header comment for the frame rules).
// tests/web/wire_protocol_test.cpp parses the `export const` lines below and
// checks every one against the C++ constants: keep one constant per line.

export const SUBPROTOCOL = "agentty.v1";
export const TOKEN_PROTOCOL_PREFIX = "agentty-token.";
export const TOKEN_HEADER = "X-Agentty-Token";
export const TOKEN_FRAGMENT_KEY = "token";

export const TERMINAL_PAGE_PREFIX = "/t/";
export const TERMINAL_SOCKET_PREFIX = "/ws/terminal/";
export const DASHBOARD_SOCKET_PATH = "/ws/dashboard";
export const EXECUTIONS_API_PATH = "/api/executions";
export const SERVERS_API_PATH = "/api/servers";
export const RECORDINGS_API_PATH = "/api/recordings";
export const REPLAY_PAGE_PREFIX = "/r/";

// Client -> server.
export const MESSAGE_TAKE_OVER = "take_over";
export const MESSAGE_RELEASE = "release";
export const MESSAGE_RESIZE = "resize";
export const MESSAGE_PAUSE = "pause";
export const MESSAGE_RESUME = "resume";
// Server -> client.
export const MESSAGE_STATE = "state";
export const MESSAGE_SNAPSHOT = "snapshot";
export const MESSAGE_REFUSED = "refused";
export const MESSAGE_EXECUTIONS = "executions";

export const CLIENT_BROWSER = "browser";
export const CLIENT_ATTACH = "attach";

// Close code: the execution's record was removed (cleanup, retention).
export const CLOSE_EXECUTION_REMOVED = 4404;

export const MAX_COLS = 1000;
export const MAX_ROWS = 500;
export const MAX_MESSAGE_BYTES = 65536;

export type ClientMessage =
  | { type: typeof MESSAGE_TAKE_OVER; client: string; cols?: number; rows?: number }
  | { type: typeof MESSAGE_RELEASE }
  | { type: typeof MESSAGE_RESIZE; cols: number; rows: number }
  | { type: typeof MESSAGE_PAUSE }
  | { type: typeof MESSAGE_RESUME };

export interface ViewerState {
  type: typeof MESSAGE_STATE;
  execution_id: string;
  status: string;
  exit_code: number | null;
  signal: number | null;
  exit_description: string;
  held: boolean;
  held_by_you: boolean;
  held_by: string | null;
  handoff_reason: string | null;
  waiting_for_input: boolean;
  cols: number;
  rows: number;
  name: string;
  purpose: string;
  command: string;
}

export interface Snapshot {
  type: typeof MESSAGE_SNAPSHOT;
  cols: number;
  rows: number;
  seq: number;
  // The redraw brings the scrolled-off history first (see wire_protocol.hpp).
  scrollback_bytes: number;
  // No reset: the redraw adds to this terminal's history (during a flood).
  keeps_history?: boolean;
}

export interface Refused {
  type: typeof MESSAGE_REFUSED;
  action: string;
  message: string;
}

export interface ExecutionSummary {
  execution_id: string;
  kind: string;
  name: string;
  purpose: string;
  command: string; // a session's: "bash (session) running: CMD"
  running_command: string | null; // in a session, while one runs
  host: string; // "" for this machine
  cwd: string;
  status: string;
  exit_code: number | null;
  signal: string | null;
  exit_description: string;
  process_id: number | null;
  started_at: number | null;
  ended_at: number | null;
  last_output_at: number | null;
  duration_ms: number;
  idle_ms: number | null;
  held: boolean;
  held_by: string | null;
  handoff_reason: string | null;
  waiting_for_input: boolean;
  latest_seq: number;
  cols: number;
  rows: number;
  terminal_path: string;
}

export interface Executions {
  type: typeof MESSAGE_EXECUTIONS;
  executions: ExecutionSummary[];
}

// One agentty server of this user (GET SERVERS_API_PATH: { servers: [...] }).
export interface ServerEntry {
  pid: number;
  kind: string; // "mcp" or "serve"
  started_at: number;
  port: number;
  dashboard_url: string; // carries that server's secret in the fragment
  self: boolean;
}

// One asciicast recording (GET RECORDINGS_API_PATH: { recordings: [...] },
// newest first); GET RECORDINGS_API_PATH/<id> is the file itself.
export interface RecordingEntry {
  id: string;
  title: string;
  cols: number;
  rows: number;
  started_at: number; // ms since the epoch (0: unknown)
  modified_at: number;
  bytes: number;
  terminal_path?: string; // while this server still has the execution's record
  running?: boolean;
}

export type ServerMessage = ViewerState | Snapshot | Refused | Executions;

// The secret from the page's URL fragment (#token=...), which browsers never
// send to the server; empty when absent.
export function tokenFromFragment(hash: string): string {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  return params.get(TOKEN_FRAGMENT_KEY) ?? "";
}

// Opens a WebSocket to this server carrying the secret as a subprotocol.
export function openSocket(path: string, token: string): WebSocket {
  const socket = new WebSocket(`ws://${location.host}${path}`, [
    SUBPROTOCOL,
    TOKEN_PROTOCOL_PREFIX + token,
  ]);
  socket.binaryType = "arraybuffer";
  return socket;
}

// What a page says when the server answered 503: it has no room for another
// connection (its max_connections).
export function atCapacityMessage(host: string): string {
  return `Cannot connect: agentty at ${host} is at its limit of connections (terminal pages, ` +
    "dashboards, agentty attach). Close some of them; retrying…";
}

// "completed" says the program ran to its end, not that it succeeded: one
// that exited non-zero is shown as failed (dashboard and terminal page), or
// a failure in a long list looks like every success around it.
export function exitedNonZero(e: { status: string; exit_code: number | null }): boolean {
  return e.status === "completed" && e.exit_code !== null && e.exit_code !== 0;
}

// GET `path` with the secret, as JSON; throws unless the answer is 2xx.
export async function getJson<T>(path: string, token: string): Promise<T> {
  const response = await fetch(path, { headers: { [TOKEN_HEADER]: token }, cache: "no-store" });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return (await response.json()) as T;
}

// The HTTP status of GET `path` with the secret; 0 when nothing answers (the
// server is down). A failed WebSocket says nothing about why: this does.
export async function apiStatus(path: string, token: string): Promise<number> {
  try {
    const response = await fetch(path, {
      headers: { [TOKEN_HEADER]: token },
      cache: "no-store",
    });
    return response.status;
  } catch {
    return 0;
  }
}
