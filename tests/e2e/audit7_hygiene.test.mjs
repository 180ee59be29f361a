// End-to-end: a long-lived agentty under a careless or hostile client loses
// nothing and leaks nothing. Every program is found afterwards through a
// marker variable in agentty's environment (inherited by everything it
// starts), so an orphan anywhere on the machine is seen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agenttyBin, startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { eventually } from './lib/web-helpers.mjs';
import { holdsPtyMaster } from './lib/proc-stats.mjs';
import { rawAgentty } from './lib/raw-agentty.mjs';
import { openTerminalSocket } from './lib/terminal-viewer.mjs';

// ---- /proc ----

function processIds() {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
}

function readProc(pid, file) {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return '';
  }
}

// Live (not zombie) processes whose environment holds `marker`.
function markedProcesses(marker) {
  return processIds().filter((pid) => {
    const stat = readProc(pid, 'stat');
    return stat && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z' &&
      readProc(pid, 'environ').includes(marker);
  }).map((pid) => `${pid} ${readProc(pid, 'cmdline').replace(/\0/g, ' ').trim()}`);
}

function killMarked(marker) {
  for (const line of markedProcesses(marker)) {
    try { process.kill(Number(line.split(' ')[0]), 'SIGKILL'); } catch { /* gone */ }
  }
}

function listDir(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// An agentty whose every program carries a marker; killed with what it
// started after the test, whatever happens.
async function markedAgentty(t, { env = {}, ...options } = {}) {
  const marker = `AUDIT7_HYGIENE_${crypto.randomBytes(6).toString('hex')}`;
  const agent = await startAgentty({ env: { [marker]: '1', ...env }, ...options });
  const pid = agent.transport.pid;
  const stderr = [];
  agent.transport.stderr?.on('data', (data) => stderr.push(String(data)));
  const exited = new Promise((resolve) => {
    const child = agent.transport._process;
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  t.after(async () => {
    await agent.client.close().catch(() => {});
    killMarked(marker);
  });
  return { ...agent, marker, pid, exited, stderr };
}

const noneLeft = (marker) => eventually(() => markedProcesses(marker).length === 0,
  { timeout: 10000, what: 'every program to end' }).catch(() => {
  throw new Error(`left running:\n${markedProcesses(marker).join('\n')}`);
});

// ---- a WebSocket viewer (the terminal page's protocol, no browser) ----

const TOKEN = crypto.randomBytes(32).toString('hex');

// ---- a session's rc files ----

test("a session's generated rc files go when it ends, and a refused open leaves none", async (t) => {
  const agent = await markedAgentty(t, { env: { AGENTTY_MAX_SESSIONS: '1' } });
  const sessionsDir = path.join(agent.stateDir, 'sessions');
  for (let i = 0; i < 5; i++) {
    const session = await agent.call('open', {});
    assert.equal(session.isError, false, session.error);
    assert.equal(listDir(sessionsDir).length, 1);
    // Refused by the limit after its rc files were written.
    const refused = await agent.call('open', {});
    assert.match(refused.error, /AGENTTY_MAX_SESSIONS/);
    assert.equal(listDir(sessionsDir).length, 1, 'the refused open left its rc files');
    const closed = await agent.call('close', { execution_id: session.execution_id });
    assert.equal(closed.closed, true);
    assert.deepEqual(listDir(sessionsDir), [], `open/close ${i} left its rc files`);
  }
});

// ---- shutdown ----

// What a careless client leaves when it goes: commands, a job control moved
// to a group of its own, a session with a background job, a program that
// ignores SIGTERM, one a person holds, and a viewer still connected.
async function busyServer(t) {
  const agent = await markedAgentty(t, { env: { AGENTTY_WEB_TOKEN: TOKEN } });
  const run = (args) => agent.call('execute', { side_effects: ['NONE'], yield_ms: 0, ...args });
  await run({ command: 'sleep 1000' });
  await run({ command: 'set -m; sleep 1001 & sleep 1002' });
  await run({ command: 'trap "" TERM; sleep 1003' });
  const held = await run({ command: 'sleep 1004' });
  const session = await agent.call('open', {});
  assert.equal(session.isError, false, session.error);
  const job = await agent.call('execute', { session: session.execution_id, command: 'sleep 1005 &', side_effects: ['NONE'] });
  assert.equal(job.isError, false, job.error);
  const holder = await openTerminalSocket(held.terminal_url);
  holder.sendJson({ type: 'take_over' });
  const watcher = await openTerminalSocket(session.terminal_url);
  await eventually(async () => (await agent.call('ps', {})).executions.some((e) => e.held),
    { what: 'the execution to be held' });
  // The prompt can come back before the background job's fork has exec'd sleep.
  await eventually(() => markedProcesses(agent.marker).some((p) => p.includes('sleep 1005')),
    { what: 'the session\'s background sleep 1005' });
  t.after(() => { holder.socket.destroy(); watcher.socket.destroy(); });
  return { agent, holder, watcher };
}

for (const how of ['stdin EOF', 'SIGTERM', 'SIGINT', 'SIGHUP']) {
  test(`${how} to agentty ends every program it started, promptly, and cleans its files`, async (t) => {
    const { agent, watcher } = await busyServer(t);
    assert.equal(listDir(path.join(agent.stateDir, 'servers')).length, 1);
    const started = Date.now();
    if (how === 'stdin EOF') agent.transport._process.stdin.end();
    else process.kill(agent.pid, how);
    await agent.exited;
    // The grace for `trap "" TERM` (2 s) and the kill, not more.
    assert.ok(Date.now() - started < 6000, `agentty took ${Date.now() - started} ms to exit`);
    await noneLeft(agent.marker);
    await eventually(() => watcher.ended, { what: 'the viewer to be disconnected' });
    assert.deepEqual(listDir(path.join(agent.stateDir, 'spool')), []);
    assert.deepEqual(listDir(path.join(agent.stateDir, 'servers')), []);
    assert.deepEqual(listDir(path.join(agent.stateDir, 'sessions')), []);
  });
}

test('agentty killed outright (SIGKILL): each terminal hangs up and takes its programs along', async (t) => {
  const agent = await markedAgentty(t);
  const run = (args) => agent.call('execute', { side_effects: ['NONE'], yield_ms: 0, ...args });
  await run({ command: 'sleep 1000' });
  await run({ command: 'set -m; sleep 1001 & sleep 1002' });
  // Catches the hang-up and carries on: killed after the grace.
  await run({ command: 'trap "echo hup" HUP; while :; do sleep 0.2; done' });
  // Asked to outlive its terminal: left alone, as with any terminal.
  await run({ command: 'nohup sleep 1007 >/dev/null 2>&1 & sleep 1008' });
  const session = await agent.call('open', {});
  await agent.call('execute', { session: session.execution_id, command: 'sleep 1005 &', side_effects: ['NONE'] });
  await eventually(() => markedProcesses(agent.marker).some((p) => p.includes('sleep 1005')),
    { what: 'the session job' });
  process.kill(agent.pid, 'SIGKILL');
  await agent.exited;
  const left = await eventually(() => {
    const now = markedProcesses(agent.marker);
    return now.length === 1 ? now : null;
  }, { timeout: 10000, what: 'only the nohup job to be left' }).catch(() => {
    throw new Error(`left running:\n${markedProcesses(agent.marker).join('\n')}`);
  });
  assert.match(left[0], /sleep 1007/);
});

// ---- many calls, limits ----

// agentty's own resources: open fds, children (and zombies among them), the
// processes it started, and its state files.
function footprint(agent) {
  const children = processIds().map((pid) => readProc(pid, 'stat')).filter(Boolean).map((stat) => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], ppid: Number(fields[1]) };
  }).filter((child) => child.ppid === agent.pid);
  // agentty's own helpers (the spare terminal's supervisor and its maker)
  // come and go as programs end; what ran for the agent must all be gone.
  const programs = markedProcesses(agent.marker).filter((p) => !/\/agentty(-supervisor)? /.test(p));
  return {
    fds: listDir(`/proc/${agent.pid}/fd`).length,
    zombies: children.filter((child) => child.state === 'Z').length,
    programs: programs.length,
    spool: listDir(path.join(agent.stateDir, 'spool')).length,
    sessions: listDir(path.join(agent.stateDir, 'sessions')).length,
  };
}

test('hundreds of calls in a row and in parallel: fds, children and files return to where they were', async (t) => {
  const agent = await markedAgentty(t, { env: { AGENTTY_MAX_EXECUTIONS: '16' } });
  const run = (args) => agent.call('execute', { side_effects: ['NONE'], ...args });
  // Warm: the spare terminal and its maker exist from the first end on.
  await run({ command: 'true' });
  const settled = async () => {
    const calm = await eventually(async () => {
      const list = await agent.call('ps', {});
      return list.live === 0 ? footprint(agent) : null;
    }, { what: 'every execution to end' });
    return calm;
  };
  await eventually(() => holdsPtyMaster(agent.pid), { what: 'the spare terminal' });
  const baseline = await settled();
  for (let i = 0; i < 120; i++) {
    const r = await run({ command: `echo seq${i}; seq 1 2000` });
    assert.equal(r.status, 'completed', JSON.stringify(r));
  }
  const parallel = await Promise.all(Array.from({ length: 50 }, (_, i) =>
    run({ command: `sleep 0.2; echo par${i}`, yield_ms: 20000 })));
  assert.ok(parallel.filter((r) => !r.isError).length >= 16);
  const background = await Promise.all(Array.from({ length: 16 }, () => run({ command: 'sleep 600', yield_ms: 0 })));
  await Promise.all(background.map((r) => agent.call('stop', { execution_id: r.execution_id })));
  for (let i = 0; i < 10; i++) {
    const session = await agent.call('open', {});
    assert.equal(session.isError, false, session.error);
    await agent.call('execute', { session: session.execution_id, command: 'sleep 300 &', side_effects: ['NONE'] });
    await agent.call('close', { execution_id: session.execution_id });
  }
  // The spare terminal is made after the last program ended: give it time.
  await settled();
  let after;
  await eventually(() => {
    after = footprint(agent);
    return JSON.stringify(after) === JSON.stringify(baseline);
  }, { what: 'the footprint to return to the baseline' }).catch(() => {
    assert.deepEqual(after, baseline);
  });
  const removed = await agent.call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  assert.ok(removed.removed > 100, JSON.stringify(removed));
  assert.equal(footprint(agent).spool, 0);
});


test('sessions opened in parallel respect AGENTTY_MAX_SESSIONS', async (t) => {
  const agent = await markedAgentty(t, { env: { AGENTTY_MAX_SESSIONS: '3' } });
  const opens = await Promise.all(Array.from({ length: 8 }, () => agent.call('open', {})));
  const opened = opens.filter((r) => !r.isError);
  assert.equal(opened.length, 3, JSON.stringify(opens.map((r) => r.error ?? r.status)));
  for (const r of opens.filter((o) => o.isError)) assert.match(r.error, /AGENTTY_MAX_SESSIONS/);
  await Promise.all(opened.map((r) => agent.call('close', { execution_id: r.execution_id })));
  const again = await agent.call('open', {});
  assert.equal(again.isError, false, again.error);
});

test('executes beyond AGENTTY_MAX_EXECUTIONS in parallel are refused with the real count, and recover', async (t) => {
  const agent = await markedAgentty(t, { env: { AGENTTY_MAX_EXECUTIONS: '5' } });
  // The admitted ones run until the fifteen refusals are in: a fixed
  // `sleep 0.3` could end (and free a slot) before a loaded machine's
  // agentty had taken the last of the twenty calls.
  const gate = path.join(tempDirForRun('agentty-audit7-gate-'), 'go');
  let refusals = 0;
  const calls = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const r = await agent.call('execute', {
      command: `until [ -e '${gate}' ]; do sleep 0.05; done; echo call${i}`, side_effects: ['NONE'], yield_ms: 30000,
    });
    if (r.isError && ++refusals === 15) writeFileSync(gate, '');
    return r;
  }));
  const refused = calls.filter((r) => r.isError);
  assert.equal(calls.length - refused.length, 5);
  for (const r of refused) {
    assert.match(r.error, /AGENTTY_MAX_EXECUTIONS/);
    assert.doesNotMatch(r.error, /\(0\b|\b0 executions/, 'the refusal counts the starts in flight');
  }
  for (const r of calls.filter((c) => !c.isError)) assert.match(r.output, /call\d+/);
  const after = await agent.call('execute', { command: 'echo recovered', side_effects: ['NONE'] });
  assert.equal(after.status, 'completed');
});

test('an execute cancelled while its program starts sends no answer and leaks no start', async (t) => {
  const agent = await markedAgentty(t, { env: { AGENTTY_MAX_EXECUTIONS: '3' } });
  for (let i = 0; i < 6; i++) {
    const controller = new AbortController();
    const call = agent.client.callTool({
      name: 'execute', arguments: { command: `sleep 600; echo ${i}`, side_effects: ['NONE'] },
    }, undefined, { signal: controller.signal });
    controller.abort();
    await assert.rejects(call, /abort/i);
    // The program started keeps running, as a cancelled wait leaves it: stop it.
    const running = await eventually(async () => {
      const list = await agent.call('ps', {});
      return list.executions.find((e) => e.status === 'running');
    }, { what: `the cancelled start ${i} to be running` });
    await agent.call('stop', { execution_id: running.execution_id, signal: 'SIGKILL' });
  }
  const after = await agent.call('execute', { command: 'echo still-starts', side_effects: ['NONE'] });
  assert.equal(after.isError, false, after.error);
  assert.match(after.output, /still-starts/);
  assert.doesNotMatch(agent.stderr.join(''), /internal error|Operation canceled/);
});

// ---- protocol abuse (raw lines on stdin) ----

test('text that is not Unicode (a lone surrogate, bytes that are not UTF-8) is refused naming the argument', async (t) => {
  // What a JavaScript client sends when it cuts a string inside an emoji.
  const agent = await markedAgentty(t);
  const started = Date.now();
  const cut = await agent.call('execute', { command: 'echo \ud83d', side_effects: ['NONE'] }, { timeout: 15000 });
  assert.ok(Date.now() - started < 5000);
  assert.equal(cut.isError, true);
  assert.match(cut.error, /^command: .*not valid Unicode/);
  const env = await agent.call('execute', { command: 'true', env: { A: 'x\udc00' }, side_effects: ['NONE'] });
  assert.match(env.error, /^env\.A: /);

  const raw = rawAgentty(t);
  assert.equal((await raw.reply(0)).id, 0);
  raw.send(Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write","arguments":{"execution_id":"abc","input":"a'),
    Buffer.from([0xff, 0xc3]), Buffer.from('"}}}')]));
  const answer = await raw.reply(5);
  assert.equal(answer?.id, 5, JSON.stringify(answer));
  assert.equal(answer.result.isError, true);
  assert.match(answer.result.structuredContent.error, /^input: /);
  raw.send({ jsonrpc: '2.0', id: 6, method: 'ping' });
  assert.deepEqual((await raw.reply(6)).result, {});
});

test('a broken or oversized request is answered with its own id, and the server reads on', async (t) => {
  const raw = rawAgentty(t, { env: { AGENTTY_MAX_REQUEST_BYTES: String(1 << 20) } });
  assert.equal((await raw.reply(0)).id, 0);
  raw.send('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ps",}}');
  const broken = await raw.reply(1);
  assert.equal(broken?.id, 1, JSON.stringify(broken));
  assert.equal(broken.error.code, -32700);
  assert.match(broken.error.message, /at byte \d+/);
  // The SDK puts the id last: found at the end of a line too large to keep.
  raw.send(`{"method":"tools/call","params":{"name":"write","arguments":{"execution_id":"x","input":"${'a'.repeat(3 << 20)}"}},"jsonrpc":"2.0","id":2}`);
  const large = await raw.reply(2);
  assert.equal(large?.id, 2, JSON.stringify(large));
  assert.match(large.error.message, /exceeds the limit of 1048576 bytes \(AGENTTY_MAX_REQUEST_BYTES\)/);
  raw.send('not json');
  assert.equal((await raw.reply(null)).error.code, -32700);
  raw.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
  assert.deepEqual((await raw.reply(3)).result, {});
  // A response sent to the server is ignored; a notification with an id is a request.
  raw.send({ jsonrpc: '2.0', id: 4, result: {} });
  raw.send({ jsonrpc: '2.0', id: 5, method: 'notifications/cancelled', params: { requestId: 9 } });
  assert.equal((await raw.reply(5)).error.code, -32601);
  // The last line, without its newline, is still read before end of file.
  raw.child.stdin.end('{"jsonrpc":"2.0","id":6,"method":"ping"}');
  assert.deepEqual((await raw.reply(6)).result, {});
  const [code] = await new Promise((resolve) => raw.child.once('exit', (...args) => resolve(args)));
  assert.equal(code, 0);
});

// ---- memory ----

function anonymousKb(pid) {
  return Number(/RssAnon:\s+(\d+)/.exec(readProc(pid, 'status'))[1]);
}

test('exploring large outputs keeps no conversion buffers per execution', async (t) => {
  const agent = await markedAgentty(t);
  const ids = [];
  for (let i = 0; i < 4; i++) {
    const r = await agent.call('execute', { command: 'seq 1 2000000', side_effects: ['NONE'], yield_ms: 55000 });
    assert.equal(r.status, 'completed');
    ids.push(r.execution_id);
  }
  await agent.call('explore', { execution_id: ids[0], op: 'grep', pattern: 'none' });
  const before = anonymousKb(agent.pid);
  for (const id of ids.slice(1)) {
    const found = await agent.call('explore', { execution_id: id, op: 'grep', pattern: '^1999999$' });
    assert.equal(found.matches.length, 1);
  }
  // Each grep converted ~15 MB in 4 MiB blocks; two block buffers (~8 MiB)
  // used to stay with every explored execution.
  const grown = anonymousKb(agent.pid) - before;
  assert.ok(grown < 12 * 1024, `RssAnon grew by ${grown} kB for 3 explored executions`);
});
