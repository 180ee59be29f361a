// Character widths as the program computes them, so the browser draws each
// character in the columns the program (and agentty's screen model) gave it.
//
// xterm.js draws every emoji one column wide by default (its Unicode 6
// table), while glibc's wcwidth, which programs use, says two: after ✅ or 🚀
// the rest of the line sat one column left of where the program put it, and
// full-screen programs with emoji drew over themselves. The Unicode 11 table
// of @xterm/addon-unicode11 fixes most; the ranges below are those glibc 2.36
// (Unicode 15) makes wide and that table does not (newer emoji, a few CJK
// blocks), found by comparing the two over every codepoint. The server's
// screen model makes the same ones wide (session/wide_stand_ins.cpp).
import type { IUnicodeVersionProvider, Terminal } from "@xterm/xterm";
import { Unicode11Addon } from "@xterm/addon-unicode11";

const WIDER_THAN_UNICODE_11: ReadonlyArray<readonly [number, number]> = [
  [0x31bb, 0x31bf], [0x3248, 0x324f], [0x4dc0, 0x4dff], [0x16ff0, 0x16ff1],
  [0x18af3, 0x18cd5], [0x18d00, 0x18d08], [0x1aff0, 0x1aff3], [0x1aff5, 0x1affb],
  [0x1affd, 0x1affe], [0x1b11f, 0x1b122], [0x1f6d6, 0x1f6d7], [0x1f6dd, 0x1f6df],
  [0x1f6fb, 0x1f6fc], [0x1f7f0, 0x1f7f0], [0x1f90c, 0x1f90c], [0x1f972, 0x1f972],
  [0x1f977, 0x1f979], [0x1f9a3, 0x1f9a4], [0x1f9ab, 0x1f9ad], [0x1f9cb, 0x1f9cc],
  [0x1fa74, 0x1fa74], [0x1fa7b, 0x1fa7c], [0x1fa83, 0x1fa86], [0x1fa96, 0x1faac],
  [0x1fab0, 0x1faba], [0x1fac0, 0x1fac5], [0x1fad0, 0x1fad9], [0x1fae0, 0x1fae7],
  [0x1faf0, 0x1faf6],
];

function widerThanUnicode11(codepoint: number): boolean {
  if (codepoint < WIDER_THAN_UNICODE_11[0][0]) return false;
  let low = 0;
  let high = WIDER_THAN_UNICODE_11.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const [first, last] = WIDER_THAN_UNICODE_11[mid];
    if (codepoint < first) high = mid - 1;
    else if (codepoint > last) low = mid + 1;
    else return true;
  }
  return false;
}

export const PROGRAM_WIDTHS_VERSION = "15-glibc";

// Registers and activates the widths on `term` (which needs allowProposedApi).
export function useProgramWidths(term: Terminal): void {
  // The addon registers its provider on activation; it is caught here to
  // build on (its charProperties calls this.wcwidth, so the override counts).
  let unicode11: IUnicodeVersionProvider | undefined;
  new Unicode11Addon().activate({
    unicode: { register: (provider: IUnicodeVersionProvider) => (unicode11 = provider) },
  } as unknown as Terminal);
  if (!unicode11) return;
  const base = unicode11;
  const provider = Object.create(base) as IUnicodeVersionProvider & { version: string };
  Object.defineProperty(provider, "version", { value: PROGRAM_WIDTHS_VERSION });
  provider.wcwidth = (codepoint: number) => (widerThanUnicode11(codepoint) ? 2 : base.wcwidth(codepoint));
  term.unicode.register(provider);
  term.unicode.activeVersion = PROGRAM_WIDTHS_VERSION;
}

// C1 controls that came as UTF-8 (U+0080..U+009F: Windows-1252 quotes read as
// Latin-1, binary junk): xterm.js acts on them, so U+0090 (DCS) or U+009D
// (OSC) hid all later output until a string terminator and U+0085 began a
// new line. The server's screen, the agent's text and tmux show nothing for
// them (session/wide_stand_ins.cpp), so the pages drop them too.
const C1_CONTROLS = /[\u0080-\u009f]/g;
export function withoutC1Controls(text: string): string {
  return text.replace(C1_CONTROLS, "");
}
