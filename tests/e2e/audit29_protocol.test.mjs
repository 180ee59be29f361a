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
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDirForRun } from './lib/mcp-client.mjs';
import { rawAgentty } from './lib/raw-agentty.mjs';

const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });
const call = (id, name, args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const cancel = (requestId) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } });
const arrays = (raw) => raw.messages.filter(Array.isArray);
const initialize = (id, protocolVersion, extra = {}) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'audit29', version: '1' }, ...extra },
});

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

// The program ends when the test makes a file: a stop would be refused too
// while the 1000 waits are in progress, which then ran out their 55 s.
test('2025-03-26: past 1000 calls in progress, a call of a batch is refused inside the array', async (t) => {
  const raw = await session0325(t);
  const done = path.join(tempDirForRun('agentty-audit29-'), 'done');
  raw.send(call(1, 'execute', { command: `until [ -e ${done} ]; do sleep 0.1; done`, side_effects: ['NONE'], yield_ms: 0 }));
  const execution = (await raw.reply(1, 30000))?.result?.structuredContent?.execution_id;
  assert.ok(execution, 'started');
  raw.send(Array.from({ length: 1001 }, (_, i) => waitFor(1000 + i, execution)));
  raw.send(ping(2));  // read after the batch: all of it has been handled
  await raw.reply(2, 60000);
  writeFileSync(done, '');
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

// 2025-03-26: "The initialize request MUST NOT be part of a JSON-RPC batch"
// (a validator sends two of them in one).
test('2025-03-26: an initialize inside a batch is refused inside the array, and the session keeps its version', async (t) => {
  const raw = await session0325(t);
  raw.send([initialize(1, '2025-06-18'), initialize(2, '2025-03-26')]);
  const array = await nextArray(raw);
  assert.deepEqual(array.map((m) => [m.id, m.error?.code]), [[1, -32600], [2, -32600]]);
  assert.match(array[0].error.message, /initialize is never part of a batch/);
  raw.send([ping(3)]);
  assert.deepEqual(await nextArray(raw), [{ jsonrpc: '2.0', id: 3, result: {} }]);
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

// ---- lifecycle ----

test('before initialize only ping is served; once initialize is answered, requests are (initialized notification or not)', async (t) => {
  const raw = rawAgentty(t, { initialize: false });
  raw.send(ping(1));
  assert.deepEqual((await raw.reply(1)).result, {});
  raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  raw.send(call(3, 'ps', {}));
  raw.send({ jsonrpc: '2.0', id: 4, method: 'resources/list' });
  for (const [id, method] of [[2, 'tools/list'], [3, 'tools/call'], [4, 'resources/list']]) {
    const refused = await raw.reply(id);
    assert.equal(refused.error?.code, -32600, JSON.stringify(refused));
    assert.match(refused.error.message, new RegExp(`${method} before initialize`));
  }
  raw.send(cancel(3));  // notifications are read, and never answered
  raw.send(initialize(5, '2025-06-18'));
  assert.equal((await raw.reply(5)).result.protocolVersion, '2025-06-18');
  raw.send({ jsonrpc: '2.0', id: 6, method: 'tools/list' });  // before notifications/initialized: allowed
  assert.ok((await raw.reply(6)).result.tools.length > 0);
  raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  raw.send(ping(7));
  assert.deepEqual((await raw.reply(7)).result, {});
  assert.equal(raw.messages.length, 0, JSON.stringify(raw.messages));
});

test('version negotiation: a supported version is echoed, any other (or none) answered with the latest', async (t) => {
  const cases = [
    ['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'], ['2025-03-26', '2025-03-26'],
    ['2024-11-05', '2024-11-05'], ['2024-10-07', '2025-11-25'], ['2026-07-28', '2025-11-25'],
    ['', '2025-11-25'], [undefined, '2025-11-25'],
  ];
  await Promise.all(cases.map(async ([asked, answered]) => {
    const raw = rawAgentty(t, { initialize: false });
    raw.send(initialize(1, asked));
    const reply = await raw.reply(1);
    assert.equal(reply.result?.protocolVersion, answered, `${asked}: ${JSON.stringify(reply)}`);
    assert.deepEqual(Object.keys(reply.result.serverInfo).sort(), ['name', 'title', 'version']);
    assert.ok(reply.result.capabilities.tools && reply.result.capabilities.logging);
  }));
});

// The official SDK servers answer every initialize; proxies that share one
// server among clients send one per client.
test('a second initialize is answered like the first, and the session goes on', async (t) => {
  const raw = rawAgentty(t);
  assert.equal((await raw.reply(0)).result.protocolVersion, '2025-06-18');
  raw.send(initialize(1, '2025-06-18'));
  assert.equal((await raw.reply(1)).result.protocolVersion, '2025-06-18');
  raw.send(ping(2));
  assert.deepEqual((await raw.reply(2)).result, {});
});

test('ping is answered in every state, with or without params and _meta', async (t) => {
  const raw = rawAgentty(t, { initialize: false });
  raw.send({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { 'com.example/x': 1 } } });
  assert.deepEqual((await raw.reply(1)).result, {});
  raw.send(initialize(2, '2025-11-25', { _meta: { 'com.example/trace': 'abc' } }));
  assert.equal((await raw.reply(2)).result.protocolVersion, '2025-11-25');
  raw.send(ping(3));  // between the response and notifications/initialized
  assert.deepEqual((await raw.reply(3)).result, {});
  raw.send({ jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: {} } });
  const execution = await sleeper(raw, 4);
  raw.send(waitFor(5, execution));
  raw.send({ jsonrpc: '2.0', id: 6, method: 'ping', params: {} });  // while a call runs
  assert.deepEqual((await raw.reply(6)).result, {});
  raw.send({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { progressToken: 'list' } } });
  assert.ok((await raw.reply(7)).result.tools.length > 0);
  await stop(raw, 8, execution);
  assert.ok((await raw.reply(5, 30000)).result);
});

test('progress notifications carry the token as it was sent, string or number, with growing progress', async (t) => {
  const raw = rawAgentty(t);
  await raw.reply(0);
  const execution = await sleeper(raw, 1);
  const tokens = ['tok-1', 7, 0];
  tokens.forEach((progressToken, i) => raw.send({
    ...waitFor(10 + i, execution), params: { ...waitFor(10 + i, execution).params, _meta: { progressToken } },
  }));
  const progressOf = (token) => raw.messages.filter((m) => m.method === 'notifications/progress' && m.params.progressToken === token);
  await raw.waitFor(() => tokens.every((token) => progressOf(token).length >= 2), 30000);
  await stop(raw, 2, execution);
  for (const token of tokens) {
    const values = progressOf(token).map((m) => m.params.progress);
    assert.ok(values.every((v, i) => i === 0 || v > values[i - 1]), `${token}: ${values}`);
    assert.equal(typeof progressOf(token)[0].params.message, 'string');
  }
  for (let i = 0; i < tokens.length; i++) assert.ok((await raw.reply(10 + i, 30000)).result);
  const after = raw.messages.length;
  raw.send(ping(3));
  await raw.reply(3);
  assert.equal(raw.messages.filter((m) => m.method === 'notifications/progress').length,
    raw.messages.slice(0, after).filter((m) => m.method === 'notifications/progress').length,
    'no progress after the answers');
});

test('cancellations of unknown, finished and initialize ids, unknown notifications and stray responses get no answer', async (t) => {
  const raw = rawAgentty(t);
  await raw.reply(0);
  raw.send(ping(1));
  await raw.reply(1);
  for (const frame of [
    cancel(0),            // initialize (MUST NOT be cancelled: ignored)
    cancel(1),            // finished
    cancel('never-sent'), // unknown
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 5 } },
    { jsonrpc: '2.0', method: 'notifications/whatever/new', params: { a: 1 } },
    { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
    { jsonrpc: '2.0', id: 'agentty-999', result: {} },  // an answer to a request never sent
    { jsonrpc: '2.0', id: 12345, error: { code: -32601, message: 'Method not found', data: { x: 1 } } },
    { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
  ]) raw.send(frame);
  raw.send(ping(2));
  assert.deepEqual((await raw.reply(2)).result, {});
  assert.equal(raw.messages.length, 0, JSON.stringify(raw.messages));
});

test('logging/setLevel takes the eight syslog levels and refuses anything else with -32602', async (t) => {
  const raw = rawAgentty(t);
  await raw.reply(0);
  const setLevel = (id, params) => raw.send({ jsonrpc: '2.0', id, method: 'logging/setLevel', params });
  const refused = [{ level: 'verbose' }, { level: 'INFO' }, { level: 5 }, { level: null }, {}, { level: ['debug'] }];
  refused.forEach((params, i) => setLevel(10 + i, params));
  for (let i = 0; i < refused.length; i++) {
    const answer = await raw.reply(10 + i);
    assert.equal(answer.error?.code, -32602, JSON.stringify([refused[i], answer]));
  }
  ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'].forEach((level, i) => setLevel(20 + i, { level }));
  for (let i = 0; i < 8; i++) assert.deepEqual((await raw.reply(20 + i)).result, {});
});

// agentty never hands out a nextCursor, so any cursor is one it did not give.
test('error codes: -32601 for an unknown method, -32602 for bad params, an unknown tool and a cursor never given', async (t) => {
  const raw = rawAgentty(t);
  await raw.reply(0);
  const cases = [
    [{ method: 'prompts/get', params: { name: 'x' } }, -32601],
    [{ method: 'completion/complete', params: {} }, -32601],
    [{ method: 'resources/subscribe', params: { uri: 'agentty://executions/x/output' } }, -32601],
    [{ method: 'tools/call', params: {} }, -32602],
    [{ method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } }, -32602],
    [{ method: 'resources/read', params: {} }, -32602],
    [{ method: 'resources/read', params: { uri: 'agentty://executions/none/output' } }, -32002],
    [{ method: 'tools/list', params: { cursor: 'abc' } }, -32602],
    [{ method: 'resources/list', params: { cursor: 'abc' } }, -32602],
    [{ method: 'resources/templates/list', params: { cursor: '' } }, -32602],
  ];
  cases.forEach(([frame], i) => raw.send({ jsonrpc: '2.0', id: 100 + i, ...frame }));
  for (let i = 0; i < cases.length; i++) {
    const answer = await raw.reply(100 + i);
    assert.equal(answer?.error?.code, cases[i][1], JSON.stringify([cases[i][0], answer]));
    assert.equal(typeof answer.error.message, 'string');
  }
  // No cursor (or a null one) is the first and only page.
  raw.send({ jsonrpc: '2.0', id: 200, method: 'tools/list', params: { cursor: null } });
  const list = await raw.reply(200);
  assert.ok(list.result.tools.length > 0);
  assert.equal(list.result.nextCursor, undefined);
});
