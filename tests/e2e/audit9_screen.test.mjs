// End-to-end regression tests from a ninth audit: an agent driving
// full-screen and interactive programs, judged against what a person sees in
// tmux at the same size (tmux runs the same program; its `capture-pane` and
// pane title are the reference).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { serverForFile, waiterFor, WAIT_MS, tempDirForRun } from './lib/mcp-client.mjs';
import { Tmux } from './lib/web-helpers.mjs';
import { vim } from './lib/programs.mjs';

const UTF8 = { LANG: 'C.UTF-8' };

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);

const waitFor = waiterFor(call);

// What tmux shows once `script` (bash) has run to its end in a cols x rows
// pane with the same TERM and `env`: rows (trailing blanks trimmed), cursor,
// and title ('' for tmux's default, the host name).
function tmuxScreenAfter(t, script, { cols = 80, rows = 24, env = {} } = {}) {
  const tmux = new Tmux();
  t.after(() => { tmux.kill(); rmSync(tmux.dir, { recursive: true, force: true }); });
  const vars = Object.entries({ TERM: 'xterm-256color', ...env }).map(([k, v]) => `${k}=${v}`);
  const tmuxCall = `tmux -S '${tmux.socket}' -f /dev/null wait-for`;
  tmux.run('new-session', '-d', '-s', 'main', '-x', String(cols), '-y', String(rows), 'env', ...vars,
    'bash', '-c', `${tmuxCall} go; ${script}; ${tmuxCall} -S done; exec sleep 600`);
  // The size without a status line is set before the program starts.
  tmux.run('set', '-t', 'main', 'status', 'off');
  tmux.run('resize-window', '-t', 'main', '-x', String(cols), '-y', String(rows));
  tmux.run('wait-for', '-S', 'go');
  tmux.run('wait-for', 'done');
  const lines = tmux.run('capture-pane', '-p', '-t', 'main').split('\n').slice(0, rows)
    .map((line) => line.replace(/ +$/, ''));
  while (lines.length < rows) lines.push('');
  const [col, row, title] = tmux.run('display', '-p', '-t', 'main',
    '#{cursor_x}\t#{cursor_y}\t#{pane_title}').replace(/\n$/, '').split('\t');
  return { lines, cursor: { row: Number(row), col: Number(col) }, title: title === hostname() ? '' : title };
}

// agentty's screen once `script` has ended, run the same way.
async function agenttyScreenAfter(t, script, { cols = 80, rows = 24, env = {} } = {}) {
  const r = await start(t, { argv: ['bash', '-c', script], cols, rows, env, yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  const screen = await call('screen', { execution_id: r.execution_id });
  assert.equal(screen.isError, false, screen.error);
  return { lines: screen.lines, cursor: { row: screen.cursor.row, col: screen.cursor.col }, title: screen.title };
}

test('emoji newer than libvterm\'s table (🟢 🥲 🧑) take two columns, as in tmux', async (t) => {
  // A status line with a coloured circle, text placed by column after an
  // emoji, a row of emoji that wraps, and one that cannot split at the edge.
  const script = String.raw`printf '\U1F7E2 ok  |\U1F972 Y|\U1F9D1 Z\n'; ` +
    String.raw`printf '\U1F7E2\e[6GQ\n'; for i in $(seq 45); do printf '\U1F9D1'; done; echo; ` +
    String.raw`printf '%79s\U1F7E2\n' '' ; printf '\e]2;\U1F7E2 build\a\U1F9D1 $ '`;
  const ours = await agenttyScreenAfter(t, script, { env: UTF8 });
  const theirs = tmuxScreenAfter(t, script, { env: UTF8 });
  assert.deepEqual(ours, theirs);
  assert.equal(ours.lines[1], '🟢   Q', 'Q is at column 6, where the program put it');
  assert.deepEqual(ours.cursor, { row: 6, col: 5 });
  assert.equal(ours.title, '🟢 build');
});

test('a title saved with CSI 22 t comes back with CSI 23 t, as in tmux (vim on exit)', async (t) => {
  const script = String.raw`printf '\e]2;shell title\a\e[22;2t\e]2;f.txt - VIM\a\e]2;Thanks for flying Vim\a\e[23;2t'`;
  const ours = await agenttyScreenAfter(t, script);
  const theirs = tmuxScreenAfter(t, script);
  assert.equal(ours.title, 'shell title');
  assert.deepEqual(ours, theirs);
});

test('vim with its title set: while it runs the title is vim\'s; after :q! the one before vim', async (t) => {
  const dir = tempDirForRun('agentty-audit9-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'notes.txt');
  writeFileSync(file, 'first line\n');
  const r = await start(t, {
    argv: ['bash', '-c', String.raw`printf '\e]2;before vim\a'; "$1" -u NONE -n -c 'set title' "$0"`, file, vim],
    cols: 80, rows: 24, yield_ms: 300,
  });
  const id = r.execution_id;
  assert.equal((await waitFor(id, 'match', { pattern: 'notes\\.txt', since_seq: 1 })).wait_result, 'matched');
  await waitFor(id, 'input');
  const running = await call('screen', { execution_id: id });
  assert.equal(running.alt_screen, true);
  assert.match(running.title, /notes\.txt.*VIM/);

  await call('write', { execution_id: id, input: ':q!', newline: true });
  assert.equal((await waitFor(id, 'exit')).wait_result, 'exited');
  const after = await call('screen', { execution_id: id });
  assert.equal(after.alt_screen, false);
  assert.equal(after.title, 'before vim');
});

// A curses menu that marks the selected item by reverse video alone, as
// whiptail, mc and many prompts do: the text cannot tell which one it is.
const menuProgram = [
  'import curses',
  'def main(s):',
  '    curses.curs_set(0)',
  '    curses.use_default_colors()',
  '    items, sel = ["apple", "banana", "cherry"], 0',
  '    while True:',
  '        s.erase()',
  '        s.addstr(0, 0, "Pick a fruit:", curses.A_BOLD)',
  '        for i, item in enumerate(items):',
  '            s.addstr(2 + i, 2, item, curses.A_REVERSE if i == sel else curses.A_NORMAL)',
  '        s.refresh()',
  '        key = s.getch()',
  '        if key == ord("j"): sel = (sel + 1) % len(items)',
  '        elif key == ord("q"): return',
  'curses.wrapper(main)',
].join('\n');

test('screen(attributes: true): styled_lines show the menu item drawn in reverse video', async (t) => {
  const r = await start(t, { argv: ['python3', '-c', menuProgram], cols: 40, rows: 10, yield_ms: 300 });
  const id = r.execution_id;
  assert.equal((await waitFor(id, 'match', { pattern: 'cherry', since_seq: 1 })).wait_result, 'matched');
  await waitFor(id, 'input');
  const first = await call('screen', { execution_id: id, attributes: true });
  assert.equal(first.isError, false, first.error);
  assert.deepEqual(first.lines.slice(0, 5), ['Pick a fruit:', '', '  apple', '  banana', '  cherry']);
  assert.equal(first.styled_lines.length, 10);
  assert.deepEqual(first.styled_lines.slice(0, 5), [
    '\x1b[0;1mPick a fruit:\x1b[0m', '', '  \x1b[0;7mapple\x1b[0m', '  banana', '  cherry']);

  await call('write', { execution_id: id, input: 'j' });
  await waitFor(id, 'input');
  const moved = await call('screen', { execution_id: id, attributes: true });
  assert.deepEqual(moved.styled_lines.slice(2, 5), ['  apple', '  \x1b[0;7mbanana\x1b[0m', '  cherry']);
  const plain = await call('screen', { execution_id: id });
  assert.equal(plain.styled_lines, undefined, 'only when asked for');
  await call('write', { execution_id: id, input: 'q' });
  assert.equal((await waitFor(id, 'exit')).wait_result, 'exited');
});
