// End-to-end: execute's `stdin`. Locally, with close_stdin (its default), it
// is the program's standard input as a file, read exactly and then at end of
// file, as `prog < file` gives it: never echoed, never cut into lines, control
// bytes are data. close_stdin=false keeps typing it into the terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { serverForFile } from './lib/mcp-client.mjs';

const server = serverForFile();
const run = (command, stdin, extra = {}) =>
  server.call('execute', { command, stdin, side_effects: ['NONE'], yield_ms: 20000, ...extra });

function assertCompleted(r, output) {
  assert.equal(r.isError, false, r.error || r.message);
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.exit_code, 0, r.output);
  assert.equal(r.output, output);
}

test('cat prints its stdin once: nothing is echoed', async () => {
  assertCompleted(await run('cat', 'hello\n'), 'hello\n');
  assertCompleted(await run('cat', 'no final newline'), 'no final newline');
});

test('python3 - runs a script given as stdin and ends', async () => {
  assertCompleted(await run('python3 -', 'import sys\nprint(1 + 1, sys.stdin.isatty())\n'), '2 False\n');
});

test('long lines arrive whole: 300 KB whose hash matches', async () => {
  const line = 'abcdefghij'.repeat(10000); // 100,000 bytes, far over a terminal line's 4095
  const data = `${line}\n${line}\n${line}`;
  const hash = createHash('sha256').update(data).digest('hex');
  assertCompleted(await run('wc -c | tr -d " "; sha256sum', data), `${data.length}\n${hash}  -\n`);
});

test('control bytes are data, not keys', async () => {
  assertCompleted(await run('od -An -tx1', 'a\x03b\x04c\x1a\n'), ' 61 03 62 04 63 1a 0a\n');
});

test('empty stdin is an empty file: the program sees end of file at once', async () => {
  assertCompleted(await run('wc -c', ''), '0\n');
});

test('the terminal still answers /dev/tty after stdin ended', async () => {
  const r = await run('cat > /dev/null; read -r line < /dev/tty; echo "got:$line"', 'data\n', { yield_ms: 10000 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.equal(r.waiting_for_input, true);
  const answered = await server.call('write', { execution_id: r.execution_id, input: 'typed\n', yield_ms: 2000 });
  assert.equal(answered.isError, false, answered.error);
  const done = await server.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 20000 });
  assert.equal(done.exit_code, 0);
  assert.match(answered.output + done.output, /got:typed\n/);
});

test('close_stdin=false types stdin into the terminal and keeps it open for write', async () => {
  const r = await run('cat', 'first\n', { close_stdin: false, yield_ms: 10000 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.equal(r.waiting_for_input, true);
  // Typed: the terminal echoes the line and cat prints it back.
  assert.equal(r.output, 'first\nfirst\n');
  const ended = await server.call('write', { execution_id: r.execution_id, input: '', eof: true, yield_ms: 2000 });
  assert.equal(ended.isError, false, ended.error);
  const done = await server.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 20000 });
  assert.equal(done.status, 'completed');
  assert.equal(done.exit_code, 0);
});
