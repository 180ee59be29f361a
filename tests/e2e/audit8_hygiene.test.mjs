// End-to-end: resource hygiene of the local server under a careless client
// (audit 8): request ids reused while in flight, a client that floods stdin
// without reading its answers, endless output lines, text caches and the
// spool budget, files left by a server killed outright, secrets in commands,
// explore after eviction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { agenttyBin, startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { eventually } from './lib/web-helpers.mjs';
import { rawAgentty } from './lib/raw-agentty.mjs';

function rssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
}

function listDir(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// Bytes of every file in `dir`.
function dirBytes(dir) {
  return listDir(dir).reduce((sum, name) => {
    try {
      return sum + statSync(path.join(dir, name)).size;
    } catch {
      return sum;
    }
  }, 0);
}

// Closed after the test `t`, which ends what it still runs.
async function agentFor(t, options) {
  const agent = await startAgentty(options);
  t.after(() => agent.client.close().catch(() => {}));
  return agent;
}

// ---- 1. a request id reused while its request runs ----

test('a request reusing the id of one in progress is refused after it, so the first call gets its own answer', async (t) => {
  const raw = rawAgentty(t);
  await raw.waitFor(() => raw.messages.some((m) => m.id === 0));
  raw.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'execute', arguments: { command: 'sleep 1; echo first-answer', side_effects: ['NONE'] } } });
  // Sent while id 7 runs: another call and a ping with the same id.
  raw.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ps', arguments: {} } });
  raw.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
  raw.send({ jsonrpc: '2.0', id: 8, method: 'ping' });  // other ids are answered at once
  await raw.waitFor(() => raw.messages.filter((m) => m.id === 7).length === 3);
  const sevens = raw.messages.filter((m) => m.id === 7);
  assert.match(sevens[0].result?.structuredContent?.output ?? '', /first-answer/, JSON.stringify(sevens[0]));
  for (const refusal of sevens.slice(1)) {
    assert.equal(refusal.error?.code, -32600, JSON.stringify(refusal));
    assert.match(refusal.error.message, /id 7 is the id of a request still in progress/);
  }
  assert.ok(raw.messages.findIndex((m) => m.id === 8) < raw.messages.indexOf(sevens[0]), 'ping 8 waited for call 7');
  // Once the first is done the id is free again.
  raw.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
  await raw.waitFor(() => raw.messages.filter((m) => m.id === 7).length === 4);
  assert.deepEqual(raw.messages.filter((m) => m.id === 7)[3].result, {});
  // A notification sent with an id is read as a request, and the refusal says so.
  raw.send({ jsonrpc: '2.0', id: 9, method: 'notifications/cancelled', params: { requestId: 7 } });
  await raw.waitFor(() => raw.messages.some((m) => m.id === 9));
  assert.match(raw.messages.find((m) => m.id === 9).error.message, /as a request \(it has an id\); send notifications without an id/);
});

test('the SDK call whose id another message reuses still resolves with its own result', async (t) => {
  const agent = await agentFor(t);
  const send = agent.transport.send.bind(agent.transport);
  let callId;
  agent.transport.send = (message, options) => {
    if (message.method === 'tools/call' && message.params?.name === 'execute') callId = message.id;
    return send(message, options);
  };
  const errors = [];
  agent.client.onerror = (error) => errors.push(error);
  const pending = agent.call('execute', { command: 'sleep 0.5; echo mine', side_effects: ['NONE'] });
  await eventually(() => callId !== undefined, { what: 'the call to be sent' });
  await send({ jsonrpc: '2.0', id: callId, method: 'ping' });
  const r = await pending;
  assert.equal(r.isError, false, r.error);
  assert.match(r.output, /mine/);
  // The refusal came after, for an id the SDK had finished with: reported, not matched.
  await eventually(() => errors.some((e) => /unknown message ID/.test(String(e))), { what: 'the late refusal' });
});

test('calls in progress are bounded: past 1000 a call is refused saying why, and the others still answer', async (t) => {
  const raw = rawAgentty(t);
  raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'execute', arguments: { command: 'sleep 120', side_effects: ['NONE'], yield_ms: 0 } } });
  await raw.waitFor(() => raw.messages.some((m) => m.id === 1));
  const id = raw.messages.find((m) => m.id === 1).result.structuredContent.execution_id;
  for (let i = 0; i < 1000; i++) {
    raw.send({ jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'wait', arguments: { execution_id: id, until: 'exit', timeout_ms: 55000 } } });
  }
  raw.send({ jsonrpc: '2.0', id: 5000, method: 'tools/call', params: { name: 'ps', arguments: {} } });
  await raw.waitFor(() => raw.messages.some((m) => m.id === 5000));
  const refused = raw.messages.find((m) => m.id === 5000).result;
  assert.equal(refused.isError, true);
  assert.match(refused.structuredContent.error, /too many calls in progress \(1000/);
  raw.send({ jsonrpc: '2.0', id: 5001, method: 'ping' });  // not a call: answered
  await raw.waitFor(() => raw.messages.some((m) => m.id === 5001));
  // A cancelled call makes room at once.
  raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 100 } });
  raw.send({ jsonrpc: '2.0', id: 5002, method: 'ping' });  // answered once the cancellation is under way
  await raw.waitFor(() => raw.messages.some((m) => m.id === 5002));
  raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'stop', arguments: { execution_id: id } } });
  await raw.waitFor(() => raw.messages.some((m) => m.id === 2));
  assert.equal(raw.messages.find((m) => m.id === 2).result.structuredContent.stopped, true);
  await raw.waitFor(() => raw.messages.filter((m) => m.id > 100 && m.id < 1100).length === 999, 30000);
  assert.ok(raw.messages.filter((m) => m.id > 100 && m.id < 1100).every((m) => m.result?.structuredContent?.wait_result === 'exited'));
});

// ---- 5. a client that floods requests and never reads the answers ----

test('stdin flooded by a client that does not read its answers: agentty stops reading, memory stays bounded, every request is answered', async (t) => {
  const raw = rawAgentty(t);
  await raw.waitFor(() => raw.messages.some((m) => m.id === 0));
  raw.child.stdout.pause();  // the client reads nothing: agentty's answers fill the pipe
  const rssBefore = rssBytes(raw.child.pid);
  const total = 12000;
  let sent = 0;
  let blocked = false;
  // Answers of some size: agentty queues up to 16 MiB of answers unread
  // (so it keeps serving programs and viewers), then stops reading.
  while (sent < total && !blocked) {
    const ok = raw.child.stdin.write(`{"jsonrpc":"2.0","id":${1000 + sent},"method":"tools/list"}\n`);
    sent++;
    if (!ok) {
      // Backpressure: agentty's reader must stop taking lines at some point.
      blocked = !(await Promise.race([
        new Promise((resolve) => raw.child.stdin.once('drain', () => resolve(true))),
        new Promise((resolve) => setTimeout(() => resolve(false), 3000)),
      ]));
    }
  }
  const grown = rssBytes(raw.child.pid) - rssBefore;
  assert.ok(blocked, `agentty read all ${sent} requests without its answers being read`);
  assert.ok(grown < 60e6, `agentty grew by ${(grown / 1e6).toFixed(1)} MB while its client did not read`);
  // The client reads again: nothing was dropped.
  raw.child.stdout.resume();
  while (sent < total) {
    if (!raw.child.stdin.write(`{"jsonrpc":"2.0","id":${1000 + sent},"method":"ping"}\n`)) {
      await new Promise((resolve) => raw.child.stdin.once('drain', resolve));
    }
    sent++;
  }
  await raw.waitFor(() => raw.messages.filter((m) => m.id >= 1000).length === total, 60000);
  const ids = new Set(raw.messages.filter((m) => m.id >= 1000 && m.result).map((m) => m.id));
  assert.equal(ids.size, total);
});

// ---- 2. one endless line ----

test('explore on an endless line (no newline) keeps it on disk, not in memory, and still finds its end', async (t) => {
  const agent = await agentFor(t);
  const size = 30_000_000 + 6 + 3_000_000 + 3;
  const r = await agent.call('execute', {
    command: "head -c 30000000 /dev/zero | tr '\\0' a; printf MIDDLE; head -c 3000000 /dev/zero | tr '\\0' b; printf END; sleep 60",
    side_effects: ['NONE'], yield_ms: 0,
  });
  await eventually(async () => (await agent.call('ps', {})).executions[0].latest_seq === size + 1,
    { timeout: 30000, what: 'all of the line' });
  const before = rssBytes(agent.transport.pid);
  const stat = await agent.call('explore', { execution_id: r.execution_id, op: 'stat' });
  assert.equal(stat.line_count, 1);
  assert.equal(stat.max_line_bytes, size);
  assert.equal(stat.size_bytes, size);
  const grep = await agent.call('explore', { execution_id: r.execution_id, op: 'grep', pattern: 'aMIDDLEb' });
  assert.equal(grep.matches.length, 1);
  assert.equal(grep.matches[0].line, 1);
  const end = await agent.call('explore', { execution_id: r.execution_id, op: 'grep', pattern: 'bbEND$' });
  assert.equal(end.matches.length, 1, JSON.stringify(end).slice(0, 500));
  const tail = await agent.call('explore', { execution_id: r.execution_id, op: 'read', line_offset: 0, byte_offset: size - 5 });
  assert.equal(tail.lines[0].text, 'bbEND');
  const grown = rssBytes(agent.transport.pid) - before;
  assert.ok(grown < 15e6, `explore of one ${size}-byte line grew agentty by ${(grown / 1e6).toFixed(1)} MB`);
});

// ---- 7. explore after eviction ----

test('explore after the spool cap evicted the beginning starts at the first whole line and says so', async (t) => {
  const agent = await agentFor(t, { env: { AGENTTY_MAX_SPOOL_BYTES: '1000000' }, args: ['--ram-bytes', '65536'] });
  const r = await agent.call('execute', { command: 'seq 1 1000000', side_effects: ['NONE'], max_output_bytes: 1000 });
  assert.equal(r.status, 'completed');
  const read = await agent.call('explore', { execution_id: r.execution_id, op: 'read', line_offset: 0, limit: 3 });
  assert.equal(read.evicted, true);
  assert.match(read.message, /gone for good.*Line 1 is the first whole line left/s);
  assert.ok(read.text_start_seq > read.first_retained_seq || read.text_start_seq === read.first_retained_seq);
  const [a, b, c] = read.lines.map((l) => l.text);
  assert.ok(/^\d+$/.test(a), a);
  assert.equal(Number(b), Number(a) + 1, `line 1 '${a}' is not a whole line before '${b}'`);
  assert.equal(Number(c), Number(a) + 2);
  const last = await agent.call('explore', { execution_id: r.execution_id, op: 'read', line_offset: -1 });
  assert.equal(last.lines[0].text, '1000000');
  const stat = await agent.call('explore', { execution_id: r.execution_id, op: 'stat' });
  assert.equal(stat.line_count, 1000000 - Number(a) + 1);
  const grep = await agent.call('explore', { execution_id: r.execution_id, op: 'grep', pattern: `^${Number(a) + 1}$` });
  assert.equal(grep.matches[0].line, 2);
  assert.equal(grep.evicted, true);
});

// ---- 3. text caches count in the total spool budget ----

test('explore text caches count toward AGENTTY_MAX_TOTAL_SPOOL_BYTES', async (t) => {
  const budget = 8_000_000;
  const agent = await agentFor(t, { env: { AGENTTY_MAX_TOTAL_SPOOL_BYTES: String(budget) } });
  const spool = path.join(agent.stateDir, 'spool');
  const r = await agent.call('execute', { command: 'seq 1 700000', side_effects: ['NONE'], max_output_bytes: 1000 });
  assert.equal(r.status, 'completed');
  const bytes = 4_888_896;  // seq 1 700000 | wc -c, as the terminal's CR LF
  for (const op of ['stat', 'grep', 'read']) {
    const args = op === 'grep' ? { pattern: '^699999$' } : op === 'read' ? { line_offset: -1 } : {};
    const answer = await agent.call('explore', { execution_id: r.execution_id, op, ...args });
    assert.equal(answer.isError, false, answer.error);
    if (op === 'grep') assert.equal(answer.matches[0].line, 699999);
    if (op === 'read') assert.equal(answer.lines[0].text, '700000');
    assert.ok(dirBytes(spool) <= budget, `after ${op}: ${dirBytes(spool)} bytes in ${spool} (${listDir(spool)}), budget ${budget}`);
  }
  assert.ok(dirBytes(spool) >= bytes - 1_100_000, 'the spool itself is kept');
});

// ---- file descriptors of retained records ----

test('ended records hold no file open: their spools and text caches are opened per read', async (t) => {
  const agent = await agentFor(t);
  const fds = () => readdirSync(`/proc/${agent.transport.pid}/fd`).length;
  const ids = [];
  const run = async () => {
    const r = await agent.call('execute', { command: 'seq 1 100000', side_effects: ['NONE'], max_output_bytes: 100 });
    assert.equal(r.status, 'completed');
    const stat = await agent.call('explore', { execution_id: r.execution_id, op: 'stat' });
    assert.equal(stat.line_count, 100000);
    ids.push(r.execution_id);
  };
  await run();
  const before = fds();
  for (let i = 0; i < 40; i++) await run();
  // Was two per record (spool and text cache): a client under `ulimit -n 256`
  // could not start anything after ~120 of them.
  assert.ok(fds() - before < 10, `${fds() - before} more fds after 40 explored records`);
  for (const id of [ids[0], ids[20]]) {
    const page = await agent.call('read', { execution_id: id, since_seq: 1, max_output_bytes: 10 });
    assert.match(page.output, /^1\n2\n/);
    const last = await agent.call('explore', { execution_id: id, op: 'read', line_offset: -1 });
    assert.equal(last.lines[0].text, '100000');
  }
});

// ---- 4. files of a server killed outright ----

test("a server killed with SIGKILL leaves spool, session and script files that the next server removes, never a live one's", async (t) => {
  const stateDir = tempDirForRun('agentty-audit8-shared-');
  const footprint = async (agent) => {
    const big = await agent.call('execute', { command: 'seq 1 100000', side_effects: ['NONE'], max_output_bytes: 100 });
    await agent.call('explore', { execution_id: big.execution_id, op: 'stat' });  // a text cache
    const session = await agent.call('open', {});
    assert.equal(session.isError, false, session.error);
    const script = await agent.call('execute', { script: 'echo scripted\n', side_effects: ['NONE'] });
    assert.match(script.output, /scripted/);
    return big.execution_id;
  };
  const owned = () => ({
    spool: listDir(path.join(stateDir, 'spool')),
    sessions: listDir(path.join(stateDir, 'sessions')),
    scripts: listDir(path.join(stateDir, 'scripts')),
  });
  const doomed = await startAgentty({ stateDir });
  await footprint(doomed);
  const left = owned();
  const live = await agentFor(t, { stateDir });
  const liveId = await footprint(live);
  const both = owned();
  assert.equal(both.spool.length, 2 * left.spool.length);
  assert.ok(left.spool.length >= 2 && left.sessions.length === 1 && left.scripts.length === 1, JSON.stringify(left));
  process.kill(doomed.transport.pid, 'SIGKILL');
  await doomed.client.close().catch(() => {});
  const next = await agentFor(t, { stateDir });
  const after = owned();
  for (const kind of ['spool', 'sessions', 'scripts']) {
    for (const name of left[kind]) assert.ok(!after[kind].includes(name), `${kind}/${name} of the killed server is still there`);
    for (const name of both[kind].filter((n) => !left[kind].includes(n)))
      assert.ok(after[kind].includes(name), `${kind}/${name} of the live server was removed`);
  }
  // The live server's output is intact.
  const page = await live.call('read', { execution_id: liveId, since_seq: 1, max_output_bytes: 20 });
  assert.match(page.output, /^1\n2\n3\n/);
  const stat = await live.call('explore', { execution_id: liveId, op: 'stat' });
  assert.equal(stat.line_count, 100000);
  assert.equal((await next.call('ps', {})).executions.length, 0);
});

// ---- 6. secrets in commands and purposes ----

test('a secret in a command or purpose is redacted in ps, session refusals, the web API and the audit log', async (t) => {
  const secret = 'hunter2-audit8-value';
  const overlay = 'overlay-audit8-secret';
  const token = 'a'.repeat(64);
  const agent = await agentFor(t, {
    env: { AUDIT8_SECRET: secret, AGENTTY_REDACT_ENV_REGEX: '^AUDIT8_', AGENTTY_WEB_TOKEN: token, AGENTTY_DENY_COMMAND_REGEX: 'forbidden' },
  });
  const r = await agent.call('execute', {
    command: `echo ${secret} >/dev/null; sleep 30`, purpose: `deploy with ${secret}`, name: 'deploy',
    side_effects: ['NONE'], yield_ms: 0,
  });
  // An overlay's value is a secret from the moment it is given, even for a refused start.
  const refused = await agent.call('execute', {
    command: `forbidden ${overlay}`, env: { AUDIT8_TOKEN: overlay }, side_effects: ['NONE'],
  });
  assert.equal(refused.status, 'failed_to_start');
  const ps = await agent.call('ps', {});
  const item = ps.executions.find((e) => e.execution_id === r.execution_id);
  assert.equal(item.command, 'echo [REDACTED:AUDIT8_SECRET] >/dev/null; sleep 30');
  assert.equal(item.purpose, 'deploy with [REDACTED:AUDIT8_SECRET]');
  const url = new URL(r.terminal_url);
  const list = await (await fetch(`${url.origin}/api/executions`, { headers: { 'X-Agentty-Token': token } })).text();
  assert.ok(!list.includes(secret), list);
  assert.match(list, /REDACTED:AUDIT8_SECRET/);
  const one = await (await fetch(`${url.origin}/api/executions/${r.execution_id}`, { headers: { 'X-Agentty-Token': token } })).text();
  assert.ok(!one.includes(secret), one);
  // A session's running command: in ps and in the refusal of the next one.
  const session = await agent.call('open', {});
  assert.equal(session.isError, false, session.error);
  const running = await agent.call('execute', { session: session.execution_id, command: `sleep 30 # ${secret}`, side_effects: ['NONE'], yield_ms: 200 });
  assert.equal(running.status, 'backgrounded', JSON.stringify(running));
  // 200 ms may pass before a loaded machine's shell has started the line (a
  // line typed but not started is refused with another message): the
  // running command is known once it has (its C mark).
  const listed = () => agent.call('ps', {}).then((ps) => ps.executions.find((e) => e.execution_id === session.execution_id));
  await eventually(async () => (await listed()).running_command, { timeout: 30000, what: 'the session\'s command to start' });
  const busy = await agent.call('execute', { session: session.execution_id, command: 'true', side_effects: ['NONE'] });
  assert.match(busy.error, /still running in this session \(sleep 30 # \[REDACTED:AUDIT8_SECRET\]\)/);
  const shown = await listed();
  assert.equal(shown.running_command, 'sleep 30 # [REDACTED:AUDIT8_SECRET]');
  assert.match(shown.command, /running: sleep 30 # \[REDACTED:AUDIT8_SECRET\]$/);
  const audit = readFileSync(path.join(agent.stateDir, 'audit.jsonl'), 'utf8');
  assert.ok(!audit.includes(secret), 'the audit log holds the secret');
  assert.ok(!audit.includes(overlay), 'the audit log holds the overlay secret of a refused start');
  assert.match(audit, /REDACTED/);
});
