// What the terminal page and the replay page share: an xterm.js terminal set
// up as agentty shows programs (the program's character widths; no answers
// to the program's terminal queries), the font that fits a PTY's size in the
// window, and the text the browser tests read.
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { useProgramWidths } from "./unicode_widths";

// A watcher's terminal has the PTY's size, not the window's: the font shrinks
// (down to the minimum) until all of it fits, so the live edge stays in view.
export const FONT_SIZE = 14;
const MIN_FONT_SIZE = 6;

export function openXterm(
  element: HTMLElement,
  options: { cursorBlink: boolean; scrollback: number },
): { term: Terminal; fit: FitAddon } {
  const term = new Terminal({
    ...options,
    fontFamily: '"DejaVu Sans Mono", "Liberation Mono", monospace',
    fontSize: FONT_SIZE,
    disableStdin: true,
    allowProposedApi: true, // term.unicode, for the program's character widths
  });
  useProgramWidths(term);
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(element);
  swallowTerminalQueries(term);
  return { term, fit };
}

// libvterm on the server answers the program's terminal queries; xterm.js
// must not answer too (two answers show up as garbage at the prompt).
function swallowTerminalQueries(t: Terminal): void {
  const swallow = () => true;
  t.parser.registerCsiHandler({ final: "c" }, swallow); // DA1
  t.parser.registerCsiHandler({ prefix: ">", final: "c" }, swallow); // DA2
  t.parser.registerCsiHandler({ prefix: "=", final: "c" }, swallow); // DA3
  t.parser.registerCsiHandler({ final: "n" }, swallow); // DSR, CPR
  t.parser.registerCsiHandler({ prefix: "?", final: "n" }, swallow); // DEC DSR
  t.parser.registerCsiHandler({ intermediates: "$", final: "p" }, swallow); // DECRQM
  t.parser.registerCsiHandler({ prefix: "?", intermediates: "$", final: "p" }, swallow);
  t.parser.registerCsiHandler({ prefix: ">", final: "q" }, swallow); // XTVERSION
  t.parser.registerCsiHandler({ final: "t" }, swallow); // window reports
  t.parser.registerDcsHandler({ intermediates: "$", final: "q" }, swallow); // DECRQSS
  for (const osc of [4, 10, 11, 12]) {
    t.parser.registerOscHandler(osc, (data) => data.split(";").includes("?"));
  }
}

// Whether a key press takes the focus out of the terminal instead of going to
// the program. xterm.js keeps Tab even when it takes no input, so a person on
// the keyboard could not get out: Tab leaves unless they type into the
// program (a holder's Tab is the program's: completion), Ctrl+] always
// leaves (as Ctrl-] gets out of `agentty attach`). Tab is left to the
// browser; the caller moves the focus on Ctrl+].
export function leavesTerminal(event: KeyboardEvent, typing: boolean): "tab" | "ctrl-]" | null {
  const modifiers = event.altKey || event.metaKey;
  if (event.ctrlKey && !modifiers && (event.key === "]" || event.code === "BracketRight")) return "ctrl-]";
  if (event.key === "Tab" && !typing && !event.ctrlKey && !modifiers) return "tab";
  return null;
}

// xterm.js draws text a screen reader cannot read; its screen reader mode
// adds rows it can read (and reads new output aloud), at a cost in a flood,
// so a person turns it on with `checkbox` (remembered in this browser).
const SCREEN_READER_KEY = "agentty-screen-reader";
export function offerScreenReaderMode(term: Terminal, checkbox: HTMLInputElement): void {
  const apply = () => {
    term.options.screenReaderMode = checkbox.checked;
    if (checkbox.checked) localStorage.setItem(SCREEN_READER_KEY, "on");
    else localStorage.removeItem(SCREEN_READER_KEY);
  };
  checkbox.checked = localStorage.getItem(SCREEN_READER_KEY) === "on";
  apply();
  checkbox.addEventListener("change", apply);
}

export function setFontSize(term: Terminal, size: number): void {
  if (term.options.fontSize !== size) term.options.fontSize = size;
}

// The largest font (at most FONT_SIZE) at which cols x rows fit the window.
export function shrinkFontToFit(term: Terminal, fit: FitAddon, cols: number, rows: number): void {
  let size = FONT_SIZE;
  for (;;) {
    setFontSize(term, size);
    const room = fit.proposeDimensions();
    if (!room || (room.cols >= cols && room.rows >= rows) || size <= MIN_FONT_SIZE) return;
    const scale = Math.min(room.cols / cols, room.rows / rows);
    size = Math.max(MIN_FONT_SIZE, Math.min(size - 0.5, Math.floor(size * scale * 2) / 2));
  }
}

// The whole buffer's text, and the rows in view (what the browser tests read).
export function bufferText(term: Terminal): string {
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
  return lines.join("\n");
}

export function viewportText(term: Terminal): string {
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < term.rows; i++) {
    lines.push(buffer.getLine(buffer.viewportY + i)?.translateToString(true) ?? "");
  }
  return lines.join("\n");
}
