// The replay page: one execution's asciicast v2 recording (what the
// recordings API serves from STATE_DIR/recordings), played back in xterm.js
// at its own pace or faster. Pauses longer than IDLE_LIMIT_S are shortened
// (as asciinema's --idle-time-limit does); End shows the last screen at once,
// and the seek bar jumps to any moment (back: from the start again at once,
// as a terminal cannot be unwound).
import "@xterm/xterm/css/xterm.css";
import "./replay.css";
import * as P from "./protocol";
import { showPageTitle } from "./page_title";
import { formatBytes } from "./recordings";
import { withoutC1Controls } from "./unicode_widths";
import {
  bufferText, leavesTerminal, offerScreenReaderMode, openXterm, shrinkFontToFit, viewportText,
} from "./xterm_view";

const IDLE_LIMIT_S = 2;
// A tab holding more than this as text (and as xterm's input) gets slow.
const MAX_REPLAY_BYTES = 64 * 1024 * 1024;
const TICK_MS = 50;

// An event on the replay's clock (seconds, with long pauses shortened).
interface ReplayEvent {
  at: number;
  kind: string; // "o" output, "r" resize (COLSxROWS), "m" marker, "i" input
  data: string;
}

const byId = (id: string) => document.getElementById(id) as HTMLElement;
const recordingId = decodeURIComponent(location.pathname.slice(P.REPLAY_PAGE_PREFIX.length));
const token = P.tokenFromFragment(location.hash);
(byId("all-executions") as HTMLAnchorElement).href = `/${location.hash}`;

const { term, fit } = openXterm(byId("terminal"), { cursorBlink: false, scrollback: 10000 });
offerScreenReaderMode(term, byId("screen-reader") as HTMLInputElement);
const playButton = byId("play") as HTMLButtonElement;
const speedSelect = byId("speed") as HTMLSelectElement;
const seekBar = byId("seek") as HTMLInputElement;

let size = { cols: 80, rows: 24 };
let events: ReplayEvent[] = [];
let next = 0;
let clock = 0;
let playing = false;
let lastTick = 0;
let timer: number | undefined;
// The seek bar is being dragged: playback does not move it under the pointer.
let dragging = false;

function showMessage(text: string): void {
  const element = byId("message");
  element.textContent = text;
  element.hidden = text === "";
}

// Lines that do not parse (a recording cut at its size limit ends mid-line)
// are skipped. False if the header line is not asciicast v2's (an empty file,
// one cut inside its header, another format).
function parse(text: string): boolean {
  const lines = text.split("\n");
  let header: { version?: unknown; width?: number; height?: number; title?: string };
  try {
    header = JSON.parse(lines[0]);
  } catch {
    return false;
  }
  if (typeof header !== "object" || header === null || header.version !== 2) return false;
  size = { cols: header.width ?? 80, rows: header.height ?? 24 };
  showPageTitle(byId("title"), header.title || recordingId);
  document.title = `${header.title || recordingId} - agentty replay`;
  let recorded = 0;
  let at = 0;
  for (const line of lines.slice(1)) {
    if (!line) continue;
    try {
      const [time, kind, data] = JSON.parse(line) as [number, string, string];
      if (typeof time !== "number" || typeof kind !== "string" || typeof data !== "string") continue;
      at += Math.min(Math.max(time - recorded, 0), IDLE_LIMIT_S);
      recorded = time;
      events.push({ at, kind, data });
    } catch {
      continue;
    }
  }
  return true;
}

function resize(cols: number, rows: number): void {
  if (cols > 0 && rows > 0 && (term.cols !== cols || term.rows !== rows)) term.resize(cols, rows);
  shrinkFontToFit(term, fit, cols, rows);
}

function apply(event: ReplayEvent, output: string[]): void {
  if (event.kind === "o") {
    output.push(withoutC1Controls(event.data));
  } else if (event.kind === "r") {
    term.write(output.splice(0).join(""));
    const [cols, rows] = event.data.split("x").map(Number);
    resize(cols, rows);
  } else if (event.kind === "m") {
    byId("marker").textContent = event.data;
  }
}

function clockText(seconds: number): string {
  const s = Math.floor(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function totalSeconds(): number {
  return events.length ? events[events.length - 1].at : 0;
}

function showTime(at = clock): void {
  const total = totalSeconds();
  byId("time").textContent = `${clockText(Math.min(at, total))} / ${clockText(total)}`;
  // Rounded up to a millisecond: the browser keeps a range's value to ~15
  // digits, so at a max of the exact total the bar's end fell short of the
  // last event (1847 of 2000 random totals in chromium).
  seekBar.max = String(Math.ceil(total * 1000) / 1000);
  if (!dragging) seekBar.value = String(Math.min(at, total));
  // A screen reader would read the value as raw seconds ("1.01472").
  seekBar.setAttribute("aria-valuetext", `${clockText(Math.min(at, total))} of ${clockText(total)}`);
}

// Writes every event due by now, then waits for the next one.
function tick(): void {
  timer = undefined;
  const now = performance.now();
  if (playing) clock += ((now - lastTick) / 1000) * Number(speedSelect.value);
  lastTick = now;
  const output: string[] = [];
  while (next < events.length && events[next].at <= clock) apply(events[next++], output);
  if (output.length) term.write(output.join(""));
  showTime();
  if (next >= events.length) return finished();
  if (playing) timer = window.setTimeout(tick, TICK_MS);
}

function finished(): void {
  playing = false;
  playButton.textContent = "Play";
  // Once xterm has parsed what was written (it parses in later tasks).
  term.write("", () => {
    if (next >= events.length) document.body.dataset.finished = "yes";
  });
}

function play(): void {
  if (next >= events.length) restart();
  playing = true;
  playButton.textContent = "Pause";
  document.body.dataset.finished = "no";
  lastTick = performance.now();
  if (timer === undefined) tick();
}

function pause(): void {
  playing = false;
  playButton.textContent = "Play";
  if (timer !== undefined) window.clearTimeout(timer);
  timer = undefined;
}

function restart(): void {
  pause();
  term.reset();
  resize(size.cols, size.rows);
  byId("marker").textContent = "";
  document.body.dataset.finished = "no";
  next = 0;
  clock = 0;
  showTime();
}

function toEnd(): void {
  seekTo(totalSeconds());
}

// Shows the screen as it was `seconds` into the replay, playing on from
// there if it was playing.
function seekTo(seconds: number): void {
  const wasPlaying = playing;
  if (seconds < clock) restart();
  else pause();
  clock = Math.min(Math.max(seconds, 0), totalSeconds());
  tick();
  if (wasPlaying && next < events.length) play();
}

async function load(): Promise<void> {
  const terminalPageLinked = linkTerminalPage();
  const path = `${P.RECORDINGS_API_PATH}/${encodeURIComponent(recordingId)}`;
  let response: Response;
  try {
    response = await fetch(path, { headers: { [P.TOKEN_HEADER]: token }, cache: "no-store" });
  } catch {
    document.body.dataset.loaded = "error";
    return showMessage(`Cannot load the recording: agentty is not running at ${location.host}.`);
  }
  if (!response.ok) {
    document.body.dataset.loaded = "error";
    return showMessage(
      `No recording ${recordingId} here: recordings keep the newest AGENTTY_MAX_RECORDINGS ` +
        "(500), it may be from another state directory, or this link lacks the server's " +
        "secret (#token=...): open it from the dashboard.",
    );
  }
  const bytes = Number(response.headers.get("content-length") ?? 0);
  if (bytes > MAX_REPLAY_BYTES) {
    // Unread, the body held the server's connection and the file open for
    // as long as the tab stayed open.
    void response.body?.cancel();
    document.body.dataset.loaded = "error";
    return showMessage(
      `This recording is ${formatBytes(bytes)}, too big to replay in a browser tab; it is ` +
        `recordings/${recordingId}.cast in the server's state directory (asciicast v2: ` +
        "`asciinema play` plays it).",
    );
  }
  let text: string;
  try {
    text = await response.text();
  } catch {
    document.body.dataset.loaded = "error";
    return showMessage(
      `The download of recording ${recordingId} broke off (did agentty at ${location.host} ` +
        "stop?): reload this page to try again.",
    );
  }
  if (!parse(text)) {
    document.body.dataset.loaded = "error";
    return showMessage(
      `Recording ${recordingId} is not an asciicast v2 recording (its first line is not the ` +
        "header): it may have been cut short when it was written, e.g. on a full disk.",
    );
  }
  await terminalPageLinked;  // shown with the rest, not a moment later under the pointer
  document.body.dataset.loaded = "yes";
  restart();
  play();
}

// The way to the execution itself (live if it still runs), while agentty
// still has its record: a recording outlives it, and a link to a page that
// can only say "outdated" would be a dead end. Asked of the list, not of the
// execution's own path: its 404 for a record gone would be logged in the
// console as a failed load.
async function linkTerminalPage(): Promise<void> {
  let known = false;
  try {
    const list = await P.getJson<{ executions: P.ExecutionSummary[] }>(P.EXECUTIONS_API_PATH, token);
    known = list.executions.some((e) => e.execution_id === recordingId);
  } catch {
    return;  // the page says what went wrong with the recording itself
  }
  if (!known) return;
  const link = byId("terminal-page") as HTMLAnchorElement;
  link.href = `${P.TERMINAL_PAGE_PREFIX}${encodeURIComponent(recordingId)}${location.hash}`;
  link.hidden = false;
}

function togglePlay(): void {
  if (playing) pause();
  else play();
}

playButton.addEventListener("click", togglePlay);
byId("restart").addEventListener("click", () => {
  restart();
  play();
});
byId("end").addEventListener("click", toEnd);
seekBar.addEventListener("input", () => {
  dragging = true;
  showTime(Number(seekBar.value));
});
seekBar.addEventListener("change", () => {
  dragging = false;
  const at = Number(seekBar.value);
  seekTo(at >= Number(seekBar.max) ? totalSeconds() : at);
});
// The keys of video and asciinema players, for the whole page: Space or k
// plays and pauses, Left and Right seek SEEK_STEP_S, Home and End go to the
// start and the end. Also in the terminal, as a video player's keys work
// after a click on the picture: nothing is typed into a replay (the terminal
// passes them on below). Not where the key is the control's own: Space on a
// button or checkbox, any key in a list or a text field. On the seek bar they
// are the bar's keys anyway, but in seconds (a range's own arrows move it by a
// percent of the recording).
const SEEK_STEP_S = 5;
function shortcut(event: KeyboardEvent, inTerminal = false): (() => void) | null {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return null;
  const target = event.target instanceof HTMLElement && !inTerminal ? event.target : null;
  if (target?.closest(".xterm, select, textarea, [contenteditable]")) return null;
  if (target instanceof HTMLInputElement && target.type !== "range" && target.type !== "checkbox") return null;
  const ownsSpace = Boolean(target?.closest("button, a, input[type=checkbox]"));
  switch (event.key) {
    case " ":
      return ownsSpace ? null : togglePlay;
    case "k":
    case "K":
      return togglePlay;
    case "ArrowLeft":
      return () => seekTo(clock - SEEK_STEP_S);
    case "ArrowRight":
      return () => seekTo(clock + SEEK_STEP_S);
    case "Home":
      return () => seekTo(0);
    case "End":
      return toEnd;
    default:
      return null;
  }
}
document.addEventListener("keydown", (event) => {
  const action = document.body.dataset.loaded === "yes" ? shortcut(event) : null;
  if (!action) return;
  event.preventDefault();
  action();
});

// Nothing is typed into a replay: Tab and Ctrl+] leave the terminal, and the
// player's keys act as they do elsewhere on the page (xterm.js stops the
// events it handles, so they would not reach the document's listener).
term.attachCustomKeyEventHandler((event) => {
  const leave = leavesTerminal(event, false);
  if (leave === "ctrl-]" && event.type === "keydown") {
    event.preventDefault();
    playButton.focus();
  }
  if (leave !== null) return false;
  const action = document.body.dataset.loaded === "yes" ? shortcut(event, true) : null;
  if (!action) return true;
  if (event.type === "keydown") {
    event.preventDefault();
    action();
  }
  return false;
});
speedSelect.addEventListener("change", () => {
  lastTick = performance.now();
});
window.addEventListener("resize", () => shrinkFontToFit(term, fit, term.cols, term.rows));

(window as unknown as { __agentty: unknown }).__agentty = {
  term,
  screenText: () => bufferText(term),
  viewportText: () => viewportText(term),
  events: () => events.length,
};

void load();
