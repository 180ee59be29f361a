// End-to-end tests from the fifty-fifth audit: the PROGRESS DISPLAYS of
// audit 54 (tqdm's position= bars, rich's Live, docker/BuildKit, Jest's
// status block, log-update/ink: python scripts writing the bytes those
// libraries write), met where audit 54 did not look: in a shell SESSION
// (`open`, then execute(session=), write and wait follow-ups, read at the
// cursor, read(tail_lines), capped answers with output_tail), on an SSH HOST
// (execute(host=) and open(host=), a real OpenSSH sshd on 127.0.0.1 from
// tests/e2e/lib/sshd.mjs), in small and RESIZED terminals (cols/rows, a
// write(cols, rows) mid-display, a display taller than the terminal), and
// interrupted by a PROMPT (pip's "Proceed (y/n)?", an ink-style question
// inside the display) answered with write.
//
// The standard, as audit 54's: a display redrawn in place reads as the frame
// the screen shows (`screen` of the same execution, scrollback and rows), not
// every frame appended; nothing printed above or after a display is lost or
// doubled; each answer that contains a display whole reads it as its final
// frame. A test marked `todo` asserts what a person reads where agentty does
// not (yet) give it; its comment quotes what the agent read (agentty of
// session 46, before its last changes: the session answer's cap on text and
// the sizes kept per log position mended four of the audit's eleven todos).
//
// After a pause, the scripts write the rest of their display in one write,
// so an answer's "the reply went quiet" (150 ms) cannot fall inside it on a
// loaded machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { brief, openSession, serverForFile, sessionRunner, tempDirForRun, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';
import { displays, longDisplay } from './lib/progress-displays.mjs';
import { sshdAndAgentForFile } from './lib/sshd.mjs';

const UTF8 = { LANG: 'C.UTF-8' };

// Local executions and sessions on one server; host ones on the agentty
// that reaches the file's sshd (skipped where sshd cannot run).
const server = serverForFile();
const call = server.call;
const run = sessionRunner(call);
const waitFor = waiterFor(call);
const ssh = sshdAndAgentForFile('agentty-audit55-home-');
const { skip } = ssh;
const remoteCall = (name, args) => ssh.agent.call(name, args);
const remoteRun = sessionRunner(remoteCall);

// The lines of a text (its final LF ends the last line, it starts none).
const linesOf = (text) => (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');

// How many times `part` occurs in `text`.
const occurrences = (text, part) => text.split(part).length - 1;

// What the terminal finally shows for an execution: its scrollback and rows,
// without the empty rows below the last text.
async function screenLines(callTool, id) {
  const s = await callTool('screen', { execution_id: id, scrollback_lines: 1000 });
  assert.equal(s.isError, false, s.error);
  const all = [...(s.scrollback ?? []), ...s.lines];
  while (all.length && all.at(-1) === '') all.pop();
  return all;
}

// The whole text of an execution read in one page, as lines the screen
// would show (a screen row has no spaces at its end: the prompt's).
async function wholeLines(callTool, id) {
  const r = await callTool('read', { execution_id: id, since_seq: 1, max_output_bytes: 1 << 20 });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.capped, false, brief(r));
  return linesOf(r.output).map((l) => l.trimEnd());
}

// Checks that `text` is `expected` then a shell prompt (the session's next
// one, on the same line: "root@host:/dir# ").
function endsAtPrompt(text, expected) {
  assert.ok(text.startsWith(expected), `${JSON.stringify(text)}\nshould start with\n${JSON.stringify(expected)}`);
  assert.match(text.slice(expected.length), /^[^\n]*[#$] $/, JSON.stringify(text));
}

// Memoised: a run judged by several tests happens once.
const runs = new Map();
const once = (key, fn) => {
  if (!runs.has(key)) runs.set(key, fn());
  return runs.get(key);
};

// ============================================================ the programs
// The scripts, written to files both a local session and the host (this
// machine, logged in as the same user) can run as `python3 FILE`.
const dir = tempDirForRun('agentty-e2e-a55-');
const scripts = {};
function program(name, source) {
  scripts[name] = path.join(dir, `${name}.py`);
  writeFileSync(scripts[name], source);
}

// Audit 54's emulations (lib/progress-displays.mjs), as files.
for (const [name, d] of Object.entries(displays)) program(name, d.script);
// What a person reads of a display's run: header, lines kept, final frame, summary.
const shownText = (d) => `${[d.header, ...(d.kept ?? []), ...d.last, d.summary].join('\n')}\n`;

// A 3-line log-update display (deploy) that stops at 50% for a line read
// with echo off (a key to go on), then ends at 100%.
program('deploy', String.raw`
import sys, termios
out = []
def erase(count):
    return "".join("\x1b[2K" + ("\x1b[1A" if i < count - 1 else "") for i in range(count)) + ("\x1b[G" if count else "")
print("deploying 3 services", flush=True)
prev = 0
def frame(n):
    global prev
    out.append(erase(prev) + f"api    {n:3d}%\nworker {n*3//4:3d}%\nweb    {n//2:3d}%\n"); prev = 4
def flush():
    sys.stdout.write("".join(out)); sys.stdout.flush(); out.clear()
for n in range(0, 51, 5):
    frame(n); flush()
fd = sys.stdin.fileno()
a = termios.tcgetattr(fd); old = list(a); a[3] &= ~termios.ECHO; termios.tcsetattr(fd, termios.TCSANOW, a)
sys.stdin.readline()
termios.tcsetattr(fd, termios.TCSANOW, old)
for n in range(55, 101, 5): frame(n)
out.append("deployed 3 services\n"); flush()
`);
const deployPaused = 'deploying 3 services\napi     50%\nworker  37%\nweb     25%\n';
const deployRest = 'api    100%\nworker  75%\nweb     50%\ndeployed 3 services\n';

// The same kind of display stopping twice (30% and 70%, echo off).
program('twice', String.raw`
import sys, termios
out = []
def erase(count):
    return "".join("\x1b[2K" + ("\x1b[1A" if i < count - 1 else "") for i in range(count)) + ("\x1b[G" if count else "")
print("migrating 3 databases", flush=True)
prev = 0
def frame(n):
    global prev
    out.append(erase(prev) + f"users   {n:3d}%\norders  {n*3//4:3d}%\nitems   {n//2:3d}%\n"); prev = 4
def flush():
    sys.stdout.write("".join(out)); sys.stdout.flush(); out.clear()
fd = sys.stdin.fileno()
a = termios.tcgetattr(fd); old = list(a); a[3] &= ~termios.ECHO
def pause():
    termios.tcsetattr(fd, termios.TCSANOW, a); sys.stdin.readline(); termios.tcsetattr(fd, termios.TCSANOW, old)
for n in range(0, 31, 5):
    frame(n); flush()
pause()
for n in range(35, 71, 5): frame(n)
flush()
pause()
for n in range(75, 101, 5): frame(n)
out.append("migrated 3 databases\n"); flush()
`);
const migrateFrame = (n) => `users   ${String(n).padStart(3)}%\norders  ${String(Math.floor(n * 3 / 4)).padStart(3)}%\n` +
  `items   ${String(Math.floor(n / 2)).padStart(3)}%\n`;

// pip: a download display (rich bars), "Would install ...", then
// "Proceed (y/n)? " read by input() (echo on); on "y" an install display.
program('pip', String.raw`
import sys
w = sys.stdout.write
print("Collecting packages", flush=True)
pk = ["alpha-1.0", "beta-2.0 ", "gamma-3.0"]
height = 0
for n in range(21):
    if height:
        w("\r\x1b[2K" + "\x1b[1A\x1b[2K" * (height - 1))
    w("\n".join(f"  {p} \x1b[32m{'━'*(n//2)}\x1b[0m{' '*(10-n//2)} {n*5:3d}%" for p in pk))
    height = 3
    sys.stdout.flush()
w("\n")
print("Would install alpha-1.0 beta-2.0 gamma-3.0")
answer = input("Proceed (y/n)? ")
if answer != "y":
    print("Aborted"); sys.exit(1)
out = []
prev = 0
for n in range(11):
    out.append("".join("\x1b[2K" + ("\x1b[1A" if i < prev - 1 else "") for i in range(prev)) + ("\x1b[G" if prev else "") +
               f"Installing {min(n//4+1,3)}/3\n  unpacking {n*10}%\n")
    prev = 3
out.append("Successfully installed alpha-1.0 beta-2.0 gamma-3.0\n")
w("".join(out)); sys.stdout.flush()
`);
const pipQuestion = 'Collecting packages\n  alpha-1.0 ━━━━━━━━━━ 100%\n  beta-2.0  ━━━━━━━━━━ 100%\n' +
  '  gamma-3.0 ━━━━━━━━━━ 100%\nWould install alpha-1.0 beta-2.0 gamma-3.0\nProceed (y/n)? ';
const pipRest = 'y\nInstalling 3/3\n  unpacking 100%\nSuccessfully installed alpha-1.0 beta-2.0 gamma-3.0\n';
const pipScreen = linesOf(pipQuestion + pipRest);

// ink (create-app style): the question is the display's last line, keys
// read raw (no echo); the key redraws the frame with the answer, then an
// install display and a summary.
program('ink', String.raw`
import sys, termios, tty
out = []
def erase(count):
    return "".join("\x1b[2K" + ("\x1b[1A" if i < count - 1 else "") for i in range(count)) + ("\x1b[G" if count else "")
print("create-app v1.0", flush=True)
prev = 0
def frame(lines, end="\n"):
    global prev
    text = "\n".join(lines) + end
    out.append(erase(prev) + text); prev = text.count("\n") + 1
def flush():
    sys.stdout.write("".join(out)); sys.stdout.flush(); out.clear()
for n in range(0, 11):
    frame([f"scaffolding {n*10}%", f"  files {n*4}"]); flush()
frame(["scaffolding 100%", "  files 40", "? Install dependencies? (Y/n) "], end=""); flush()
fd = sys.stdin.fileno()
old = termios.tcgetattr(fd); tty.setraw(fd)
c = sys.stdin.read(1)
termios.tcsetattr(fd, termios.TCSANOW, old)
frame(["scaffolding 100%", "  files 40", "✔ Install dependencies? " + ("Yes" if c in "yY\r" else "No")])
prev = 0
for n in range(0, 11):
    frame([f"installing {n*10}%"])
out.append("Done: created app\n"); flush()
`);
const inkQuestion = 'create-app v1.0\nscaffolding 100%\n  files 40\n? Install dependencies? (Y/n) ';
const inkScreen = ['create-app v1.0', 'scaffolding 100%', '  files 40', '✔ Install dependencies? Yes', 'installing 100%',
  'Done: created app'];

// A 60-line build log, a BuildKit-style display that grows to 4 lines over
// 30 frames, a summary (5.9 KB raw, 1.6 KB of text).
program('logged', String.raw`
import sys
w = sys.stdout.write
for i in range(1, 61):
    print(f"compiling unit {i:02d} of 60")
sys.stdout.flush()
drawn = 0
steps = ["[1/3] FROM docker.io/library/debian:12", "[2/3] COPY . /src", "[3/3] RUN make -C /src"]
for t in range(1, 31):
    lines = [f"[+] Building {t/10:.1f}s ({min(t//10+1,3)}/3)" + (" FINISHED" if t == 30 else "")]
    for i, s in enumerate(steps[:min(t // 10 + 1, 3)]):
        lines.append(f" => {s:<40} {min(1.0, (t - i*10)/10):.1f}s")
    if drawn: w(f"\x1b[{drawn}A")
    for line in lines: w("\x1b[2K" + line + "\n")
    drawn = len(lines); sys.stdout.flush()
print("Successfully built 0123456789ab")
`);
const loggedLast = ['[+] Building 3.0s (3/3) FINISHED', ` => ${'[1/3] FROM docker.io/library/debian:12'.padEnd(40)} 1.0s`,
  ` => ${'[2/3] COPY . /src'.padEnd(40)} 1.0s`, ` => ${'[3/3] RUN make -C /src'.padEnd(40)} 1.0s`];
const loggedEnd = `${loggedLast.join('\n')}\nSuccessfully built 0123456789ab\n`;

// Audit 54's long display: 2500 frames of a 3-line log-update display
// (200 KB raw; the screen shows 5 lines).
program('long', longDisplay);
const longText = '== sync start ==\nsyncing 2500/2500\n  files 10000\n  bytes 2560000\n== sync done: 2500 frames ==\n';

// A BuildKit-style display of N lines (argv[1]), 15 frames: ESC[<N>A, then
// each line ESC[2K + text + LF.
program('tall', String.raw`
import sys
w = sys.stdout.write
N = int(sys.argv[1])
print(f"start {N}-line display", flush=True)
drawn = 0
for t in range(1, 16):
    if drawn: w(f"\x1b[{drawn}A")
    for i in range(N):
        w(f"\x1b[2Kline {i+1:2d} frame {t:2d}\n")
    drawn = N
    sys.stdout.flush()
print(f"end {N}-line display")
`);
const tallFinal = (n) => [`start ${n}-line display`, ...Array.from({ length: n }, (_, i) => `line ${String(i + 1).padStart(2)} frame 15`),
  `end ${n}-line display`];

// The same with log-update's erase (ESC[2K ESC[1A per line), N lines.
program('tallLog', String.raw`
import sys
w = sys.stdout.write
N = int(sys.argv[1])
print(f"start {N}-task display", flush=True)
prev = 0
for t in range(1, 16):
    out = "".join(f"task {i+1:2d} step {t:2d}\n" for i in range(N))
    w("".join("\x1b[2K" + ("\x1b[1A" if i < prev - 1 else "") for i in range(prev)) + ("\x1b[G" if prev else "") + out)
    prev = N + 1; sys.stdout.flush()
print(f"end {N}-task display")
`);

// A 4-line BuildKit-style display fit to the terminal's width (lines cut at
// cols - 1, as docker does; the size read every frame), stopping at 50% for
// a line (echo off).
program('fit', String.raw`
import sys, termios, os
out = []
print("building 3 targets", flush=True)
drawn = 0
def frame(t):
    global drawn
    cols = os.get_terminal_size().columns
    lines = [f"[+] Building {t/10:.1f}s ({cols} cols)"] + [f" => {name:<30} {'#' * (t // 2):<10} {t*5:3d}%" for name in ("compile", "link", "package")]
    if drawn: out.append(f"\x1b[{drawn}A")
    for line in lines: out.append("\x1b[2K" + line[:cols - 1] + "\n")
    drawn = len(lines)
def flush():
    sys.stdout.write("".join(out)); sys.stdout.flush(); out.clear()
for t in range(0, 11):
    frame(t); flush()
fd = sys.stdin.fileno()
a = termios.tcgetattr(fd); old = list(a); a[3] &= ~termios.ECHO; termios.tcsetattr(fd, termios.TCSANOW, a)
sys.stdin.readline()
termios.tcsetattr(fd, termios.TCSANOW, old)
for t in range(11, 21): frame(t)
out.append("built 3 targets\n"); flush()
`);
const fitPaused = 'building 3 targets\n[+] Building 1.0s (80 cols)\n => compile                        #####       50%\n' +
  ' => link                           #####       50%\n => package                        #####       50%\n';
const fitRest = (cols) => {
  const cut = (line) => line.slice(0, cols - 1);
  return `${[`[+] Building 2.0s (${cols} cols)`, ...['compile', 'link', 'package'].map((name) => cut(` => ${name.padEnd(30)} ${'#'.repeat(10)} 100%`))]
    .join('\n')}\nbuilt 3 targets\n`;
};

// Starts a local execution (killed after `t`) or a host one.
async function start(t, callTool, args) {
  const r = await callTool('execute', { side_effects: ['NONE'], yield_ms: WAIT_MS, ...args });
  assert.equal(r.isError, false, r.error);
  t.after(() => callTool('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  return r;
}

// Runs to its end; the answer.
async function runToEnd(callTool, args) {
  const r = await callTool('execute', { side_effects: ['NONE'], yield_ms: WAIT_MS, env: UTF8, ...args });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.exit_code, 0, brief(r));
  return r;
}

// A write to execution `id` and what it printed up to its end (the command's
// in a session): the write's answer, and a wait's if the answer came first.
async function writeToEnd(callTool, id, args) {
  const w = await callTool('write', { execution_id: id, ...args });
  assert.equal(w.isError, false, w.error);
  const ended = w.kind === 'session' ? w.command_running === false : w.status !== 'running';
  if (ended) return w.output;
  const rest = await waiterFor(callTool)(id, 'exit');
  return w.output + rest.output;
}

// A session on the host, closed after `t`; its id.
async function openOnHost(t) {
  const r = await remoteCall('open', { host: ssh.sshd.host });
  assert.equal(r.isError, false, r.error || r.message);
  assert.equal(r.prompt_ready, true, brief(r));
  t.after(() => remoteCall('close', { execution_id: r.execution_id }));
  return r.execution_id;
}

// =============================================================== sessions

test('in a local session, the tqdm, rich, BuildKit, Jest and log-update displays each read as header, final frame and summary', async (t) => {
  const id = await openSession(call, t);
  for (const [name, d] of Object.entries(displays)) {
    const r = await run(id, `python3 ${scripts[name]}`);
    assert.equal(r.status, 'completed', `${name}: ${brief(r)}`);
    assert.equal(r.exit_code, 0, `${name}: ${brief(r)}`);
    assert.equal(r.output, shownText(d), name);
  }
  // The session's whole text, prompts and command lines included, is what
  // its terminal shows.
  assert.deepEqual(await wholeLines(call, id), await screenLines(call, id));
});

// A display stopped mid-way (the program waits for a key, echo off) in a
// session: the screen then shows the header and the 50% frame.
test('a display paused for input in a session: execute reads the frame on the screen, write the final frame and the summary once', async (t) => {
  const id = await openSession(call, t);
  const r = await run(id, `python3 ${scripts.deploy}`);
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.output, deployPaused);
  const paused = await screenLines(call, id);
  assert.deepEqual(paused.slice(-4), linesOf(deployPaused));
  endsAtPrompt(await writeToEnd(call, id, { input: '', newline: true }), deployRest);
  // tail_lines counts the lines the agent reads: the header is 5 back.
  const tail = await call('read', { execution_id: id, tail_lines: 6 });
  endsAtPrompt(tail.output, deployPaused.split('\n')[0] + '\n' + deployRest);
  assert.deepEqual(await wholeLines(call, id), await screenLines(call, id));
});

// Followed as an agent might: write(yield_ms=0) answers at once, a wait
// with tail_lines (out-of-band) or a since_seq pattern says when, and read
// at the cursor takes what came. Each read starts inside the display (its
// first move up reaches before the page) and reads the latest frame.
test('a display followed with write(yield_ms=0), wait and read at the cursor: each read is the latest frame, the last ends with the final frame and summary', async (t) => {
  const id = await openSession(call, t);
  const r = await run(id, `python3 ${scripts.twice}`);
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.output, `migrating 3 databases\n${migrateFrame(30)}`);
  const w1 = await call('write', { execution_id: id, input: '', newline: true, yield_ms: 0 });
  assert.equal(w1.isError, false, w1.error);
  // "items 35%" is in the 70% frame alone (the second stop).
  const seen = await waitFor(id, 'match', { pattern: '^items +35%$', since_seq: r.next_seq });
  assert.equal(seen.wait_result, 'matched', brief(seen));
  const p1 = await call('read', { execution_id: id });
  assert.ok(p1.output === '' || p1.output === migrateFrame(70), JSON.stringify(p1.output));
  assert.ok((w1.output + p1.output).endsWith(migrateFrame(70)), JSON.stringify(w1.output + p1.output));
  const w2 = await call('write', { execution_id: id, input: '', newline: true, yield_ms: 0 });
  assert.equal(w2.isError, false, w2.error);
  const ended = await waitFor(id, 'exit', { tail_lines: 1 });
  assert.equal(ended.wait_result, 'exited', brief(ended));
  const p2 = await call('read', { execution_id: id });
  const rest = w2.output + p2.output;
  assert.equal(occurrences(rest, 'migrated 3 databases'), 1, JSON.stringify(rest));
  assert.equal(occurrences(rest, 'migrating 3 databases'), 0, JSON.stringify(rest));
  assert.match(rest, /users {3}100%\norders {3}75%\nitems {4}50%\nmigrated 3 databases\n[^\n]*[#$] $/, JSON.stringify(rest));
  if (w2.output === '') endsAtPrompt(p2.output, `${migrateFrame(100)}migrated 3 databases\n`);
  assert.deepEqual(await wholeLines(call, id), await screenLines(call, id));
});

// execute(session=, max_output_bytes=1024) of a 60-line log, a display and
// a summary, then read at the cursor as the hint says.
const loggedRun = (t) => once('logged', async () => {
  const id = await openSession(call, t);
  const r = await run(id, `python3 ${scripts.logged}`, { max_output_bytes: 1024 });
  const pages = [];
  for (let i = 0; i < 50; i++) {
    const page = await call('read', { execution_id: id, max_output_bytes: 1024 });
    assert.equal(page.isError, false, page.error);
    pages.push(page.output);
    if (page.next_seq >= page.latest_seq) break;
  }
  return { r, pages };
});

test('a capped execute(session=) of a log and a display: output_tail is the final frame and the summary; read at the cursor goes on to them, nothing doubled', async (t) => {
  const { r, pages } = await loggedRun(t);
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.capped, true, brief(r));
  assert.match(r.output, /^compiling unit 01 of 60\n/);
  assert.ok(r.output_tail.endsWith(loggedEnd), JSON.stringify(r.output_tail));
  assert.equal(occurrences(r.output_tail, '[+] Building'), 1, JSON.stringify(r.output_tail));
  assert.match(r.hint, /output_tail its last lines/, r.hint);
  // The pages go on where output stopped: each log line once in all.
  const all = r.output + pages.join('');
  for (let i = 1; i <= 60; i++) assert.equal(occurrences(all, `compiling unit ${String(i).padStart(2, '0')} of 60\n`), 1, `unit ${i}`);
  for (const page of pages.slice(0, -1)) assert.ok(page.endsWith('\n'), JSON.stringify(page.slice(-80)));
  endsAtPrompt(pages.at(-1).slice(pages.at(-1).indexOf(loggedEnd)), loggedEnd);
  assert.equal(occurrences(pages.join(''), 'Successfully built'), 1);
});

// The page that holds the final frame whole (the last one). agentty of
// session 46 cut the page before it inside the display, after the first
// line of the 0.4s frame, and the last page read the cut frame's rest
// above the final frame (" => [1/3] FROM docker.io/library/debian:12
// 0.4s\n[+] Building 3.0s (3/3) FINISHED\n..."): the step "[1/3] FROM"
// twice, at 0.4s and 1.0s, where the screen shows it once. A page now ends
// between two frames.
test('the page that holds the final frame reads no line of an older frame above it', async (t) => {
  const { pages } = await loggedRun(t);
  const last = pages.at(-1);
  endsAtPrompt(last, loggedEnd);
});

// Audit 54 asserts a local execute of this display answers uncapped with
// its final frame (the text is 5 lines: max_output_bytes caps the text, and
// a page under half the cap is read on, up to 8 MiB of bytes). In
// a session the same command answers capped: output "== sync start
// ==\nsyncing 207/2500\n  files 828\n  bytes 211968\n" (the first 15893 of
// 200 KB raw bytes) and output_tail the final frame and summary; with
// max_output_bytes=100000 still capped, output "== sync start ==\nsyncing
// 1215/2500\n" (35 bytes of text). read(since_seq=start_seq) of the same
// command is one uncapped page of 5 lines.
test('execute(session=) of a long display reads as its final frame, uncapped, as execute does', async (t) => {
  const id = await openSession(call, t);
  const r = await run(id, `python3 ${scripts.long}`);
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.output, longText, brief(r).slice(0, 1500));
  assert.equal(r.capped, false);
});

// A session at 120 columns runs the BuildKit display (59-column lines), and
// is then resized to 40 (write cols: a person's narrower window does the
// same). Its text from the command's start, read before the resize, is
// header, final frame, summary, prompt; read again after it, the same bytes
// read as every frame appended with lines missing:
// "#0 building with ...\n[+] Building 0.1s (1/5)\n[+] Building 0.2s (1/5)\n...
// [+] Building 0.5s (2/5)\n => [internal] load build definition from
// Dockerfile   0.5s\n => [1/4] FROM docker.io/library/debian:12   0.0s\n[+]
// Building 0.6s (2/5)\n..." (77 lines and the prompt, against 8: the frames
// from 0.1s to 0.4s lack their [internal] line, those from 1.0s to 1.4s
// their [1/4] and [2/4] lines). The rows of the past are counted at today's
// width: a 59-character line is 2 rows at 40 columns, so every move up lands
// inside a wrapped line. read(tail_lines=12) after a later command then
// starts with stale lines of the 2.4s frame.
test('a session resized narrower reads an earlier display as before the resize', async (t) => {
  const id = await openSession(call, t);
  const r = await run(id, `python3 ${scripts.buildkit}`);
  assert.equal(r.output, shownText(displays.buildkit));
  const before = await call('read', { execution_id: id, since_seq: r.start_seq });
  endsAtPrompt(before.output, shownText(displays.buildkit));
  const resized = await call('write', { execution_id: id, cols: 40 });
  assert.equal(resized.isError, false, resized.error);
  assert.equal(resized.cols, 40);
  const after = await call('read', { execution_id: id, since_seq: r.start_seq });
  assert.equal(after.output, before.output);
});

// ================================================================= prompts

// pip: a download display ends, "Would install ...", "Proceed (y/n)? ";
// the answer "y" (echoed) runs an install display and the summary.
test('a pip-like "Proceed (y/n)?" after a display in a session: the question with the final frame above it, then the install display\'s final frame, once', async (t) => {
  const id = await openSession(call, t);
  const r = await run(id, `python3 ${scripts.pip}`);
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.output, pipQuestion);
  endsAtPrompt(await writeToEnd(call, id, { input: 'y', newline: true }), pipRest);
  const whole = await wholeLines(call, id);
  assert.deepEqual(whole, await screenLines(call, id));
  assert.deepEqual(whole.slice(-pipScreen.length - 1, -1), pipScreen);
});

// ink: the question is the last line of the live display; the key (raw, no
// echo) redraws the frame with the answer. The write's answer starts inside
// the display, so the frame redrawn reads whole again: "scaffolding
// 100%\n  files 40\n✔ Install dependencies? Yes\n...", the frame the screen
// shows, its first two lines as the execute answer had them.
test('an ink-style question inside a live display in a session: each answer reads the frame the screen shows', async (t) => {
  const id = await openSession(call, t);
  const r = await run(id, `python3 ${scripts.ink}`);
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.output, inkQuestion);
  const rest = await writeToEnd(call, id, { input: 'y' });
  endsAtPrompt(rest, `${inkScreen.slice(1).join('\n')}\n`);
  const whole = await wholeLines(call, id);
  assert.deepEqual(whole, await screenLines(call, id));
  assert.deepEqual(whole.slice(-inkScreen.length - 1, -1), inkScreen);
});

// ================================================================ SSH host

test('execute(host=) of each display reads as header, final frame and summary, as the screen shows it', { skip }, async () => {
  for (const [name, d] of Object.entries(displays)) {
    const r = await runToEnd(remoteCall, { host: ssh.sshd.host, command: `python3 ${scripts[name]}` });
    assert.equal(r.output, shownText(d), name);
    assert.deepEqual(linesOf(r.output), await screenLines(remoteCall, r.execution_id), name);
  }
});

test('in a session on a host, each display reads as locally, and a paused one answers its frame, then the final frame', { skip }, async (t) => {
  const id = await openOnHost(t);
  for (const [name, d] of Object.entries(displays)) {
    const r = await remoteRun(id, `python3 ${scripts[name]}`);
    assert.equal(r.status, 'completed', `${name}: ${brief(r)}`);
    assert.equal(r.output, shownText(d), name);
  }
  const r = await remoteRun(id, `python3 ${scripts.deploy}`);
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.output, deployPaused);
  endsAtPrompt(await writeToEnd(remoteCall, id, { input: '', newline: true }), deployRest);
  assert.deepEqual(await wholeLines(remoteCall, id), await screenLines(remoteCall, id));
});

test('a pip-like "Proceed (y/n)?" in execute(host=): the question, then the install display\'s final frame, as the screen shows', { skip }, async (t) => {
  const r = await start(t, remoteCall, { host: ssh.sshd.host, command: `python3 ${scripts.pip}`, env: UTF8 });
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.output, pipQuestion);
  assert.equal(await writeToEnd(remoteCall, r.execution_id, { input: 'y', newline: true }), pipRest);
  assert.deepEqual(await wholeLines(remoteCall, r.execution_id), pipScreen);
  assert.deepEqual(await screenLines(remoteCall, r.execution_id), pipScreen);
});

// As locally (above): on a host the session's answer is capped, output
// "== sync start ==\nsyncing 207/2500\n  files 828\n  bytes 211968\n", while
// execute(host=) of the same command answers its 5 lines uncapped.
test('execute(session=) of a long display on a host reads as its final frame, uncapped, as execute(host=) does', {
  skip,
}, async (t) => {
  const plain = await runToEnd(remoteCall, { host: ssh.sshd.host, command: `python3 ${scripts.long}` });
  assert.equal(plain.output, longText);
  const id = await openOnHost(t);
  const r = await remoteRun(id, `python3 ${scripts.long}`);
  assert.equal(r.output, longText, brief(r).slice(0, 1500));
});

test('execute(host=) resized mid-display with write(cols, rows): the answer reads the final frame at the new width', { skip }, async (t) => {
  const r = await start(t, remoteCall, { host: ssh.sshd.host, command: `python3 ${scripts.fit}`, cols: 80, rows: 10 });
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.output, fitPaused);
  assert.equal(await writeToEnd(remoteCall, r.execution_id, { input: '', newline: true, cols: 40, rows: 8 }), fitRest(40));
  assert.deepEqual((await screenLines(remoteCall, r.execution_id)).slice(-5), linesOf(fitRest(40)));
});

// ================================================================== resize

test('execute with cols=60 rows=10: each display reads as the screen shows it, scrollback and rows', async () => {
  for (const [name, d] of Object.entries(displays)) {
    const r = await runToEnd(call, { argv: ['python3', scripts[name]], cols: 60, rows: 10 });
    assert.equal(r.output, shownText(d), name);
    assert.deepEqual(linesOf(r.output), await screenLines(call, r.execution_id), name);
  }
});

// 5 rows: the header and the first display line scroll away; the display
// (4 lines and the cursor's row) still fits, so the terminal shows it redrawn.
test('a 4-line display in a 5-row terminal (the terminal scrolls) reads as its final frame', async () => {
  const r = await runToEnd(call, { argv: ['python3', scripts.tall, '4'], cols: 60, rows: 5 });
  assert.deepEqual(linesOf(r.output), tallFinal(4));
  assert.deepEqual(await screenLines(call, r.execution_id), tallFinal(4));
});

// 6 lines in 5 rows: ESC[6A stops at the top row, so on the terminal each
// frame creeps: its first 2 lines scroll into the scrollback and the next
// frame's go under them. Screen (scrollback and rows, 33 lines): "start
// 6-line display", "line  1 frame  1", "line  2 frame  1", "line  1 frame
// 2", "line  2 frame  2", ... "line  1 frame 15" ... "line  6 frame 15",
// "end 6-line display". (agentty of session 46 read all 15 frames appended,
// 92 lines: its text view did not stop a move up at the top row.)
test('a 6-line display in a 5-row terminal reads as its final frame, or as the screen shows it', async () => {
  const r = await runToEnd(call, { argv: ['python3', scripts.tall, '6'], cols: 60, rows: 5 });
  const lines = linesOf(r.output);
  const screen = await screenLines(call, r.execution_id);
  assert.ok(isDeepStrictEqual(lines, tallFinal(6)) || isDeepStrictEqual(lines, screen),
    `${lines.length} lines: ${JSON.stringify(r.output.slice(0, 400))}`);
});

// 12 lines in 10 rows, log-update's erase (ESC[2K ESC[1A per line): the
// screen keeps 3 lines of each older frame in the scrollback ("task  1 step
// 1", "task  2 step  1", "task  3 step  1", "task  1 step  2", ...) and the
// final frame below. (agentty of session 46 read 2 of each, 42 lines.)
test('a 12-line log-update display in a 10-row terminal reads as its final frame, or as the screen shows it', async () => {
  const r = await runToEnd(call, { argv: ['python3', scripts.tallLog, '12'], cols: 60, rows: 10 });
  const lines = linesOf(r.output);
  const screen = await screenLines(call, r.execution_id);
  const final = ['start 12-task display', ...Array.from({ length: 12 }, (_, i) => `task ${String(i + 1).padStart(2)} step 15`),
    'end 12-task display'];
  assert.ok(isDeepStrictEqual(lines, final) || isDeepStrictEqual(lines, screen),
    `${lines.length} lines: ${JSON.stringify(r.output.slice(0, 400))}`);
});

// A resize while the display waits (write with cols/rows and the key): the
// program reads the new size and draws on.
const resizedRun = (t, cols, rows) => once(`fit:${cols}x${rows}`, async () => {
  const r = await start(t, call, { argv: ['python3', scripts.fit], cols: 80, rows: 10 });
  assert.equal(r.waiting_for_input, true, brief(r));
  const rest = await writeToEnd(call, r.execution_id, { input: '', newline: true, cols, rows });
  return { r, rest, whole: await wholeLines(call, r.execution_id), screen: await screenLines(call, r.execution_id) };
});

test('write(cols=60, rows=5) mid-display, the lines still fitting: the answers and the whole text read as the screen', async (t) => {
  const { r, rest, whole, screen } = await resizedRun(t, 60, 5);
  assert.equal(r.output, fitPaused);
  assert.equal(rest, fitRest(60));
  assert.deepEqual(whole, linesOf(`building 3 targets\n${fitRest(60)}`));
  assert.deepEqual(screen, whole);
});

test('write(cols=40) mid-display, narrower than the lines drawn: the write answer reads the final frame cut at the new width', async (t) => {
  const { r, rest, screen } = await resizedRun(t, 40, 10);
  assert.equal(r.output, fitPaused);
  assert.equal(rest, fitRest(40));
  assert.deepEqual(screen, linesOf(`building 3 targets\n${fitRest(40)}`));
});

// The same run read whole afterwards (the screen shows the header, the
// final frame, the summary): "building 3 targets\n[+] Building 0.0s (80
// cols)\n => compile                                     0%\n[+] Building
// 0.1s (80 cols)\n => compile      ...5%\n...[+] Building 1.0s (80 cols)\n =>
// compile                        #####       50%\n[+] Building 2.0s (40
// cols)\n => compile                        ####\n => link ...\n => package
// ...\nbuilt 3 targets\n": the 11 frames drawn at 80 columns appended, each
// without its "link" and "package" lines (their 51-character lines are
// counted as 2 rows at 40 columns, so each ESC[4A lands inside one). The
// same on a host.
test('write(cols=40) mid-display: the whole text read afterwards is the header, the final frame and the summary', async (t) => {
  const { whole, screen } = await resizedRun(t, 40, 10);
  assert.deepEqual(whole, screen);
});
