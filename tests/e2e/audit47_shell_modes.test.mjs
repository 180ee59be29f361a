// Audit 47: two leftovers of audit 44. zsh's screen drew the next prompt
// over output left without a final newline (the hook turned PROMPT_SP off);
// and a line editor in vi mode left in command mode (a person pressed Esc,
// or write keys ["esc"]) read execute's ctrl-u and typed line as vi
// commands. Each test names what was wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WAIT_MS, installed, serverForFile, tempDirForRun } from './lib/mcp-client.mjs';

const server = serverForFile();
const call = (name, args) => server.call(name, args);
const noZsh = !installed('zsh') && 'zsh is not installed (scripts/install-deps installs it)';
// The sessions' HOME: an empty .zshrc (no new-user wizard), nothing of the machine's user.
const home = tempDirForRun('agentty-audit47-home-');
writeFileSync(path.join(home, '.zshrc'), '');

const brief = (r) => JSON.stringify({ ...r, raw: undefined });

async function openShell(t, shell) {
  const opened = await call('open', { shell, env: { HOME: home }, cols: 80, rows: 24 });
  assert.equal(opened.prompt_ready, true, brief(opened));
  t.after(() => call('close', { execution_id: opened.execution_id }));
  return opened.execution_id;
}

async function execute(session, command) {
  const r = await call('execute', { session, command, side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed', brief(r));
  return r;
}

const write = (id, args) => call('write', { execution_id: id, yield_ms: 10000, ...args });
const screen = (id) => call('screen', { execution_id: id, attributes: true });

// The screen's rows from the one that shows `text` on: zsh's PROMPT_EOL_MARK
// (a reverse-video % or #) after it, then the prompt on the next row.
async function rowsFrom(session, text) {
  const s = await screen(session);
  const at = s.lines.findLastIndex((line) => line.startsWith(text));
  assert.notEqual(at, -1, JSON.stringify(s.lines));
  return { lines: s.lines.slice(at), styled: s.styled_lines[at], cursor: s.cursor, at };
}

test('zsh: output without a final newline keeps its line on the screen, as zsh shows it', { skip: noZsh }, async (t) => {
  const session = await openShell(t, 'zsh');
  const r = await execute(session, 'printf nonl-47');
  assert.equal(r.output, 'nonl-47', brief(r));
  let rows = await rowsFrom(session, 'nonl-47');
  assert.match(rows.lines[0], /^nonl-47[%#]$/, JSON.stringify(rows.lines));
  assert.match(rows.styled, /\x1b\[[0-9;]*7[0-9;]*m[%#]/, 'the mark is in reverse video');
  assert.match(rows.lines[1], /^\S+[%#]$/, JSON.stringify(rows.lines));
  assert.equal(rows.cursor.row, rows.at + 1, 'the prompt is on the next row');
  // Output ending with a newline: no mark, no blank row.
  await execute(session, 'echo whole-47');
  rows = await rowsFrom(session, 'whole-47');
  assert.equal(rows.lines[0], 'whole-47');
  assert.match(rows.lines[1], /^\S+[%#]$/, JSON.stringify(rows.lines));

  // A resize: the filler follows $COLUMNS (a stale width wraps it onto a
  // second row and leaves a blank one above the prompt).
  const resized = await write(session, { cols: 37 });
  assert.equal(resized.cols, 37, brief(resized));
  await execute(session, 'printf narrow-47');
  rows = await rowsFrom(session, 'narrow-47');
  assert.match(rows.lines[0], /^narrow-47[%#]$/, JSON.stringify(rows.lines));
  assert.match(rows.lines[1], /^\S+[%#]$/, JSON.stringify(rows.lines));

  // A prompt of two lines, and a PROMPT_EOL_MARK of the user's.
  await execute(session, "PS1=$'top-47\\n%# '; PROMPT_EOL_MARK='<eol>'");
  await execute(session, 'printf two-47');
  rows = await rowsFrom(session, 'two-47');
  assert.deepEqual(rows.lines.slice(0, 3), ['two-47<eol>', 'top-47', rows.lines[2]]);
  assert.match(rows.lines[2], /^[%#]$/, JSON.stringify(rows.lines));

  // The filler is in no answer and not in the session's text.
  const syntax = await execute(session, 'fi');
  assert.equal(syntax.output, "zsh: parse error near `fi'\n", brief(syntax));
  const all = await call('read', { execution_id: session, since_seq: 1 });
  for (const text of ['nonl-47', 'narrow-47', 'two-47']) assert.match(all.output, new RegExp(`^${text}$`, 'm'), all.output);
  assert.doesNotMatch(all.output, /[%#] {8}| {8}$/m, all.output);
});

test('zsh: with PROMPT_SP off, as in a terminal, the prompt is drawn over such output; the text keeps it', { skip: noZsh }, async (t) => {
  const rcHome = tempDirForRun('agentty-audit47-nosp-');
  writeFileSync(path.join(rcHome, '.zshrc'), 'unsetopt prompt_sp\n');
  const opened = await call('open', { shell: 'zsh', env: { HOME: rcHome } });
  t.after(() => call('close', { execution_id: opened.execution_id }));
  const session = opened.execution_id;
  const r = await execute(session, 'printf gone-47');
  assert.equal(r.output, 'gone-47', brief(r));
  const s = await screen(session);
  assert.ok(!s.lines.some((line) => line.startsWith('gone-47')), JSON.stringify(s.lines));
  const all = await call('read', { execution_id: session, since_seq: 1 });
  assert.match(all.output, /^gone-47$/m, all.output);
});

// Types `text` at the prompt, then Esc. write answers before the line
// editor acts on a lone Esc (readline waits keyseq-timeout, zle KEYTIMEOUT,
// for a longer sequence): with `settled`, wait until it has moved the cursor
// back over the last character, as vi's command mode does.
async function leaveInCommandMode(session, text, settled = true) {
  await write(session, { input: text });
  const before = (await screen(session)).cursor;
  const left = await write(session, { keys: ['esc'] });
  assert.equal(left.isError, false, brief(left));
  if (!settled) return;
  const deadline = Date.now() + WAIT_MS;
  for (let cursor = before; cursor.col !== before.col - 1; cursor = (await screen(session)).cursor) {
    assert.ok(Date.now() < deadline, `vi command mode: the cursor stays at ${JSON.stringify(cursor)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const [shell, viMode, emacsMode] of [['bash', 'set -o vi', 'set -o emacs'], ['zsh', 'bindkey -v', 'bindkey -e']]) {
  test(`${shell}: ${viMode}, the line left in vi command mode: execute runs exactly its line`, { skip: shell === 'zsh' && noZsh }, async (t) => {
    const session = await openShell(t, shell);
    await execute(session, viMode);
    await leaveInCommandMode(session, 'echo typed-junk');
    const r = await execute(session, 'echo "ran-$((6*7))"; (exit 3)');
    assert.equal(r.output, 'ran-42\n', brief(r));
    assert.equal(r.exit_code, 3, brief(r));
    // Esc just sent, not yet taken as one (an agent's write then execute).
    await leaveInCommandMode(session, 'echo typed-junk', false);
    assert.equal((await execute(session, 'echo at-once')).output, 'at-once\n');
    // In insert mode (nothing pressed) with text typed, and on an empty line.
    await write(session, { input: 'more junk' });
    assert.equal((await execute(session, 'echo insert-ok')).output, 'insert-ok\n');
    assert.equal((await execute(session, 'echo empty-ok')).output, 'empty-ok\n');
    // flush drops the line in command mode too (ctrl-c at the prompt): nothing of it ran.
    await leaveInCommandMode(session, 'echo flushed-47');
    const flushed = await write(session, { action: 'flush' });
    assert.equal(flushed.isError, false, brief(flushed));
    assert.equal(flushed.prompt_ready, true, brief(flushed));
    const after = await execute(session, 'echo after-flush');
    assert.equal(after.output, 'after-flush\n', brief(after));
    const all = await call('read', { execution_id: session, since_seq: 1 });
    assert.doesNotMatch(all.output, /^(typed-junk|flushed-47)$/m, all.output);
    // Back to emacs mode (zsh reads its keymap again after a bindkey line):
    // ctrl-u again, since Esc S there is meta-S (zsh: spell-word).
    await execute(session, emacsMode);
    await write(session, { input: 'echo left-over' });
    const emacs = await execute(session, 'echo emacs-again');
    assert.equal(emacs.output, 'emacs-again\n', brief(emacs));
  });
}

// Most users' mode: ctrl-u erases the line as before (ESC would be meta there).
for (const shell of ['bash', 'zsh']) {
  test(`${shell}: emacs mode: a typed line is still erased before execute's`, { skip: shell === 'zsh' && noZsh }, async (t) => {
    const session = await openShell(t, shell);
    await write(session, { input: 'echo left-over' });
    const r = await execute(session, 'echo emacs-ok');
    assert.equal(r.output, 'emacs-ok\n', brief(r));
    assert.equal(r.exit_code, 0, brief(r));
  });
}
