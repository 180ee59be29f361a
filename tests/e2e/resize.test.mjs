// End-to-end: the agent resizes a running program's terminal with
// write(cols/rows), through the official MCP SDK client against the real
// binary. What it proves: the program gets SIGWINCH and sees the new size,
// screen follows, one dimension alone keeps the other, a resize combined
// with input happens before the input, a shell session's commands see it,
// and an ended execution or a resize with action is refused. Refusal while
// a person holds the terminal is covered in tests/mcp/write_resize_test.cpp.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { winchReporter } from './lib/programs.mjs';

// Generous: the suite runs on a loaded 2-core machine.
const WAIT_MS = 30000;

let agent;
const home = tempDirForRun('agentty-resize-');
before(async () => {
  agent = await startAgentty();
});
after(async () => {
  await agent?.client.close();
  rmSync(home, { recursive: true, force: true });
});

const call = (name, args) => agent.call(name, args);

// Starts a command and kills it after the test whatever happens.
const start = (t, args) => agent.startCommand(t, { yield_ms: 300, ...args });

// Waits until `pattern` is in the whole output (since_seq 1: out of band).
async function expectOutput(id, pattern) {
  const w = await call('wait', { execution_id: id, until: 'match', pattern, since_seq: 1, timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'matched', `${pattern}: ${JSON.stringify(w)}`);
}


test('write(cols, rows) resizes: SIGWINCH with the new size, screen follows, one dimension keeps the other', async (t) => {
  const id = (await start(t, { argv: ['python3', '-c', winchReporter], cols: 100, rows: 29 })).execution_id;
  await expectOutput(id, '^ready\\n');

  const resized = await call('write', { execution_id: id, cols: 70, rows: 20 });
  assert.equal(resized.isError, false, resized.error);
  assert.equal(resized.ok, true);
  assert.deepEqual([resized.cols, resized.rows], [70, 20]);
  await expectOutput(id, '^winch 20x70\\n');
  const screen = await call('screen', { execution_id: id });
  assert.deepEqual([screen.cols, screen.rows], [70, 20]);

  const wider = await call('write', { execution_id: id, cols: 90 });
  assert.equal(wider.isError, false, wider.error);
  assert.deepEqual([wider.cols, wider.rows], [90, 20]);
  await expectOutput(id, '^winch 20x90\\n');
  const taller = await call('write', { execution_id: id, rows: 33 });
  assert.deepEqual([taller.cols, taller.rows], [90, 33]);
  await expectOutput(id, '^winch 33x90\\n');
  const after = await call('screen', { execution_id: id });
  assert.deepEqual([after.cols, after.rows], [90, 33]);
});

test('a resize combined with input happens before the input is typed', async (t) => {
  const id = (await start(t, { command: 'read -r line; echo "size $(stty size) for $line"', cols: 100, rows: 29 })).execution_id;
  const w = await call('wait', { execution_id: id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'waiting_for_input', JSON.stringify(w));
  const r = await call('write', { execution_id: id, input: 'go', newline: true, cols: 50, rows: 15 });
  assert.equal(r.isError, false, r.error);
  await expectOutput(id, '^size 15 50 for go$');
});

test('a shell session: commands after the resize see the new size', async () => {
  const opened = await call('open', { shell: 'bash', cols: 101, rows: 37, env: { HOME: home } });
  assert.equal(opened.prompt_ready, true, JSON.stringify(opened));
  try {
    const r = await call('write', { execution_id: opened.execution_id, cols: 64, rows: 18 });
    assert.equal(r.isError, false, r.error);
    const size = await call('execute', { session: opened.execution_id, command: 'stty size', side_effects: ['NONE'] });
    assert.equal(size.exit_code, 0, JSON.stringify(size));
    assert.equal(size.output, '18 64\n');
  } finally {
    await call('close', { execution_id: opened.execution_id });
  }
});

test('refused: an ended execution, cols/rows with action, sizes out of bounds', async (t) => {
  const done = await call('execute', { command: 'true', side_effects: ['NONE'] });
  assert.equal(done.status, 'completed');
  const ended = await call('write', { execution_id: done.execution_id, cols: 80, rows: 24 });
  assert.equal(ended.isError, true);
  assert.equal(ended.ok, false);
  assert.match(ended.error, /has ended \(completed\); it was not resized/);

  const id = (await start(t, { command: 'sleep 600', cols: 100, rows: 29 })).execution_id;
  const withAction = await call('write', { execution_id: id, action: 'flush', cols: 80 });
  assert.equal(withAction.isError, true);
  assert.match(withAction.error, /^cols\/rows: cannot be combined with action/);
  for (const args of [{ cols: 9 }, { cols: 1001 }, { rows: 1 }, { rows: 501 }]) {
    const r = await call('write', { execution_id: id, ...args });
    assert.equal(r.isError, true, `${JSON.stringify(args)} is out of bounds`);
  }
  const screen = await call('screen', { execution_id: id });
  assert.deepEqual([screen.cols, screen.rows], [100, 29], 'no refused call resized');
});
