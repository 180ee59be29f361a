// End-to-end: the MCP base protocol and lifecycle as a strict validator
// checks them, per negotiated version, over raw stdio lines (the SDK client
// never sends a batch, nor most of what is tested here).
//
// Batches: MCP 2025-03-26 says implementations MUST support receiving
// JSON-RPC batches; 2025-06-18 removed them and 2024-11-05's schema has none.
// A batch in a 2025-03-26 session is answered with one array line once every
// response in it is ready; in any other session it is refused (-32600, id
// null) naming the version.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawAgentty } from './lib/raw-agentty.mjs';

const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });
const call = (id, name, args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const cancel = (requestId) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } });
const arrays = (raw) => raw.messages.filter(Array.isArray);

// A program that runs until stopped, and its execution id.
async function sleeper(raw, id) {
  raw.send(call(id, 'execute', { command: 'sleep 300', side_effects: ['NONE'], yield_ms: 0 }));
  const started = await raw.reply(id, 30000);
  const execution = started?.result?.structuredContent?.execution_id;
  assert.ok(execution, JSON.stringify(started));
  return execution;
}
const waitFor = (id, execution) => call(id, 'wait', { execution_id: execution, until: 'exit', timeout_ms: 55000 });

async function stop(raw, id, execution) {
  raw.send(call(id, 'stop', { execution_id: execution }));
  assert.ok((await raw.reply(id, 30000))?.result, 'stop answered');
}

async function nextArray(raw) {
  await raw.waitFor(() => arrays(raw).length > 0, 60000);
  const index = raw.messages.findIndex(Array.isArray);
  return raw.messages.splice(index, 1)[0];
}

async function session0325(t, options = {}) {
  const raw = rawAgentty(t, { protocolVersion: '2025-03-26', ...options });
  assert.equal((await raw.reply(0)).result.protocolVersion, '2025-03-26');
  return raw;
}

test('2025-03-26: a batch is answered with one array once its last call answers, and the server reads on meanwhile', async (t) => {
  const raw = await session0325(t);
  const execution = await sleeper(raw, 1);
  raw.send([
    waitFor(10, execution),
    ping(11),
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 12, method: 'no/such' },
    7,
  ]);
  raw.send(ping(2));
  assert.deepEqual((await raw.reply(2)).result, {}, 'a ping after the batch is answered while its wait runs');
  assert.equal(arrays(raw).length, 0, 'nothing of the batch before its last response is ready');
  await stop(raw, 3, execution);
  const array = await nextArray(raw);
  assert.deepEqual(array.map((m) => m.id).sort(), [10, 11, 12, null].sort());
  const byId = (id) => array.find((m) => m.id === id);
  assert.ok(byId(10).result.structuredContent, JSON.stringify(byId(10)));
  assert.deepEqual(byId(11).result, {});
  assert.equal(byId(12).error.code, -32601);
  assert.equal(byId(null).error.code, -32600);
  assert.equal(raw.messages.filter((m) => [10, 11, 12].includes(m.id)).length, 0, 'no response outside the array');
});

test('2025-03-26: a call of a batch that is cancelled has no response, and the array omits it', async (t) => {
  const raw = await session0325(t);
  const execution = await sleeper(raw, 1);
  raw.send([waitFor(20, execution), ping(21)]);
  raw.send(cancel(20));
  const array = await nextArray(raw);
  assert.deepEqual(array, [{ jsonrpc: '2.0', id: 21, result: {} }]);
  // The same in one batch: the cancellation comes right after the call.
  raw.send([waitFor(22, execution), cancel(22), ping(23)]);
  assert.deepEqual((await nextArray(raw)).map((m) => m.id), [23]);
  await stop(raw, 2, execution);
});

// A client matches by id: answers for one id leave in the order the
// requests came, inside a batch as across lines.
test('2025-03-26: ids reused inside a batch or against a call in progress are refused after the first request is answered', async (t) => {
  const raw = await session0325(t);
  const execution = await sleeper(raw, 1);
  raw.send([waitFor(30, execution), ping(30)]);
  raw.send(waitFor(40, execution));  // a call on its own line...
  raw.send([ping(40), ping(41)]);     // ...and a batch reusing its id
  raw.send(ping(42));
  assert.deepEqual((await raw.reply(42)).result, {});
  assert.equal(arrays(raw).length, 0);
  await stop(raw, 2, execution);
  await raw.waitFor(() => arrays(raw).length === 2, 60000);
  const [first, second] = arrays(raw);
  const inside = first.some((m) => m.id === 30) ? first : second;
  const across = inside === first ? second : first;
  assert.equal(inside.length, 2);
  assert.ok(inside[0].result, 'the wait comes first');
  assert.equal(inside[1].error.code, -32600);
  assert.match(inside[1].error.message, /id 30 is the id of a request still in progress/);
  const callAnswer = raw.messages.findIndex((m) => m.id === 40);
  assert.ok(callAnswer >= 0 && callAnswer < raw.messages.indexOf(across),
    'the call on its own line is answered before the batch that reused its id');
  assert.deepEqual(across.find((m) => m.id === 41).result, {});
  assert.equal(across.find((m) => m.id === 40).error.code, -32600);
});

test('2025-03-26: past 1000 calls in progress, a call of a batch is refused inside the array', async (t) => {
  const raw = await session0325(t);
  const execution = await sleeper(raw, 1);
  raw.send(Array.from({ length: 1001 }, (_, i) => waitFor(1000 + i, execution)));
  raw.send(ping(2));  // read after the batch: all of it has been handled
  await raw.reply(2, 60000);
  await stop(raw, 3, execution);
  const array = await nextArray(raw);
  assert.equal(array.length, 1001);
  const refused = array.filter((m) => m.result.isError);
  assert.equal(refused.length, 1, JSON.stringify(refused).slice(0, 500));
  assert.equal(refused[0].id, 2000);
  assert.match(refused[0].result.structuredContent.error, /too many calls in progress/);
});

test('2025-03-26: a batch line over the size limit is refused as a whole; a big one under it is answered in full', async (t) => {
  const raw = await session0325(t, { env: { AGENTTY_MAX_REQUEST_BYTES: '65536' } });
  raw.send(Array.from({ length: 3000 }, (_, i) => ping(i + 1)));
  const refused = await raw.reply(null);
  assert.equal(refused.error.code, -32600);
  assert.match(refused.error.message, /exceeds the limit of 65536 bytes/);
  raw.send(Array.from({ length: 1000 }, (_, i) => ping(i + 1)));
  const array = await nextArray(raw);
  assert.deepEqual(array.map((m) => m.id), Array.from({ length: 1000 }, (_, i) => i + 1));
});

test('batches are refused, naming the version, in sessions of other versions and before initialize', async (t) => {
  for (const protocolVersion of ['2025-11-25', '2025-06-18', '2024-11-05']) {
    const raw = rawAgentty(t, { protocolVersion });
    assert.equal((await raw.reply(0)).result.protocolVersion, protocolVersion);
    raw.send([ping(1), ping(2)]);
    const refused = await raw.reply(null);
    assert.equal(refused.error.code, -32600);
    assert.match(refused.error.message, new RegExp(`only MCP 2025-03-26 has batches; this session speaks MCP ${protocolVersion}`));
    raw.send(ping(3));
    assert.deepEqual((await raw.reply(3)).result, {});
    assert.equal(raw.messages.length, 0, JSON.stringify(raw.messages));
  }
  const raw = rawAgentty(t, { initialize: false });
  raw.send([ping(1)]);
  assert.match((await raw.reply(null)).error.message, /has not been initialized/);
  raw.send('[]');
  assert.match((await raw.reply(null)).error.message, /empty batch/);
});

