// The terminal page: one execution in xterm.js, watched live; "Take over"
// makes this viewer the only one whose keystrokes and size reach the PTY.
//
// Order of what arrives on the socket is the order of the terminal: a
// `snapshot` message says the next binary frame is a full redraw (we reset
// in-band with RIS, so stale bytes still in xterm's write queue are wiped, not
// mixed in; unless it `keeps_history`: then the screen shows the previous
// redraw, and the history and the scroll position stay); every other binary
// frame is live output.
import "@xterm/xterm/css/xterm.css";
import "./terminal.css";
import * as P from "./protocol";
import { showPageTitle } from "./page_title";
import {
  FONT_SIZE, bufferText, leavesTerminal, offerScreenReaderMode, openXterm, setFontSize, shrinkFontToFit,
  viewportText,
} from "./xterm_view";
import { withoutC1Controls } from "./unicode_widths";

// Flow control (as ttyd's client does): bytes handed to term.write whose
// callback has not fired yet. Above HIGH we ask the server to pause, below LOW
// to resume; the server drops and resyncs if we stay paused too long.
const HIGH_WATER_BYTES = 512 * 1024;
const LOW_WATER_BYTES = 128 * 1024;
const INPUT_CHUNK_BYTES = 16 * 1024;
const RIS = new Uint8Array([0x1b, 0x63]);

const READ_ONLY_HINT = "Read-only: press Take over to type into this terminal.";
const heldByOtherHint = (holder: string | null | undefined) =>
  `Read-only: ${holder ?? "another viewer"} holds this terminal, so only their keystrokes ` +
  "reach it. Take over becomes possible when they release it or disconnect.";
const TAKEOVER_ENDED =
  "Your takeover ended when this page lost its connection or was reloaded: agentty hands " +
  "the terminal back to the agent when its holder disconnects. Press Take over to type again.";

const byId = (id: string) => document.getElementById(id) as HTMLElement;
const executionId = decodeURIComponent(location.pathname.slice(P.TERMINAL_PAGE_PREFIX.length));
const token = P.tokenFromFragment(location.hash);
// Set while this tab holds the execution, so a reload can say the hold ended.
const holdingKey = `agentty-holding:${executionId}`;
// The dashboard of the same server takes the same secret.
(byId("all-executions") as HTMLAnchorElement).href = `/${location.hash}`;
(byId("replay") as HTMLAnchorElement).href =
  `${P.REPLAY_PAGE_PREFIX}${encodeURIComponent(executionId)}${location.hash}`;

const { term, fit } = openXterm(byId("terminal"), { cursorBlink: true, scrollback: 5000 });
offerScreenReaderMode(term, byId("screen-reader") as HTMLInputElement);

let socket: WebSocket | null = null;
let state: P.ViewerState | null = null;
let snapshotNext: P.Snapshot | null = null;
let pendingBytes = 0;
let paused = false;
let connectionCount = 0;  // which socket pendingBytes counts for
let askedFor = "";  // the last handoff reason seen, kept while you hold the terminal
let connected = false;
let everConnected = false;
let reconnectDelayMs = 500;
let fittedFontFor = "";
// Take over pressed, no answer yet: what the person types meanwhile is kept
// and sent once the takeover is granted (dropped if it is refused), so the
// first keys after the click are not lost on a slow link.
let takeoverAsked = false;
let earlyInput: Uint8Array[] = [];
let earlyInputBytes = 0;
const MAX_EARLY_INPUT_BYTES = 64 * 1024;
// Shown once connected again, until the next takeover.
let takeoverEnded = sessionStorage.getItem(holdingKey) ? TAKEOVER_ENDED : "";
sessionStorage.removeItem(holdingKey);

function send(message: P.ClientMessage): void {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

// Output is decoded here, not by xterm.js: its decoder drops bytes that are
// not UTF-8, where the server's screen (a snapshot, the agent's screen) and
// the recording show U+FFFD, so a live view and its replay did not line up.
let outputDecoder = new TextDecoder();

function writeOutput(bytes: Uint8Array, written?: () => void): void {
  pendingBytes += bytes.length;
  const connection = connectionCount;
  term.write(withoutC1Controls(outputDecoder.decode(bytes, { stream: true })), () => {
    written?.();
    // Written for an earlier connection: its count was reset when this one opened.
    if (connection !== connectionCount) return;
    pendingBytes -= bytes.length;
    if (paused && pendingBytes < LOW_WATER_BYTES) {
      paused = false;
      send({ type: P.MESSAGE_RESUME });
    }
  });
  if (!paused && pendingBytes > HIGH_WATER_BYTES) {
    paused = true;
    send({ type: P.MESSAGE_PAUSE });
  }
}

function holding(): boolean {
  return state?.held_by_you === true;
}

function followServerSize(cols: number, rows: number): void {
  if (holding()) return;
  if (term.cols !== cols || term.rows !== rows) term.resize(cols, rows);
  fitFont(cols, rows);
}

function fitFont(cols: number, rows: number): void {
  const key = `${cols}x${rows} in ${window.innerWidth}x${window.innerHeight}`;
  if (key === fittedFontFor) return;
  fittedFontFor = key;
  shrinkFontToFit(term, fit, cols, rows);
}

// What fits the window at the normal font (the size a takeover asks for).
function roomAtFullFont(): { cols: number; rows: number } | undefined {
  const size = term.options.fontSize;
  setFontSize(term, FONT_SIZE);
  const room = fit.proposeDimensions();
  setFontSize(term, size ?? FONT_SIZE);
  return room;
}

// The holder's window decides the PTY's size.
function fitAndReport(): void {
  if (!holding() || !state) return;
  fittedFontFor = "";
  setFontSize(term, FONT_SIZE);
  fit.fit();
  if (term.cols !== state.cols || term.rows !== state.rows) {
    send({ type: P.MESSAGE_RESIZE, cols: term.cols, rows: term.rows });
  }
}

// How far the person had scrolled back from the newest line, or 0.
function linesUpFromNewest(): number {
  const buffer = term.buffer.active;
  return buffer.type === "normal" ? buffer.baseY - buffer.viewportY : 0;
}

function onBinary(data: ArrayBuffer): void {
  const bytes = new Uint8Array(data);
  // A full redraw (the one after a flood, a reconnect) rebuilds the history
  // and left the view at the bottom: someone reading back lost their place.
  // They keep the same distance from the newest line. The distance is taken
  // when xterm reaches the reset, not when the message arrives: output still
  // queued (an earlier redraw) would otherwise undo a scroll made meanwhile.
  let linesUp = 0;
  let fullRedraw = false;
  if (snapshotNext) {
    outputDecoder = new TextDecoder();  // a redraw starts on a whole character
    followServerSize(snapshotNext.cols, snapshotNext.rows);
    if (!snapshotNext.keeps_history) {
      fullRedraw = true;
      writeOutput(new Uint8Array(0), () => {
        linesUp = linesUpFromNewest();
      });
      writeOutput(RIS);
      document.body.dataset.fullSnapshots = String(Number(document.body.dataset.fullSnapshots ?? 0) + 1);
    }
    snapshotNext = null;
    document.body.dataset.snapshots = String(Number(document.body.dataset.snapshots ?? 0) + 1);
  }
  const keepPlace = () => {
    if (linesUp > 0) term.scrollToLine(Math.max(0, term.buffer.active.baseY - linesUp));
  };
  writeOutput(bytes, fullRedraw ? keepPlace : undefined);
}

function onText(text: string): void {
  const message = JSON.parse(text) as P.ServerMessage;
  if (message.type === P.MESSAGE_STATE) {
    const held = holding();
    state = message;
    if (holding() && !held) {
      endTakeoverRequest(true);
      takeoverEnded = "";
      sessionStorage.setItem(holdingKey, "1");
      showMessage("", "");
    } else if (held && !holding()) {
      sessionStorage.removeItem(holdingKey);
    }
    const hint = byId("message");
    if (hint.dataset.hint === "held-by-other" && (!message.held || message.held_by_you)) {
      showMessage("", "");  // the hint no longer holds
    }
    followServerSize(message.cols, message.rows);
    fitAndReport();
    render();
  } else if (message.type === P.MESSAGE_SNAPSHOT) {
    snapshotNext = message;
  } else if (message.type === P.MESSAGE_REFUSED) {
    if (message.action === P.MESSAGE_TAKE_OVER) endTakeoverRequest(false);
    showMessage(message.message, "refused");
    render();  // no longer "Taking over…"
  }
}

function connect(): void {
  if (!token) {
    showMessage(
      "This link has no #token=... fragment. Open the terminal_url that agentty printed or returned.",
      "refused",
    );
    return;
  }
  const ws = P.openSocket(P.TERMINAL_SOCKET_PREFIX + encodeURIComponent(executionId), token);
  socket = ws;
  ws.onopen = () => {
    connected = true;
    everConnected = true;
    reconnectDelayMs = 500;
    connectionCount += 1;
    pendingBytes = 0;
    paused = false;
    document.body.dataset.connected = "yes";
    showMessage(takeoverEnded, takeoverEnded ? "notice" : "");
  };
  ws.onmessage = (event) => {
    if (typeof event.data === "string") onText(event.data);
    else onBinary(event.data as ArrayBuffer);
  };
  ws.onclose = (event) => {
    if (socket !== ws) return;
    socket = null;
    endTakeoverRequest(false);
    const opened = connected;
    connected = false;
    if (holding()) {
      // agentty released it as this socket closed: it is nobody's now.
      takeoverEnded = TAKEOVER_ENDED;
      sessionStorage.removeItem(holdingKey);
      state = state ? { ...state, held: false, held_by: null, held_by_you: false } : null;
    }
    document.body.dataset.connected = "no";
    // How it closed, for whoever debugs a dropped connection (devtools, tests).
    document.body.dataset.closed = `${event.code} ${event.reason}`.trim();
    render();
    // The record is gone: a reconnect would only be refused; say why now.
    if (opened && event.code !== P.CLOSE_EXECUTION_REMOVED) {
      showMessage("Disconnected from agentty; reconnecting…", "refused");
      return reconnectLater();
    }
    void explainRefusal();
  };
}

function reconnectLater(): void {
  setTimeout(connect, reconnectDelayMs);
  reconnectDelayMs = Math.min(reconnectDelayMs * 2, 10000);
}

// A WebSocket that fails does not say why: ask the API. A 404 (no such
// execution for this secret) will not change, so the page stops there.
async function explainRefusal(): Promise<void> {
  const path = `${P.EXECUTIONS_API_PATH}/${encodeURIComponent(executionId)}`;
  const status = await P.apiStatus(path, token);
  if (status === 404) {
    document.body.dataset.connected = "gone";
    showMessage(
      `Cannot connect: this link is outdated. agentty at ${location.host} has no execution ` +
        `${executionId} for this secret: it was restarted (each start makes a new secret and ` +
        "new execution ids), or the execution was removed after it ended. Open the link agentty " +
        "gives now (terminal_url, or its dashboard).",
      "refused",
    );
    return;
  }
  showMessage(
    status === 0
      ? `Cannot connect: agentty is not running at ${location.host} (it stopped, or it ` +
          "restarted on another port); retrying…"
      : status === 503
        ? P.atCapacityMessage(location.host)
        : "Cannot connect to this execution; retrying…",
    "refused",
  );
  reconnectLater();
}

function endTakeoverRequest(granted: boolean): void {
  const early = earlyInput;
  takeoverAsked = false;
  earlyInput = [];
  earlyInputBytes = 0;
  if (granted) for (const bytes of early) sendInput(bytes);
}

function sendInput(data: string | Uint8Array): void {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  if (!holding() && takeoverAsked && earlyInputBytes + bytes.length <= MAX_EARLY_INPUT_BYTES) {
    earlyInput.push(bytes);
    earlyInputBytes += bytes.length;
    return;
  }
  if (!holding() || socket?.readyState !== WebSocket.OPEN) return;
  for (let i = 0; i < bytes.length; i += INPUT_CHUNK_BYTES) {
    socket.send(bytes.subarray(i, i + INPUT_CHUNK_BYTES));
  }
}

term.onData((data) => sendInput(data));
// A person typing or pasting into a read-only terminal is told how to type,
// not ignored.
function hintHowToType(): void {
  const element = byId("message");
  const canTakeOver = connected && state?.status === "running" && !state.held;
  if (canTakeOver && !takeoverAsked && element.hidden) showMessage(READ_ONLY_HINT, "notice");
  const heldByOther = connected && state?.status === "running" && state.held && !state.held_by_you;
  if (heldByOther && element.hidden) {
    showMessage(heldByOtherHint(state?.held_by), "notice");
    element.dataset.hint = "held-by-other";
  }
}
term.attachCustomKeyEventHandler((event) => {
  const leave = leavesTerminal(event, !term.options.disableStdin);
  if (leave) {
    if (leave === "ctrl-]" && event.type === "keydown") {
      event.preventDefault();
      focusHeaderControl();
    }
    return false;
  }
  const typing = event.key.length === 1 || event.key === "Enter" || event.key === "Backspace";
  if (event.type === "keydown" && typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
    hintHowToType();
  }
  return true;
});
// Ctrl+V, Shift+Insert and the context menu's Paste all end in a paste event
// on xterm's textarea (a read-only xterm drops the text without a word).
byId("terminal").addEventListener("paste", () => hintHowToType(), { capture: true });
term.onBinary((data) => sendInput(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)));
window.addEventListener("resize", () => {
  if (holding()) fitAndReport();
  else if (state) followServerSize(state.cols, state.rows);
});

byId("take-over").addEventListener("click", () => {
  const size = roomAtFullFont();
  const message: P.ClientMessage = { type: P.MESSAGE_TAKE_OVER, client: P.CLIENT_BROWSER };
  if (size && size.cols > 0 && size.rows > 0) {
    message.cols = Math.min(size.cols, P.MAX_COLS);
    message.rows = Math.min(size.rows, P.MAX_ROWS);
  }
  if (socket?.readyState !== WebSocket.OPEN) return;
  send(message);
  takeoverAsked = true;
  render();
});
byId("release").addEventListener("click", () => send({ type: P.MESSAGE_RELEASE }));

// The control a keyboard user wants next: Release while holding, else Take
// over, else the way back to the dashboard.
function focusHeaderControl(): void {
  const candidates = ["release", "take-over", "all-executions"].map((id) => byId(id));
  candidates.find((c) => !c.hidden && !(c as HTMLButtonElement).disabled)?.focus();
}

function showMessage(text: string, kind: string): void {
  const element = byId("message");
  delete element.dataset.hint;
  element.textContent = text;
  element.dataset.kind = kind;
  element.hidden = text === "";
}

function render(): void {
  const s = state;
  const held = s?.held ? (s.held_by_you ? "you" : "other") : "no";
  document.body.dataset.held = held;
  term.options.disableStdin = held !== "you" && !takeoverAsked;
  showPageTitle(byId("title"), s ? s.name || s.command || s.execution_id : executionId);
  document.title = `${s?.handoff_reason && !s.held ? "(!) " : ""}${byId("title").textContent} — agentty`;
  byId("purpose").textContent = s?.purpose ?? "";
  const status = byId("status");
  status.textContent = !connected && s ? "disconnected"
    : s ? (s.status === "running" ? "running" : `${s.status}: ${s.exit_description}`) : "";
  status.dataset.status = connected ? (s?.status ?? "") : "";
  // Ran to its end, but failed: shown as a failure (terminal.css).
  status.dataset.exit = connected && s && P.exitedNonZero(s) ? "nonzero" : "";
  // Not known while disconnected: a badge left up would say the program still waits.
  byId("waiting").hidden = !s?.waiting_for_input || !connected;
  const holder = byId("holder");
  holder.textContent =
    held === "you" ? "You hold this terminal: your keystrokes go to it (Ctrl+] leaves it)."
    : held === "other" ? `Held by ${s?.held_by}`
    : connected && s && s.status !== "running" ? "Read-only: the program has ended"
    : takeoverAsked ? "Taking over…"
    : "Read-only";
  // A takeover answers the handoff (the server clears its reason): while you
  // hold the terminal the banner keeps what was asked, as a reminder.
  if (s?.handoff_reason) askedFor = s.handoff_reason;
  else if (held !== "you") askedFor = "";
  const handoff = byId("handoff");
  handoff.hidden = askedFor === "";
  handoff.dataset.yours = held === "you" ? "yes" : "no";
  byId("handoff-lead").textContent =
    held === "you" ? "You have taken over. The agent asked for:" : "The agent asks you to take over:";
  byId("handoff-reason").textContent = askedFor;
  const running = s?.status === "running" && connected;
  const takeOver = byId("take-over") as HTMLButtonElement;
  const release = byId("release") as HTMLButtonElement;
  const focused = document.activeElement;
  // An ended program can never be taken over: no button (the holder text says why).
  takeOver.hidden = held === "you" || (connected && !!s && s.status !== "running");
  // Pressed and not answered yet (a slow link): once is enough.
  takeOver.disabled = !running || held === "other" || takeoverAsked;
  // A disabled button that does not say why looks broken.
  takeOver.title = !connected ? "not connected to agentty"
    : held === "other" ? `${s?.held_by ?? "another viewer"} holds this terminal`
    : "type into this terminal yourself (the agent cannot write to it until you release it)";
  release.hidden = held !== "you";
  // A button hidden or disabled under the keyboard's focus drops it to the
  // top of the page: it moves to the control that replaced it.
  const lost = (button: HTMLButtonElement) => focused === button && (button.hidden || button.disabled);
  if (lost(takeOver) || lost(release)) focusHeaderControl();
  if (held === "you" || takeoverAsked) term.focus();
}

// For tests and debugging: the live terminal and the last state.
(window as unknown as { __agentty: unknown }).__agentty = {
  term,
  state: () => state,
  screenText: () => bufferText(term),
  viewportText: () => viewportText(term),
};

render();
connect();
