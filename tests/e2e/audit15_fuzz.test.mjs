// End-to-end: hostile input over MCP. Every message, however malformed, gets
// an answer (a JSON-RPC error or a tool result that names the argument and the
// fix) and the server goes on: it answers ping after each one, and leaves no
// zombie, fd or process behind. The fuzzing is seeded, so a failure
// reproduces with the seed it prints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawAgentty } from './lib/raw-agentty.mjs';

// Sends `frame` and checks the server is still there: the answer to a ping
// sent after it arrives. Returns the answers with `id` (if any) that came.
async function survives(raw, frame, id) {
  raw.send(frame);
  const pingId = `ping-after-${Math.random()}`;
  raw.send({ jsonrpc: '2.0', id: pingId, method: 'ping' });
  const pong = await raw.reply(pingId, 20000);
  assert.ok(pong, `agentty stopped answering after ${String(frame).slice(0, 120)} ` +
    `(exit: ${raw.child.exitCode ?? raw.child.signalCode})`);
  return id === undefined ? undefined : raw.reply(id);
}

test('a number JSON allows but a double cannot hold (1e400) is a parse error with its id, not a crash', async (t) => {
  const raw = rawAgentty(t);
  assert.equal((await raw.reply(0)).id, 0);
  for (const [id, number] of [[1, '1e400'], [2, '-1e400'], [3, `1${'0'.repeat(400)}`]]) {
    const answer = await survives(raw,
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"ps","arguments":{"limit":${number}}}}`, id);
    assert.equal(answer?.id, id, JSON.stringify(answer));
    assert.equal(answer.error.code, -32700);
    assert.match(answer.error.message, /out of range/);
    assert.doesNotMatch(answer.error.message, /json\.exception/);
  }
});

test('protocol fields of the wrong type are refused naming the field, not a crash', async (t) => {
  const raw = rawAgentty(t);
  assert.equal((await raw.reply(0)).id, 0);
  const level = await survives(raw, { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 5 } }, 1);
  assert.equal(level.error.code, -32602);
  assert.match(level.error.message, /^level: must be one of debug/);
  // initialize with a version that is not a string: answered with the newest one agentty speaks.
  const init = await survives(raw, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, 2);
  assert.equal(typeof init.result?.protocolVersion, 'string', JSON.stringify(init));
  const levels = await survives(raw, { jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: ['debug'] } }, 3);
  assert.equal(levels.error.code, -32602);
});

test('JSON nested 200,000 levels deep is refused with its id, not a crash', async (t) => {
  const raw = rawAgentty(t);
  assert.equal((await raw.reply(0)).id, 0);
  const deep = (n) => '['.repeat(n) + ']'.repeat(n);
  const ping = await survives(raw, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${deep(200000)}}}`, 1);
  assert.equal(ping?.id, 1, JSON.stringify(ping).slice(0, 500));
  assert.equal(ping.error.code, -32600);
  assert.match(ping.error.message, /nested .*levels/);
  // In a tool's arguments, a response and a notification alike.
  const call = await survives(raw,
    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ps","arguments":{"limit":${'{"a":'.repeat(200000)}1${'}'.repeat(200000)}}}}`, 2);
  assert.equal(call.error.code, -32600);
  await survives(raw, `{"jsonrpc":"2.0","id":3,"result":${deep(300000)}}`);
  await survives(raw, `{"jsonrpc":"2.0","method":"notifications/x","params":{"a":${deep(300000)}}}`);
  // Unclosed: cannot be parsed, and is not read as nested either.
  const open = await survives(raw, `{"jsonrpc":"2.0","id":4,"method":"ping","params":${'['.repeat(1000000)}`, 4);
  assert.equal(open?.id, 4);
  // Nesting a client may really send is read as before.
  const fine = await survives(raw, `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"x":${deep(40)}}}}`, 5);
  assert.deepEqual(fine.result, {});
});
