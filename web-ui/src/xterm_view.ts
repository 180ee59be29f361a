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
// Below this the terminal scrolls inside its container instead of shrinking
// further: at 10 px DejaVu Sans Mono's cells are 6 x 11 px, the smallest at
// which 0/O, 1/l/I and the punctuation of a shell line stay distinct on a
// 1x screen (at 9 px, 5 px wide glyphs blur; at the former 6 px, a 120
// column terminal on a 390 px phone, nothing could be read). A desktop
// window fits 120 x 40 at 10 px or more down to about 730 x 490.
export const MIN_FONT_SIZE = 10;

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
    // xterm.js logs every malformed escape sequence as a console error: a
    // program printing binary (`cat /dev/urandom`) made thousands a second,
    // and the page stopped answering for over 10 s at a time (audit 43).
    logLevel: "off",
  });
  useProgramWidths(term);
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(element);
  swallowTerminalQueries(term);
  scrollByTouch(term);
  followCursor(term);
  return { term, fit };
}

// xterm.js 6.0 scrolls its history by wheel and scroll bar only, not by touch
// (xtermjs/xterm.js#5489): on a phone the history was out of reach. A
// vertical swipe over the terminal scrolls it a row per row height moved;
// sideways ones are the browser's (terminal.css: touch-action), which scroll
// a terminal wider than the window.
function scrollByTouch(term: Terminal): void {
  const element = term.element;
  if (!element) return;
  let lastY: number | null = null;
  let moved = 0; // pixels not yet scrolled (less than a row)
  const oneFinger = (event: TouchEvent) => (event.touches.length === 1 ? event.touches[0].clientY : null);
  element.addEventListener("touchstart", (event) => {
    lastY = oneFinger(event);
    moved = 0;
  }, { passive: true });
  element.addEventListener("touchmove", (event) => {
    const y = oneFinger(event);
    if (y === null || lastY === null) return;
    moved += lastY - y; // a finger moving up shows newer lines
    lastY = y;
    const rowHeight = (element.querySelector(".xterm-screen")?.clientHeight ?? 0) / term.rows;
    if (!(rowHeight > 0)) return;
    const lines = Math.trunc(moved / rowHeight);
    if (lines !== 0) {
      term.scrollLines(lines);
      moved -= lines * rowHeight;
    }
  }, { passive: true });
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

// A large font (at most FONT_SIZE) at which cols x rows fit the window, or
// MIN_FONT_SIZE if none does: then the window scrolls (terminal.css lets the
// terminal be wider than it), sideways to the columns off to the right and
// down to the rows below, with the cursor's row kept in view (followCursor).
export function shrinkFontToFit(term: Terminal, fit: FitAddon, cols: number, rows: number): void {
  let size = FONT_SIZE;
  for (;;) {
    setFontSize(term, size);
    const room = fit.proposeDimensions();
    if (!room || (room.cols >= cols && room.rows >= rows)) return;
    if (size <= MIN_FONT_SIZE) {
      requestAnimationFrame(() => cursorFollowers.get(term)?.());  // once xterm has laid it out
      return;
    }
    const scale = Math.min(room.cols / cols, room.rows / rows);
    size = Math.max(MIN_FONT_SIZE, Math.min(size - 0.5, Math.floor(size * scale * 2) / 2));
  }
}

// A terminal taller than its container (the minimum font in a short window,
// a phone held sideways) keeps the cursor's row in view: where a program's
// newest output and its prompt are, at the top of a short output and at the
// bottom of a long one. Unless the person scrolled away from it: then the
// page stays where they put it until they scroll back to the cursor.
const cursorFollowers = new WeakMap<Terminal, () => void>();
function followCursor(term: Terminal): void {
  const element = term.element;
  const container = element?.parentElement;
  if (!element || !container) return;
  // Where the cursor's row is, relative to the container's visible box.
  const cursorRow = () => {
    const screen = element.querySelector(".xterm-screen")?.getBoundingClientRect();
    if (!screen || term.rows === 0) return null;
    const height = screen.height / term.rows;
    const top = screen.top - container.getBoundingClientRect().top + term.buffer.active.cursorY * height;
    return { top, bottom: top + height };
  };
  const inView = () => {
    const row = cursorRow();
    return !row || (row.top >= -0.5 && row.bottom <= container.clientHeight + 0.5);
  };
  let following = true;
  const reveal = () => {
    // Only the smallest font overflows (cheap to ask: this runs after each write).
    if (!following || (term.options.fontSize ?? FONT_SIZE) > MIN_FONT_SIZE) return;
    const row = cursorRow();
    if (!row || container.scrollHeight <= container.clientHeight) return;
    if (row.bottom > container.clientHeight) container.scrollTop += row.bottom - container.clientHeight;
    else if (row.top < 0) container.scrollTop += row.top;
  };
  container.addEventListener("scroll", () => {
    following = inView();
  }, { passive: true });
  term.onWriteParsed(reveal);
  term.onResize(() => requestAnimationFrame(reveal));
  cursorFollowers.set(term, reveal);
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
