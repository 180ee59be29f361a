// End-to-end regression tests for gaps found by a fifth "new user with a
// real MCP client" audit, of interactive and screen use: full-screen
// programs, REPLs, prompts, keys, the text view of redrawn lines, and the
// errors of write and screen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { serverForFile, tempDirForRun, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);

const waitFor = waiterFor(call);

test('text view: erase in line (ESC [K) after a carriage return clears the rest of the old text', async (t) => {
  // The way progress bars, spinners and pagers redraw a line with shorter text.
  const script = String.raw`printf 'abcdef\rxy\e[K\n'; printf 'progress 10%%\rdone\e[0K\n'; ` +
    String.raw`printf 'long old line\r\e[2Kshort\n'; printf 'keep\e[Kme\n'; printf 'abcdef\b\b\b\e[1KX\n'`;
  const r = await start(t, { argv: ['bash', '-c', script], yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed');
  assert.equal(r.output, 'xy\ndone\nshort\nkeepme\n   Xef\n');
  const screen = await call('screen', { execution_id: r.execution_id });
  assert.deepEqual(screen.lines.slice(0, 5), ['xy', 'done', 'short', 'keepme', '   Xef']);
});

test('wait(match) after a capped page does not report the same match again', async (t) => {
  // Much more output than one page before each mark: the page a wait returns
  // ends long before the match it reports.
  // It prints only once the gate file exists: execute's answer (which moves
  // the cursor) then holds nothing, however soon a loaded machine runs it.
  const gate = path.join(tempDirForRun('agentty-audit5-'), 'go');
  const script = 'until [ -e "$0" ]; do sleep 0.05; done; for i in 1 2; do seq 1 3000; echo "mark-$i"; done; sleep 600';
  const r = await start(t, { argv: ['bash', '-c', script, gate], yield_ms: 0 });
  assert.equal(r.output, '', JSON.stringify(r));
  writeFileSync(gate, '');
  const id = r.execution_id;
  const matches = [];
  let text = '';
  for (let i = 0; i < 2; i++) {
    const w = await waitFor(id, 'match', { pattern: 'mark-\\d', max_output_bytes: 1000 });
    assert.equal(w.wait_result, 'matched', JSON.stringify(w));
    assert.equal(w.capped, true, 'the page was cut before the match');
    matches.push(w.match.text);
    text += w.output;
  }
  assert.deepEqual(matches, ['mark-1', 'mark-2'], 'the second wait reports the match after the first');
  // The cursor still returns every byte once: paging on reaches both marks.
  for (let page = { capped: true }; page.capped; ) {
    page = await call('read', { execution_id: id, max_output_bytes: 20000 });
    text += page.output;
  }
  assert.equal(text.match(/^mark-\d$/gm).join(','), 'mark-1,mark-2');
  assert.equal(text.match(/^3000$/gm).length, 2);
});

test('keys: every ctrl-letter (nano ctrl-o/ctrl-x, readline ctrl-a/ctrl-e, vim ctrl-f), shift-tab and insert', async (t) => {
  const keys = ['ctrl-a', 'ctrl-e', 'ctrl-f', 'ctrl-o', 'ctrl-x', 'shift-tab', 'insert'];
  const want = ['\\001', '\\005', '\\006', '\\017', '\\030', '\\E[Z', '\\E[2~'];
  // Reads each key raw (no echo, no signals, no flow control) and prints its bytes.
  const script = `stty raw -echo; for i in ${keys.map((_, i) => i).join(' ')}; do ` +
    `k=$(dd bs=8 count=1 2>/dev/null); printf 'key %q\\r\\n' "$k"; done; stty sane`;
  const id = (await start(t, { argv: ['bash', '-c', script], yield_ms: 0 })).execution_id;
  for (const [i, key] of keys.entries()) {
    await waitFor(id, 'input');
    const w = await call('write', { execution_id: id, keys: [key] });
    assert.equal(w.isError, false, `${key}: ${w.error}`);
    // Its line is printed before the next key is sent (one read, one key).
    const printed = await waitFor(id, 'match', { pattern: `(?:^key .*\n[\s\S]*){${i + 1}}`, since_seq: 1 });
    assert.equal(printed.wait_result, 'matched', key);
  }
  const exited = await waitFor(id, 'exit');
  assert.equal(exited.exit_code, 0);
  const all = await call('read', { execution_id: id, since_seq: 1 });
  assert.deepEqual(all.output.match(/^key .*$/gm), want.map((w) => `key $'${w}'`));
});

test('write: an empty input or an empty keys list is refused, not answered ok with nothing typed', async (t) => {
  const id = (await start(t, { argv: ['cat'], yield_ms: 0 })).execution_id;
  for (const args of [{ input: '' }, { keys: [] }, { input: '', keys: [] }]) {
    const w = await call('write', { execution_id: id, ...args });
    assert.equal(w.isError, true, JSON.stringify(args));
    assert.match(w.error, /^input: .*nothing was written.*newline: true to press Enter/, JSON.stringify(args));
  }
  const typed = await call('write', { execution_id: id, input: 'still-open', newline: true });
  assert.equal(typed.ok, true);
  await call('write', { execution_id: id, eof: true });
  assert.equal((await waitFor(id, 'exit')).exit_code, 0);
  const all = await call('read', { execution_id: id, since_seq: 1 });
  assert.equal(all.output, 'still-open\nstill-open\n');
});

test('a full-screen program: execute and write say alt_screen and point to screen', async (t) => {
  const r = await start(t, { argv: ['less', '/etc/passwd'], env: { LESS: '' }, yield_ms: WAIT_MS });
  assert.equal(r.status, 'backgrounded');
  assert.equal(r.alt_screen, true, JSON.stringify(r));
  assert.match(r.message, /full screen .*call screen/);
  const answer = await call('write', { execution_id: r.execution_id, keys: ['pagedown'] });
  assert.equal(answer.alt_screen, true, JSON.stringify(answer));
  assert.match(answer.message, /full screen .*call screen/);
  const quit = await call('write', { execution_id: r.execution_id, input: 'q' });
  assert.equal(quit.ok, true);
  assert.equal((await waitFor(r.execution_id, 'exit')).exit_code, 0);

  const line = await start(t, { argv: ['cat'], yield_ms: WAIT_MS });
  assert.equal(line.status, 'backgrounded');
  assert.equal(line.alt_screen, false);
  assert.doesNotMatch(line.message, /full screen/);
});
