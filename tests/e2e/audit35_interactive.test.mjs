// End-to-end regression tests from the thirty-fifth audit: interactive
// programs an agent meets (REPLs, debuggers, prompts), driven through the
// MCP SDK. Only programs that scripts/install-deps installs: node, python3.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);
const waitFor = waiterFor(call);
// No history file written into the user's home.
const nodeRepl = { argv: ['node'], env: { NODE_REPL_HISTORY: '' }, yield_ms: WAIT_MS };
const awaitLine = (ms) => `await new Promise((done) => setTimeout(() => done(6 * 7), ${ms}))`;

// node's REPL runs a top-level await in its event loop, which polls the
// terminal all along: "waits for input again" held right at the echo, so
// write answered with the echo alone and the result came after the answer.
test('write to the node REPL answers an await with its result, not with the echo', async (t) => {
  const r = await start(t, nodeRepl);
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const answer = await call('write', {
    execution_id: r.execution_id,
    input: awaitLine(1000),
    newline: true,
    yield_ms: WAIT_MS,
  });
  assert.equal(answer.isError, false, answer.error);
  assert.match(answer.output, /^42\n> $/m, JSON.stringify(answer));
  assert.equal(answer.message, undefined, answer.message);
});

// When yield_ms runs out first, the answer says the line is not answered
// yet, rather than leaving waiting_for_input: true to read as "done".
test('a write whose await outlasts yield_ms says only the echo came back and how to follow it', async (t) => {
  const r = await start(t, nodeRepl);
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const answer = await call('write', {
    execution_id: r.execution_id,
    input: awaitLine(3000),
    newline: true,
    yield_ms: 500,
  });
  assert.equal(answer.isError, false, answer.error);
  assert.equal(answer.output, `${awaitLine(3000)}\n`, JSON.stringify(answer));
  assert.match(answer.message, /Only the echo of the line came back within yield_ms/, answer.message);
  const result = await waitFor(r.execution_id, 'match', { pattern: '^42$' });
  assert.equal(result.wait_result, 'matched', JSON.stringify(result));
});
