// End-to-end: hostile input over MCP. Every message, however malformed, gets
// an answer (a JSON-RPC error or a tool result that names the argument and the
// fix) and the server goes on: it answers ping after each one, and leaves no
// zombie, fd or process behind. The fuzzing is seeded, so a failure
// reproduces with the seed it prints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import Ajv from 'ajv';
import { startAgentty } from './lib/mcp-client.mjs';
import { rawAgentty } from './lib/raw-agentty.mjs';
import { eventually } from './lib/web-helpers.mjs';
import { holdsPtyMaster, openFds } from './lib/proc-stats.mjs';

// Sends `frame` and checks the server is still there: the answer to a ping
// sent after it arrives. Returns the answers with `id` (if any) that came.
async function survives(raw, frame, id) {
  raw.send(frame);
  const pingId = `ping-after-${Math.random()}`;
  raw.send({ jsonrpc: '2.0', id: pingId, method: 'ping' });
  // Not raw.reply: it would take an error with a null id for the ping's answer.
  const pong = () => raw.messages.findIndex((m) => m.id === pingId);
  await raw.waitFor(() => pong() >= 0, 20000).catch(() => {
    assert.fail(`agentty stopped answering after ${String(JSON.stringify(frame)).slice(0, 120)} ` +
      `(exit: ${raw.child.exitCode ?? raw.child.signalCode})`);
  });
  raw.messages.splice(pong(), 1);
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
  // What cannot be read cannot be told from a request: refused like one.
  const response = await survives(raw, `{"jsonrpc":"2.0","id":3,"result":${deep(300000)}}`, 3);
  assert.equal(response?.error?.code, -32600);
  const notification = await survives(raw, `{"jsonrpc":"2.0","method":"notifications/x","params":{"a":${deep(300000)}}}`, null);
  assert.equal(notification?.error?.code, -32600);
  // Unclosed: cannot be parsed, and is not read as nested either.
  const open = await survives(raw, `{"jsonrpc":"2.0","id":4,"method":"ping","params":${'['.repeat(1000000)}`, 4);
  assert.equal(open?.id, 4);
  // Nesting a client may really send is read as before.
  const fine = await survives(raw, `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"x":${deep(40)}}}}`, 5);
  assert.deepEqual(fine.result, {});
});

// ---- raw frames ----

test('odd frames (batches, ids of every type, wrong params, cancels of unknown ids, bad bytes) are each answered or ignored, and the server reads on', async (t) => {
  const raw = rawAgentty(t);
  assert.equal((await raw.reply(0)).id, 0);
  const refusedWithNullId = async (frame, pattern) => {
    const answer = await survives(raw, frame, null);
    assert.equal(answer?.id, null, JSON.stringify(answer));
    assert.match(answer.error.message, pattern);
  };
  // A 2025-06-18 session has no batches (audit29_protocol.test.mjs: 2025-03-26 has).
  await refusedWithNullId('[{"jsonrpc":"2.0","id":1,"method":"ping"}]', /only MCP 2025-03-26 has batches/);
  await refusedWithNullId('[]', /empty batch/);
  for (const id of ['1.5', 'true', 'null', '{"a":1}', '[1]', '123456789012345678901234567890'])
    await refusedWithNullId(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`, /id must be a string or an integer/);
  await refusedWithNullId('"text"', /not an object/);
  await refusedWithNullId(Buffer.from([0xff, 0xfe, 0x00, 0x80]), /Parse error/);
  // Ids of every allowed kind come back as they were sent.
  for (const [text, id] of [['""', ''], ['"a\\u0000b"', 'a\u0000b'], ['-5', -5], ['0', 0]]) {
    const answer = await survives(raw, `{"jsonrpc":"2.0","id":${text},"method":"ping"}`, id);
    assert.deepEqual(answer?.result, {}, JSON.stringify(answer));
  }
  const wrong = [
    [{ jsonrpc: '2.0', id: 10, method: 5 }, -32600, /method must be a string/],
    [{ jsonrpc: '2.0', id: 11, method: 'tools/call', params: 'x' }, -32600, /params must be an object/],
    [{ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 1 } }, -32602, /needs a string "name"/],
    [{ jsonrpc: '1.0', id: 13, method: 'ping' }, -32600, /jsonrpc must be "2.0"/],
    [{ jsonrpc: '2.0', id: 14, method: 'resources/read', params: { uri: 5 } }, -32602, /needs a string "uri"/],
    [{ jsonrpc: '2.0', id: 15, method: 'foo/bar' }, -32601, /Method not found: foo\/bar/],
  ];
  for (const [frame, code, pattern] of wrong) {
    const answer = await survives(raw, frame, frame.id);
    assert.equal(answer?.error?.code, code, JSON.stringify(answer));
    assert.match(answer.error.message, pattern);
  }
  for (const args of [[1], 'x', 5]) {
    const answer = await survives(raw, { jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'ps', arguments: args } }, 20);
    assert.match(answer.result.structuredContent.error, /^arguments: must be an object/);
  }
  // Notifications get no answer, whatever they carry; responses are ignored.
  for (const frame of [
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'never-sent' } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: { a: [1] } } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: [1] },
    { jsonrpc: '2.0', method: 'notifications/cancelled' },
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 'x' } },
    { jsonrpc: '2.0', id: 30, result: {} },
    { jsonrpc: '2.0', id: 31, error: { code: 1, message: 'x' } },
  ]) await survives(raw, frame);
  assert.equal(raw.messages.filter((m) => m.id !== null && typeof m.id !== 'string').length, 0,
    JSON.stringify(raw.messages));
});

// ---- schema-driven fuzzing of every tool ----

// A small seeded PRNG (mulberry32): the same seed gives the same calls.
function prng(seed) {
  let a = seed;
  const next = () => {
    a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { int, chance: (p) => next() < p, pick: (list) => list[int(list.length)] };
}

// What the fuzzer may run: harmless programs only. It fuzzes every other
// argument; `command`, `argv`, `script`, `host` and write's `input` into a
// shell come from these lists (a random command line could be anything).
const SAFE = {
  command: ['echo hi', 'true', 'false', 'sleep 0.1', 'cat', "printf 'a\\nb'", 'sleep 600', 'seq 1 3000', 'exit 3'],
  argv: [['echo', 'x'], ['true'], ['sleep', '0.1'], ['cat'], ['printf', '%s\\n', 'y'], ['/nonexistent/prog'], ['sleep', '600']],
  script: ['echo hi', 'if then', 'for i in 1 2; do echo $i; done', 'echo a\necho b\n', 'echo "unterminated'],
  // Nothing listens on port 1: a connection is refused at once.
  host: ['127.0.0.1:1', 'user@127.0.0.1:1', '-oProxyCommand=true', 'a b', ':', '@', '[::1', 'x:99999', 'u@'],
};
// Variables that would make bash read a file or change what runs.
const RISKY_ENV = new Set(['BASH_ENV', 'ENV', 'ZDOTDIR', 'PROMPT_COMMAND', 'LD_PRELOAD', 'LD_LIBRARY_PATH',
  'PATH', 'SHELLOPTS', 'BASHOPTS', 'HOME', 'IFS', 'PS4']);

function fuzzer(seed) {
  const { int, chance, pick } = prng(seed);
  const text = () => pick([
    '', 'x', 'a\u0000b', '\ud800', '\udc00x', '😀😀', 'x'.repeat(pick([129, 257, 1001, 4097, 70000])),
    '\x1b[31m\r\n\t\x7f', 'NaN', 'Infinity', '-1', '1e999', 'null', '0x10', ' 5 ', '../../../../etc/passwd',
    '$(echo x)`id`;|&', '\u202e\ufeff\u200b', String.fromCharCode(1 + int(0xd7ff), 1 + int(0xd7ff)),
  ]);
  const goodNumber = (s) => pick([s.minimum, s.maximum, s.minimum, Math.floor((s.minimum + s.maximum) / 2),
    s.minimum + int(Math.min(1000, s.maximum - s.minimum + 1)), 0, 1, 100]);
  const badNumber = (s) => pick([s.minimum - 1, s.maximum + 1, -1, -2147483649, 2147483648, 4294967296,
    9007199254740993, 1e19, 1e300, -1e300, 0.5, 1.5, -Number.MAX_SAFE_INTEGER, 18446744073709551615]);
  const wrongType = (s) => {
    const options = [null, true, 0, -5, 'text', [], {}, ['a'], { a: 1 }, 1.25, '', '1'];
    for (;;) {
      const v = pick(options);
      const matches = s.type === 'integer' ? Number.isInteger(v) : s.type === 'array' ? Array.isArray(v)
        : s.type === 'object' ? v !== null && typeof v === 'object' && !Array.isArray(v) : typeof v === s.type;
      if (!matches) return v;
    }
  };
  const nested = (n) => {
    let v = 'x';
    for (let i = 0; i < n; i++) v = chance(0.5) ? [v] : { k: v };
    return v;
  };
  const value = (tool, name, s, ids) => {
    if (name === 'execution_id' || name === 'session') return ids(tool, name);
    if (SAFE[name]) return pick(SAFE[name]);
    if (name === 'input' && tool === 'write') return chance(0.5) ? text() : pick(['hello', 'a\nb\n', '\x03', '\x04']);
    if (s.enum) return pick(s.enum);
    switch (s.type) {
      case 'string': return chance(0.4) ? text() : pick(['/', '/tmp', 'ok', 'a.*b', '(', '\\d+', 'x{99999}']);
      case 'integer': case 'number': return goodNumber(s);
      case 'boolean': return chance(0.5);
      case 'array': {
        const items = Array.from({ length: (s.minItems ?? 0) + int(3) }, () => value(tool, '', s.items ?? {}, ids));
        return s.uniqueItems ? [...new Map(items.map((x) => [JSON.stringify(x), x])).values()] : items;
      }
      case 'object': {
        const out = {};
        for (let i = int(4); i > 0; i--) {
          const key = pick(['A', 'MY_VAR', '', 'A=B', 'a\u0000b', '😀', '1ABC', 'x'.repeat(300)]);
          if (!RISKY_ENV.has(key)) out[key] = chance(0.8) ? pick(['1', 'value', '', 'secret-value-123']) : text();
        }
        return out;
      }
      default: return null;
    }
  };
  // One call's arguments: a valid-looking set, then 0-2 mutations.
  return (tool, ids) => {
    const props = tool.inputSchema.properties ?? {};
    const required = tool.inputSchema.required ?? [];
    const names = Object.keys(props);
    const args = {};
    for (const name of names) if (required.includes(name) || chance(0.3)) args[name] = value(tool.name, name, props[name], ids);
    const mutations = [];
    const free = names.filter((n) => !['command', 'argv', 'script', 'host'].includes(n));
    for (let n = chance(0.3) ? 0 : 1 + int(2); n > 0 && free.length; n--) {
      const name = pick(free);
      const s = props[name];
      switch (int(8)) {
        case 0: args[name] = wrongType(s); mutations.push(`wrong type ${name}`); break;
        case 1: if (s.type === 'integer') { args[name] = badNumber(s); mutations.push(`bad number ${name}`); } break;
        case 2: if (required.length) { const r = pick(required); delete args[r]; mutations.push(`missing ${r}`); } break;
        case 3: {
          const key = pick(['unknown', '', 'a.b', 'ä', 'a\u0000', 'x'.repeat(5000), 'id', 'cmd', 'timeout', 'constructor']);
          args[key] = pick([1, 'x', null, {}]);
          mutations.push(`unknown ${JSON.stringify(key).slice(0, 12)}`);
          break;
        }
        case 4: if (s.type === 'string') { args[name] = text(); mutations.push(`text ${name}`); } break;
        case 5: args[name] = nested(1 + int(60)); mutations.push(`nested ${name}`); break;
        case 6: if (s.type === 'array') { args[name] = pick([[], [null], Array(200).fill(s.items?.enum?.[0] ?? 'x'), ['x', 'x'], [[]]]); mutations.push(`array ${name}`); } break;
        default: if (s.enum) { args[name] = pick(['', 'X', String(s.enum[0]).toUpperCase(), ` ${s.enum[0]}`]); mutations.push(`enum ${name}`); }
      }
    }
    if (tool.name === 'execute' && chance(0.05)) { args.argv = pick(SAFE.argv); args.command = pick(SAFE.command); mutations.push('command and argv'); }
    return { args, mutations, int, pick };
  };
}

function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], ppid: Number(fields[1]), threads: Number(fields[17]) };
  } catch {
    return null;
  }
}
const processIds = () => readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
const zombieChildren = (pid) => processIds().filter((p) => {
  const stat = procStat(p);
  return stat?.ppid === pid && stat.state === 'Z';
});
// Live processes whose environment holds `marker` (everything agentty starts inherits it).
const markedProcesses = (marker) => processIds().filter((p) => {
  const stat = procStat(p);
  if (!stat || stat.state === 'Z') return false;
  try {
    return readFileSync(`/proc/${p}/environ`, 'latin1').includes(marker);
  } catch {
    return false;
  }
});

const SEED = Number(process.env.AUDIT15_SEED ?? 15);
const CASES = Number(process.env.AUDIT15_CASES ?? 150);

test(`${CASES} fuzzed calls of every tool (seed ${SEED}): each answers in schema or names the argument, the server lives, and nothing leaks`, async (t) => {
  const marker = `AUDIT15_FUZZ_${crypto.randomBytes(6).toString('hex')}`;
  const agent = await startAgentty({ env: { [marker]: '1' } });
  const pid = agent.transport.pid;
  t.after(async () => {
    await agent.client.close().catch(() => {});
    for (const p of markedProcesses(marker)) try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
  });
  const { call } = agent;
  const { tools } = await agent.client.listTools();
  const ajv = new Ajv({ strict: false, allErrors: true });
  const outputValid = Object.fromEntries(tools.map((tool) => [tool.name, ajv.compile(tool.outputSchema)]));
  // The contract the fuzzer relies on: every number bounded, no argument unknown to the schema.
  for (const tool of tools) {
    assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
    for (const [name, s] of Object.entries(tool.inputSchema.properties ?? {})) {
      if (s.type === 'integer') assert.ok(s.minimum !== undefined && s.maximum !== undefined, `${tool.name}.${name}`);
    }
  }

  // What a server with nothing running holds: its spare terminal is made
  // after the first program ends.
  await call('execute', { command: 'true', side_effects: ['NONE'] });
  await eventually(() => holdsPtyMaster(pid), { what: 'the spare terminal' });
  const baseline = openFds(pid);

  // Ids to aim at: running programs (sleep, cat), a session, ended and pruned records.
  const started = async (args) => {
    const r = await call('execute', { side_effects: ['NONE'], yield_ms: 0, ...args });
    assert.equal(r.isError, false, r.error);
    return r.execution_id;
  };
  const pruned = await started({ command: 'true', yield_ms: 10000 });
  await call('cleanup', { completed_older_than_ms: 0 });
  const pool = { cleaned: [pruned], done: [await started({ command: 'echo done', yield_ms: 10000 })] };
  const refill = async () => {
    const live = (await call('ps', { include_completed: false })).executions;
    const first = (test) => live.find(test)?.execution_id;
    pool.running = first((e) => e.command === 'sleep 600') ?? await started({ command: 'sleep 600' });
    pool.cat = first((e) => e.command === 'cat') ?? await started({ command: 'cat' });
    pool.session = first((e) => e.kind === 'session') ?? (await call('open', {})).execution_id;
    pool.pid = String(live.find((e) => e.process_id)?.process_id ?? 1);
    for (const e of live) {
      if (![pool.running, pool.cat, pool.session].includes(e.execution_id)) {
        await call('stop', { execution_id: e.execution_id, signal: 'SIGKILL', force_after_ms: 0 });
      }
    }
  };
  await refill();
  const generate = fuzzer(SEED);
  const ids = (tool, name) => {
    // Never a session for write: its input would be typed into a shell.
    const kinds = ['running', 'cat', 'done', 'cleaned', 'unknown', 'pid', 'odd', ...(tool === 'write' && name !== 'session' ? [] : ['session'])];
    const { pick } = generate.rng;
    switch (pick(kinds)) {
      case 'running': return pool.running;
      case 'cat': return pool.cat;
      case 'session': return pool.session;
      case 'done': return pick(pool.done);
      case 'cleaned': return pick(pool.cleaned);
      case 'pid': return pool.pid;
      case 'unknown': return crypto.randomBytes(6).toString('hex');
      default: return pick(['', ' ', 'x'.repeat(129), '../x', '\u0000', '%s%n', '😀', 'null', '-1']);
    }
  };
  generate.rng = prng(SEED + 1);

  const problems = [];
  for (let i = 0; i < CASES; i++) {
    const tool = generate.rng.pick(tools);
    const { args, mutations } = generate(tool, ids);
    const what = `case ${i} (seed ${SEED}): ${tool.name} ${JSON.stringify(args).slice(0, 300)} [${mutations.join(', ')}]`;
    // A call that blocks (a wait, a long yield) is cancelled: that is a path to fuzz too.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 1500);
    let result;
    try {
      result = await agent.client.callTool({ name: tool.name, arguments: args }, undefined, { signal: controller.signal, timeout: 60000 });
    } catch (error) {
      if (!controller.signal.aborted) problems.push(`${what}: JSON-RPC error ${error}`);
    } finally {
      clearTimeout(timer);
    }
    const content = result?.structuredContent;
    if (result && !content) problems.push(`${what}: no structuredContent`);
    if (content && !outputValid[tool.name](content)) {
      problems.push(`${what}: outside the outputSchema: ${JSON.stringify(outputValid[tool.name].errors).slice(0, 300)}`);
    }
    if (result?.isError) {
      // "name: ..." or "name 'value' ...", with name an argument of the call or the tool (or a quoted odd key).
      const head = String(content?.error ?? '').split(/:| '/)[0];
      const known = [...Object.keys(tool.inputSchema.properties ?? {}), ...Object.keys(args), 'arguments'];
      const named = head.startsWith('"') || known.includes(head) || head.split(/[/[. ]/).some((part) => known.includes(part)) ||
        /^Blocked by policy.*side_effects/.test(content?.error);
      if (!named) problems.push(`${what}: error names no argument: ${String(content?.error).slice(0, 200)}`);
    }
    if (content?.execution_id && !Object.values(pool).flat().includes(content.execution_id)) {
      if (['running', 'backgrounded'].includes(content.status)) {
        await call('stop', { execution_id: content.execution_id, signal: 'SIGKILL', force_after_ms: 0 });
      }
      pool.done.push(content.execution_id);
    }
    await agent.client.ping({ timeout: 20000 }).catch((error) => {
      throw new Error(`${what}: no answer to ping after it (${error}; agentty ${procStat(pid) ? 'alive' : 'gone'})`);
    });
    if (i % 25 === 24) await refill();
  }
  assert.deepEqual(problems, []);

  // Everything ended and pruned: no zombie, no fd beyond where it started,
  // nothing left after exit.
  for (const e of (await call('ps', { include_completed: false })).executions) {
    await call(e.kind === 'session' ? 'close' : 'stop', { execution_id: e.execution_id });
  }
  await call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  await eventually(() => zombieChildren(pid).length === 0, { what: 'no zombie children' });
  let fds;
  await eventually(() => (fds = openFds(pid)) <= baseline, { what: `fds back to ${baseline}` }).catch(() => {
    assert.fail(`${fds} fds open after everything ended (${baseline} at the start): ${readdirSync(`/proc/${pid}/fd`).map((fd) => {
      try { return readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return fd; }
    }).join(' ')}`);
  });
  await agent.client.close();
  await eventually(() => markedProcesses(marker).length === 0, { timeout: 10000, what: 'every program gone after exit' });
});

// ---- a pattern PCRE2 gives up on ----

test('wait on a pattern PCRE2 gives up on (nested repeats) says so at once, instead of never matching', async (t) => {
  const agent = await startAgentty();
  // ^(a+)+$ against 29 a's and an X: PCRE2 tries every split of the a's and
  // stops at its match limit. explore already said so; wait answered as if
  // there were no match (deadline_reached, or exited).
  const line = `${'a'.repeat(29)}X`;
  const ended = await agent.call('execute', { command: `printf '${line}\\n%.0s' 1 2 3`, side_effects: ['NONE'] });
  assert.equal(ended.status, 'completed', JSON.stringify(ended));
  const onEnded = await agent.call('wait', { execution_id: ended.execution_id, pattern: '^(a+)+$', since_seq: 1 });
  assert.equal(onEnded.isError, true, JSON.stringify(onEnded));
  assert.match(onEnded.error, /^pattern: matching failed: match limit exceeded; simplify the regular expression/);
  const running = await agent.startCommand(t, { command: `printf '${line}\\n'; exec sleep 600`, yield_ms: 0 });
  t.after(() => agent.client.close());  // after startCommand's stop (hooks run in order)
  const started = Date.now();
  // since_seq: execute's own answer (yield_ms 0) may already hold the line
  // and move the cursor past it; the search must see it either way.
  const onRunning = await agent.call('wait', { execution_id: running.execution_id, pattern: '^(a+)+$', since_seq: 1, timeout_ms: 30000 });
  assert.equal(onRunning.isError, true, JSON.stringify(onRunning));
  assert.match(onRunning.error, /^pattern: matching failed/);
  assert.ok(Date.now() - started < 20000, `answered after ${Date.now() - started} ms`);
  assert.equal(onRunning.status, 'running');
  // The same pattern on text it can decide still matches.
  const fine = await agent.call('wait', { execution_id: running.execution_id, pattern: '^(a+)+X$', since_seq: 1, timeout_ms: 30000 });
  assert.equal(fine.wait_result, 'matched', JSON.stringify(fine));
});
