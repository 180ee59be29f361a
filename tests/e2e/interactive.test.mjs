// End-to-end: driving interactive programs with the official MCP SDK client
// against the real binary: a REPL, a password prompt, control keys,
// full-screen programs (less, vim), a terminal query answered without a
// viewer, and the terminal size (given at start, and changed by a holder).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startAgentty, agenttyBin, tempDirForRun } from './lib/mcp-client.mjs';
import { Tmux, eventually } from './lib/web-helpers.mjs';
import { findProgram, vim, winchReporter } from './lib/programs.mjs';

// Generous: the suite runs on a loaded 2-core machine.
const WAIT_MS = 30000;

let agent;
before(async () => {
  agent = await startAgentty();
});
after(async () => {
  await agent?.client.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const call = (name, args) => agent.call(name, args);
const dataDir = tempDirForRun('agentty-interactive-');

// Starts a command and kills it after the test whatever happens.
const start = (t, args) => agent.startCommand(t, args);

async function waitFor(id, until, extra = {}) {
  const w = await call('wait', { execution_id: id, until, timeout_ms: WAIT_MS, ...extra });
  assert.equal(w.isError, false, w.error);
  return w;
}

async function waitForInput(id) {
  const w = await waitFor(id, 'input');
  assert.equal(w.wait_result, 'waiting_for_input', JSON.stringify(w));
  assert.equal(w.waiting_for_input, true);
  return w;
}

async function waitForExit(id) {
  const w = await waitFor(id, 'exit');
  assert.equal(w.wait_result, 'exited', JSON.stringify(w));
  return w;
}

test('python3 -i: an answer at the prompt; waiting_for_input is false while it sleeps, true after', async (t) => {
  const py = (await start(t, { argv: ['python3', '-i', '-q'], yield_ms: 300 })).execution_id;
  await waitForInput(py);
  const answer = await call('write', { execution_id: py, input: '6*7', newline: true });
  const prompt = await waitForInput(py);  // back at the prompt
  assert.match(answer.output + prompt.output, /^42$/m);

  // The markers are built at run time so the echoed line never contains them.
  const sent = Date.now();
  const during = await call('write', {
    execution_id: py,
    input: 'import time; print("sl" + "eeping"); time.sleep(4); print("aw" + "ake")',
    newline: true,
    yield_ms: 500,
  });
  assert.ok(!during.output.includes('awake'), 'the response was taken during the sleep');
  assert.equal(during.waiting_for_input, false, 'sleeping is not waiting for input');
  const back = await waitForInput(py);
  assert.match(during.output + back.output, /^sleeping$[\s\S]*^awake$/m);
  assert.ok(Date.now() - sent >= 3900, 'until=input returned only after the sleep');

  const end = await call('write', { execution_id: py, eof: true });
  assert.equal(end.ok, true);
  const exited = await waitForExit(py);
  assert.equal(exited.exit_code, 0);
});

test('write waits past the echo for the reply of a line that computes first', async (t) => {
  const py = (await start(t, { argv: ['python3', '-i', '-q'], yield_ms: 300 })).execution_id;
  await waitForInput(py);
  // The echo comes at once, then nothing for 0.6 s: the reply is the line
  // printed after it and the prompt, in the same answer.
  const answer = await call('write', {
    execution_id: py,
    input: 'import time; time.sleep(0.6); print("do" + "ne")',
    newline: true,
    yield_ms: WAIT_MS,
  });
  assert.match(answer.output, /^done\n>>> $/m, JSON.stringify(answer));
  assert.equal(answer.waiting_for_input, true);
  const quick = await call('write', { execution_id: py, input: 'print(6*7)', newline: true, yield_ms: WAIT_MS });
  assert.match(quick.output, /^42\n>>> $/m);
});

test('write to a program that reads a line silently answers when it waits again, not at yield_ms', async (t) => {
  const sink = (await start(t, { command: 'cat >/dev/null', yield_ms: 300 })).execution_id;
  await waitForInput(sink);
  const sent = Date.now();
  const answer = await call('write', { execution_id: sink, input: 'swallowed', newline: true, yield_ms: 20000 });
  assert.equal(answer.output, 'swallowed\n');  // the echo alone
  assert.equal(answer.waiting_for_input, true);
  assert.ok(Date.now() - sent < 10000, `answered after ${Date.now() - sent} ms, not at the echo's quiet`);
});

// getpass, sudo and ssh read the password from /dev/tty, not from fd 0.
for (const [where, redirect] of [['stdin', ''], ['/dev/tty', ' </dev/tty']]) {
  test(`a read -s password prompt on ${where} waits for input and the password is never shown`, async (t) => {
    const secret = 'hunter2-Zq9x';
    const id = (await start(t, {
      argv: ['bash', '-c', `read -s -p "Password: " pw${redirect}; echo; echo got=\${#pw}`],
      yield_ms: 300,
    })).execution_id;
    await waitForInput(id);
    const prompt = await call('screen', { execution_id: id });
    assert.equal(prompt.lines[0], 'Password:');

    const w = await call('write', { execution_id: id, input: secret, newline: true });
    assert.equal(w.ok, true);
    const done = await waitForExit(id);
    assert.equal(done.exit_code, 0);
    const text = await call('read', { execution_id: id, since_seq: 1 });
    assert.equal(text.output, `Password: \ngot=${secret.length}\n`);
    const raw = await call('read', { execution_id: id, since_seq: 1, format: 'raw' });
    assert.ok(!raw.output.includes(secret), 'not in the raw bytes');
    const screen = await call('screen', { execution_id: id });
    assert.ok(!screen.lines.join('\n').includes(secret), 'not on the screen');
  });
}

test('ctrl-c interrupts sleep 100 under bash -c; the rest of the command never runs', async (t) => {
  const r = await start(t, { argv: ['bash', '-c', 'echo ready; sleep 100; echo not-reached'], yield_ms: 300 });
  assert.equal(r.status, 'backgrounded');
  const ready = await waitFor(r.execution_id, 'match', { pattern: 'ready', since_seq: 1 });
  assert.equal(ready.wait_result, 'matched');
  const sent = Date.now();
  await call('write', { execution_id: r.execution_id, keys: ['ctrl-c'] });
  const w = await waitForExit(r.execution_id);
  assert.ok(Date.now() - sent < WAIT_MS);
  assert.equal(w.status, 'completed');  // ended by the key, not by stop
  assert.equal(w.signal, 'SIGINT', JSON.stringify(w));
  const all = await call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.ok(!all.output.includes('not-reached'), all.output);
});

test('ctrl-d (the key, or eof after a line) ends cat with exit code 0', async (t) => {
  const key = (await start(t, { argv: ['cat'], yield_ms: 100 })).execution_id;
  await waitForInput(key);
  await call('write', { execution_id: key, keys: ['ctrl-d'] });
  const byKey = await waitForExit(key);
  assert.equal(byKey.status, 'completed');
  assert.equal(byKey.exit_code, 0);

  const eof = (await start(t, { argv: ['cat'], yield_ms: 100 })).execution_id;
  await waitForInput(eof);
  await call('write', { execution_id: eof, input: 'last line', newline: true, eof: true });
  const byEof = await waitForExit(eof);
  assert.equal(byEof.exit_code, 0);
  const all = await call('read', { execution_id: eof, since_seq: 1 });
  assert.equal(all.output, 'last line\nlast line\n');  // the echo, then cat's copy
});

test('ctrl-z with no shell to continue the program: suspended, write(action=resume) continues it', async (t) => {
  const r = await start(t, { argv: ['python3', '-c', 'print("got", input("name? "))'], yield_ms: 100 });
  const id = r.execution_id;
  await waitForInput(id);
  await call('write', { execution_id: id, keys: ['ctrl-z'] });
  const stopped = await eventually(async () => {
    const read = await call('read', { execution_id: id });
    return read.suspended ? read : undefined;
  }, { timeout: WAIT_MS, what: 'suspended=true' });
  assert.equal(stopped.status, 'running');
  assert.equal(stopped.waiting_for_input, false);
  assert.match(stopped.message, /action="resume"/);
  const listed = (await call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(listed.suspended, true, JSON.stringify(listed));

  const resumed = await call('write', { execution_id: id, action: 'resume' });
  assert.equal(resumed.isError, false, resumed.error);
  assert.equal(resumed.ok, true);
  assert.equal(resumed.suspended, undefined, JSON.stringify(resumed));
  await waitForInput(id);
  await call('write', { execution_id: id, input: 'ada', newline: true });
  const exited = await waitForExit(id);
  assert.equal(exited.exit_code, 0);
  assert.match((await call('read', { execution_id: id, since_seq: 1 })).output, /got ada/);

  const again = await call('write', { execution_id: id, action: 'resume' });
  assert.equal(again.isError, true);
  assert.match(again.error, /ended/);
});

test('write(action=resume) on a program that is not stopped is refused and sends nothing', async (t) => {
  const r = await start(t, { argv: ['cat'], yield_ms: 100 });
  await waitForInput(r.execution_id);
  const w = await call('write', { execution_id: r.execution_id, action: 'resume' });
  assert.equal(w.isError, true);
  assert.match(w.error, /not stopped/);
  const mixed = await call('write', { execution_id: r.execution_id, action: 'resume', input: 'x' });
  assert.equal(mixed.isError, true);
  assert.match(mixed.error, /^action:/);
});

// Runs `script` between two markers on a 80x24 terminal, waits until it has
// drawn `drawn` and reads keys, and returns the execution id.
async function startFullScreen(t, script, args, drawn) {
  const r = await start(t, {
    argv: ['bash', '-c', `echo before-it; ${script}; echo after-it`, ...args],
    cols: 80, rows: 24, yield_ms: 300,
    env: { LESS: '', LESSOPEN: '', LESSCLOSE: '' },  // no -X/-F from the caller's settings
  });
  assert.equal(r.status, 'backgrounded');
  const shown = await waitFor(r.execution_id, 'match', { pattern: drawn, since_seq: 1 });
  assert.equal(shown.wait_result, 'matched');
  await waitForInput(r.execution_id);
  return r.execution_id;
}

async function assertBackOnMainScreen(id) {
  const exited = await waitForExit(id);
  assert.equal(exited.exit_code, 0);
  const screen = await call('screen', { execution_id: id });
  assert.equal(screen.alt_screen, false);
  assert.deepEqual(screen.lines.filter((l) => l !== ''), ['before-it', 'after-it']);
}

test('less: alt_screen with the file on the visible rows; q brings the main screen back', async (t) => {
  if (!findProgram('less')) return t.skip('less is not installed (scripts/install-deps installs it)');
  const file = path.join(dataDir, 'rows.txt');
  const rows = Array.from({ length: 300 }, (_, i) => `row-${String(i + 1).padStart(3, '0')}`);
  writeFileSync(file, rows.join('\n') + '\n');
  const id = await startFullScreen(t, 'less "$0"', [file], 'row-023');
  const screen = await call('screen', { execution_id: id });
  assert.equal(screen.alt_screen, true);
  assert.deepEqual([screen.cols, screen.rows], [80, 24]);
  assert.deepEqual(screen.lines.slice(0, 23), rows.slice(0, 23));
  assert.ok(!screen.lines.includes('before-it'));

  await call('write', { execution_id: id, input: 'q' });
  await assertBackOnMainScreen(id);
});

test('vim -u NONE: alt_screen with the file on the visible rows; :q! brings the main screen back', async (t) => {
  if (!vim) return t.skip('vim is not installed (scripts/install-deps installs vim-tiny)');
  const file = path.join(dataDir, 'words.txt');
  writeFileSync(file, 'alpha\nbeta\ngamma\n');
  const id = await startFullScreen(t, '"$0" -u NONE "$1"', [vim, file], 'gamma');
  const screen = await call('screen', { execution_id: id });
  assert.equal(screen.alt_screen, true);
  assert.deepEqual(screen.lines.slice(0, 4), ['alpha', 'beta', 'gamma', '~']);
  assert.match(screen.lines[23], /words\.txt/);
  assert.ok(!screen.lines.includes('before-it'));

  await call('write', { execution_id: id, input: ':q!', newline: true });
  await assertBackOnMainScreen(id);
});

test('write(paste): bash takes a pasted block whole and runs it only at Enter', async (t) => {
  const r = await start(t, { command: 'bash --norc --noprofile -i', yield_ms: 300 });
  await waitForInput(r.execution_id);
  const id = r.execution_id;
  const pasted = await call('write', { execution_id: id, input: 'echo A$((1))\necho B$((2))\n', paste: true });
  assert.equal(pasted.isError, false, pasted.error);
  assert.equal(pasted.bracketed_paste, true, JSON.stringify(pasted));
  // Typed, each line would have run at its newline; pasted, both wait for Enter.
  assert.doesNotMatch(pasted.output, /^A1\r?$/m, JSON.stringify(pasted));
  const ran = await call('write', { execution_id: id, keys: ['enter'] });
  await waitFor(id, 'match', { pattern: '^B2', since_seq: ran.next_seq - ran.output.length });
  const text = (await call('read', { execution_id: id, since_seq: 1 })).output;
  assert.match(text, /^A1\r?\nB2\r?$/m, text);
});

test('write(paste): vim with autoindent keeps pasted indentation as it was', async (t) => {
  if (!vim) return t.skip('vim is not installed (scripts/install-deps installs vim-tiny)');
  const file = path.join(dataDir, 'pasted.py');
  const id = await startFullScreen(t, '"$0" -u NONE -N -c "set autoindent" "$1"', [vim, file], '~');
  await call('write', { execution_id: id, input: 'i' });
  const pasted = await call('write', { execution_id: id, input: 'if x:\r\n    y\n    z\n', paste: true });
  assert.equal(pasted.bracketed_paste, true, JSON.stringify(pasted));
  await call('write', { execution_id: id, keys: ['esc'], input: '' });
  await call('write', { execution_id: id, input: ':wq', newline: true });
  await waitForExit(id);
  // Typed with autoindent, z would sit 8 columns in.
  assert.equal(readFileSync(file, 'utf8'), 'if x:\n    y\n    z\n\n');
});

test('write(paste) to a program without bracketed paste types CR line ends; a paste end marker is refused', async (t) => {
  const r = await start(t, { command: 'cat', yield_ms: 300 });
  await waitForInput(r.execution_id);
  const id = r.execution_id;
  const refused = await call('write', { execution_id: id, input: 'a\u001b[201~b', paste: true });
  assert.equal(refused.isError, true);
  assert.match(refused.error, /input: .*ESC\[201~.*without paste: true/);
  const pasted = await call('write', { execution_id: id, input: 'one\r\ntwo\n', paste: true });
  assert.equal(pasted.bracketed_paste, false, JSON.stringify(pasted));
  await call('write', { execution_id: id, eof: true });
  await waitForExit(id);
  // Each line echoed as typed and printed by cat (in either order): CRLF
  // became one line end, so no empty line.
  const text = (await call('read', { execution_id: id, since_seq: 1 })).output;
  assert.deepEqual(text.replace(/\r/g, '').split('\n').sort(), ['', 'one', 'one', 'two', 'two']);
});

test('a cursor position query (DSR 6n) is answered without a viewer', async (t) => {
  const script = `printf 'abc\\033[6n'; IFS= read -rsdR pos; echo; echo "row-col \${pos#*[}"`;
  const r = await start(t, { argv: ['bash', '-c', script], yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed');
  assert.equal(r.exit_code, 0);
  // The cursor stood after "abc" on the first row.
  assert.match(r.output, /^row-col 1;4$/m);
});

test('execute and open with cols/rows: the program sees that size', async (t) => {
  const r = await start(t, { argv: ['stty', 'size'], cols: 132, rows: 43 });
  assert.equal(r.status, 'completed');
  assert.equal(r.output, '43 132\n');
  const screen = await call('screen', { execution_id: r.execution_id });
  assert.deepEqual([screen.cols, screen.rows], [132, 43]);

  // A HOME without rc files: the test does not depend on (or wait for) the user's.
  const opened = await call('open', { shell: 'bash', cols: 101, rows: 37, env: { HOME: dataDir } });
  assert.equal(opened.isError, false, opened.error);
  t.after(() => call('close', { execution_id: opened.execution_id }));
  const size = await call('execute', { session: opened.execution_id, command: 'stty size', side_effects: ['NONE'] });
  assert.equal(size.exit_code, 0);
  assert.equal(size.output, '37 101\n');
});

// A holder's terminal resizes too (the agent's own resize, write(cols/rows),
// is in resize.test.mjs): `agentty attach` in tmux takes over with the pane's size.
test('a holder resizing its terminal reaches the program (SIGWINCH), release restores the agent size', async (t) => {
  if (!findProgram('tmux')) return t.skip('tmux is not installed (scripts/install-deps installs it)');
  const r = await start(t, { argv: ['python3', '-c', winchReporter], cols: 100, rows: 29, yield_ms: 300 });
  const id = r.execution_id;
  const ready = await waitFor(id, 'match', { pattern: 'ready\\n', since_seq: 1 });
  assert.equal(ready.wait_result, 'matched');
  const tmux = new Tmux();
  t.after(() => tmux.kill());
  const expectWinch = async (size) => {
    const w = await waitFor(id, 'match', { pattern: `winch ${size}\\n` });
    assert.equal(w.wait_result, 'matched', `the program saw ${size}: ${JSON.stringify(w)}`);
  };

  tmux.run('new-session', '-d', '-s', 'main', '-x', '90', '-y', '25', `${agenttyBin} attach '${r.terminal_url}'; sleep 600`);
  // No event tells when attach is connected: poll its pane (tmux is another process).
  await eventually(() => tmux.capture('main').includes('Ctrl-] t: take over'), { timeout: WAIT_MS, what: 'attach to connect' });
  tmux.run('send-keys', '-t', 'main', 'C-]', 't');
  await expectWinch('25x90');
  tmux.run('resize-window', '-t', 'main', '-x', '70', '-y', '20');
  await expectWinch('20x70');
  tmux.run('send-keys', '-t', 'main', 'C-]', 'd');
  await expectWinch('29x100');
  const screen = await call('screen', { execution_id: id });
  assert.deepEqual([screen.cols, screen.rows], [100, 29]);
});
