// End-to-end regression tests from the seventeenth audit: the text view an
// agent reads (`output` of execute/read/wait) against what a terminal shows
// for the same bytes. Programs move the cursor along the line (CSI D, CSI G,
// readline's redraws), redraw progress bars, and move to other rows; the
// view must read as the terminal does, the same in small pages as in one,
// and wait(pattern) must match what the agent then reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, serverForFile, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';

const UTF8 = { LANG: 'C.UTF-8' };

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);
const waitFor = waiterFor(call);

async function outputOf(t, script) {
  const r = await start(t, { argv: ['bash', '-c', script], env: UTF8, yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  return r;
}

test('cursor left, column moves and character edits read as the terminal shows them', async (t) => {
  const r = await outputOf(t, String.raw`printf 'abc\033[2Dz\n'; ` +
    String.raw`printf 'step 1/3\033[1Gstep 2/3\033[1G\033[0Kdone\n'; ` +       // npm-style CHA + EL
    String.raw`printf 'abcdef\033[3G\033[2Pxy\n'; ` +                            // DCH
    String.raw`printf 'a\xe4\xb8\xad\b\b\033[K|\n'`);                            // BS over a wide char
  assert.equal(r.output, 'azc\ndone\nabxy\na|\n');
});

test('a redraw on another row (cursor up/down) rewrites that row as the screen does, never gluing it on', async (t) => {
  // tqdm-style nested bars: the inner bar's row, up to the outer's, back
  // down (the text view's live area; before session 46 this read as both
  // frames, "outer 1/2\n inner 50%\nouter 2/2\n inner 100%\n").
  const r = await outputOf(t, String.raw`printf 'outer 1/2\n inner 50%%\033[A\router 2/2\033[B\r inner 100%%\n'`);
  assert.equal(r.output, 'outer 2/2\n inner 100%\n');
  // apt's progress line: save, bottom row, draw, restore. The output
  // starts at the top left of the 24-row terminal, so it reads as the
  // screen shows it: the log, the blank rows, the status on the last row
  // (session 46 read the status between the log lines).
  const apt = await outputOf(t, String.raw`printf 'Setting up a\n\0337\033[24;0f\033[42mProgress: [ 20%%]\033[49m\0338Setting up b\n'`);
  assert.equal(apt.output, `Setting up a\nSetting up b\n${'\n'.repeat(21)}Progress: [ 20%]`);
});

test('a line edited at the bash prompt reads as it was entered', async (t) => {
  const id = await openSession(call, t);
  const before = await call('read', { execution_id: id });
  await call('write', { execution_id: id, input: 'echo helo' });
  await call('write', { execution_id: id, keys: ['left', 'left'] });
  await call('write', { execution_id: id, input: 'l' });
  await call('write', { execution_id: id, keys: ['home'] });
  await call('write', { execution_id: id, input: ' ' });
  await call('write', { execution_id: id, keys: ['end', 'enter'] });
  const w = await waitFor(id, 'match', { pattern: '^hello$', since_seq: before.next_seq });
  assert.equal(w.wait_result, 'matched', JSON.stringify(w));
  const all = await call('read', { execution_id: id, since_seq: before.next_seq });
  assert.match(all.output, /^ echo hello\nhello\n/, JSON.stringify(all.output));
});

test('wait(pattern) matches the text the agent reads, not the bytes before the edit', async (t) => {
  const r = await start(t, {
    argv: ['bash', '-c', String.raw`printf 'status: FAIL\033[4Dpass\n'; exec sleep 600`], yield_ms: 0,
  });
  // yield_ms 0 may still answer with the line (a loaded machine runs printf
  // first), which moves the cursor past it: search from the start.
  const w = await waitFor(r.execution_id, 'match', { pattern: 'status: pass$', since_seq: 1 });
  assert.equal(w.wait_result, 'matched', JSON.stringify(w));
  const none = await call('wait', {
    execution_id: r.execution_id, until: 'match', pattern: 'FAIL', since_seq: 1, timeout_ms: 300,
  });
  assert.equal(none.wait_result, 'deadline_reached', JSON.stringify(none));
});

test('the text read in many small pages is the text read in one page, and explore reads it too', async (t) => {
  // Progress lines (CR + EL, CHA), edits (CUB, DCH), colours, wide
  // characters, titles; each line shorter than a page. (Not row moves: a
  // page boundary cuts the rows a move up could take back, see
  // text_view.hpp; explore reads without the terminal's size.)
  const script = String.raw`for i in $(seq 1 60); do ` +
    String.raw`printf '\033[32mok\033[0m %d\r\033[Kline %d \xe4\xb8\xad%%\033[3Dx\033[1G>\n' $i $i; ` +
    String.raw`printf 'bar %d\r\033]0;t%d\007up %d\n' $i $i $i; done`;
  const r = await outputOf(t, script);
  const whole = await call('read', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 1 << 20 });
  assert.equal(whole.capped, false);
  let paged = '';
  let seq = 1;
  for (let pages = 0; seq < whole.next_seq; ++pages) {
    assert.ok(pages < 10000);
    const page = await call('read', { execution_id: r.execution_id, since_seq: seq, max_output_bytes: 100 });
    assert.equal(page.isError, false, page.error);
    paged += page.output;
    seq = page.next_seq;
  }
  assert.equal(paged, whole.output);
  // x over the first half of 中 leaves its second half blank, as tmux shows it.
  assert.match(whole.output, /^>ine 1 x %\nup 11\n/);
  // explore reads the same text.
  const explored = await call('explore', { execution_id: r.execution_id, op: 'read', limit: 1000 });
  assert.equal(explored.isError, false, explored.error);
  assert.equal(`${explored.lines.map((l) => l.text).join('\n')}\n`, whole.output);
  const grep = await call('explore', { execution_id: r.execution_id, op: 'grep', pattern: '^up 600$' });
  assert.equal(grep.matches.length, 1, JSON.stringify(grep));
});

test('tail_lines and the screen scrollback read as the text view for the same stream', async (t) => {
  const script = String.raw`for i in $(seq 1 30); do printf 'row %d 10%%\r\033[Krow %d\033[3Ddone\n' $i $i; done`;
  const r = await outputOf(t, script);
  const tail = await call('read', { execution_id: r.execution_id, tail_lines: 2 });
  const lines = r.output.split('\n').slice(0, -1);
  assert.equal(lines.length, 30);
  assert.equal(lines[0], 'rodone');
  assert.equal(lines[29], 'rowdone');
  assert.equal(tail.output, `${lines.slice(-2).join('\n')}\n`);
  const screen = await call('screen', { execution_id: r.execution_id, scrollback_lines: 100 });
  const shown = [...screen.scrollback, ...screen.lines].filter((line) => line !== '');
  assert.deepEqual(shown, lines);
});

test('tail_lines counts the lines the agent reads, not the line feeds of cursor-up redraws', async (t) => {
  // A two-bar display redrawn in place: each frame is two rows and a move
  // back up; the last raw "line" is escapes only. tail_lines: 2 read "b 3"
  // alone (the raw lines "b 3" and the escapes); asking for more raw lines
  // could read three. (The text is the last frame: the live area.)
  const script = String.raw`for i in 1 2 3; do printf 'a %d\nb %d\n\033[2A' $i $i; done; printf '\033[2B'`;
  const r = await outputOf(t, script);
  assert.equal(r.output, 'a 3\nb 3\n');
  const tail = await call('read', { execution_id: r.execution_id, tail_lines: 2 });
  assert.equal(tail.output, 'a 3\nb 3\n');
  const raw = await call('read', { execution_id: r.execution_id, tail_lines: 2, format: 'raw' });
  // Raw pages count raw lines (the PTY turned each LF into CR LF).
  assert.equal(raw.output, 'b 3\r\n\u001b[2A\u001b[2B');
});

test('a REPL that reserves rows below its prompt (prompt_toolkit: ipython, pgcli) reads as its prompt, not 30 empty lines', async (t) => {
  // As prompt_toolkit draws a prompt: empty lines for a menu below it, then
  // back up at once. Each answer and the next prompt go out in one write.
  const script = [
    'import sys',
    'n, reply = 1, ""',
    'while True:',
    '    sys.stdout.write(reply + f"In [{n}]: " + "\\r\\r\\n" * 30 + "\\x1b[30A\\x1b[8C")',
    '    sys.stdout.flush()',
    '    line = sys.stdin.readline()',
    '    if not line:',
    '        break',
    '    reply = f"Out[{n}]: {line.strip().upper()}\\r\\n\\r\\n"',
    '    n += 1',
  ].join('\n');
  const r = await start(t, { argv: ['python3', '-c', script], env: UTF8, yield_ms: WAIT_MS });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.equal(r.output, 'In [1]: \n');
  const id = r.execution_id;
  const w = await call('write', { execution_id: id, input: 'abc', newline: true });
  assert.equal(w.output, 'abc\nOut[1]: ABC\n\nIn [2]: \n');
  // The newest lines are the prompt's, not the reserved rows.
  const tail = await call('read', { execution_id: id, tail_lines: 2 });
  assert.equal(tail.output, '\nIn [2]: \n');
  const all = await call('read', { execution_id: id, since_seq: 1 });
  // The answer typed at the prompt's row reads on it, as on the screen
  // (before session 46: 'In [1]: \n        abc\n...').
  assert.equal(all.output, 'In [1]: abc\nOut[1]: ABC\n\nIn [2]: \n');
  // wait(tail_lines) looks in the same newest lines as read(tail_lines):
  // the prompt, not the last raw lines, which are the reserved rows.
  const waited = await call('wait', { execution_id: id, pattern: 'In \\[2\\]', tail_lines: 2, timeout_ms: 2000 });
  assert.equal(waited.wait_result, 'matched', JSON.stringify(waited));
  assert.equal(waited.match.text, 'In [2]');
});
