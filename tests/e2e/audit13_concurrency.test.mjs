// End-to-end audit 13: many things at once. An agent (or several clients'
// worth of calls on one server) runs builds, floods and waits concurrently;
// the promise is that calls are handled concurrently, none blocks another,
// and output is lossless.
//
// Each test names what a user ran into:
// - explore (stat, grep) on a few hundred MB of output held the event loop
//   for seconds: a concurrent ping, execute or read, and every web viewer,
//   waited until it was done (3.7 s for the first stat of 390 MB here);
// - a client slow to read a big answer (a 1 MiB page is ~3.5 MB of JSON)
//   stopped everything: agentty blocked writing it to stdout, so no PTY was
//   read, no viewer fed and no other call started until the client read it;
// - one wait(pattern) on a flooding program searched the newest 4 MiB of
//   text again at every wake (each 64 KiB read): the flood ran 14x slower
//   (3.8 vs 52.8 MB in 5 s of `yes`) and other calls waited behind it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { rawAgentty } from './lib/raw-agentty.mjs';
import { eventually } from './lib/web-helpers.mjs';

// Generous for a loaded 2-core machine: a blocked loop shows as seconds.
const LATENCY_BOUND_MS = 1000;

// Pings the server back to back until `work` settles; returns the slowest
// ping and the work's result.
async function slowestPingDuring(client, work) {
  let settled = false;
  const done = work.finally(() => {
    settled = true;
  });
  let slowest = 0;
  let pings = 0;
  while (!settled) {
    const start = Date.now();
    await client.ping();
    slowest = Math.max(slowest, Date.now() - start);
    pings += 1;
  }
  return { result: await done, slowest, pings };
}

test('explore on a huge output does not hold the loop: concurrent pings and executes answer', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_MAX_SPOOL_BYTES: '1GiB' } });
  t.after(() => agent.client.close());
  const lines = 30000000; // ~270 MB of text
  const flood = await agent.call('execute', {
    command: `seq 1 ${lines}`, side_effects: ['NONE'], yield_ms: 0, max_output_bytes: 256,
  });
  assert.equal(flood.isError, false, flood.error);
  const id = flood.execution_id;
  const end = await agent.call('wait', { execution_id: id, until: 'exit', timeout_ms: 55000, max_output_bytes: 256 });
  if (end.wait_result !== 'exited') {
    const again = await agent.call('wait', { execution_id: id, until: 'exit', timeout_ms: 55000, max_output_bytes: 256 });
    assert.equal(again.wait_result, 'exited');
  }

  // The first stat converts the whole output to text.
  const stat = await slowestPingDuring(agent.client, agent.call('explore', { execution_id: id, op: 'stat' }));
  assert.equal(stat.result.isError, false, stat.result.error);
  assert.equal(stat.result.line_count, lines);
  assert.ok(stat.slowest < LATENCY_BOUND_MS,
    `a ping waited ${stat.slowest} ms while explore stat converted the output (${stat.pings} pings)`);

  // A grep that finds nothing searches all of it; the last line is found.
  const grep = await slowestPingDuring(agent.client,
    agent.call('explore', { execution_id: id, op: 'grep', pattern: '^(x|y)+z$' }));
  assert.equal(grep.result.isError, false, grep.result.error);
  assert.deepEqual(grep.result.matches, []);
  assert.equal(grep.result.lines_searched, lines);
  assert.ok(grep.slowest < LATENCY_BOUND_MS, `a ping waited ${grep.slowest} ms during a grep`);
  const last = await agent.call('explore', { execution_id: id, op: 'grep', pattern: `^${lines}$` });
  assert.deepEqual(last.matches.map((m) => m.line), [lines]);
  const mid = await agent.call('explore', { execution_id: id, op: 'grep', pattern: '^1500000[0-2]$', before: 1 });
  assert.deepEqual(mid.matches.map((m) => [m.line, m.text, m.before[0].text]),
    [[15000000, '15000000', '14999999'], [15000001, '15000001', '15000000'], [15000002, '15000002', '15000001']]);

  // An execute sent while another output is converted answers meanwhile.
  const again = await agent.call('execute', {
    command: `seq 1 ${lines}`, side_effects: ['NONE'], yield_ms: 55000, max_output_bytes: 256,
  });
  assert.equal(again.status, 'completed');
  // Which answers first says it, not a time: execute(echo hi) takes several
  // turns of the loop (each behind a step of the conversion, ~0.7 s in all
  // at load 10), the explore several dozen steps; a held loop answers the
  // echo only after the explore.
  const started = Date.now();
  let explored = false;
  const exploring = agent.call('explore', { execution_id: again.execution_id, op: 'grep', pattern: `^${lines}$` })
    .finally(() => { explored = true; });
  const echo = await agent.call('execute', { command: 'echo hi', side_effects: ['NONE'] });
  const echoMs = Date.now() - started;
  const exploredFirst = explored;
  assert.match(echo.output, /^hi\s*$/);
  const found = await exploring;
  const exploreMs = Date.now() - started;
  assert.deepEqual(found.matches.map((m) => m.line), [lines]);
  assert.equal(exploredFirst, false,
    `execute(echo hi) answered after the explore (${echoMs} ms; the explore ${exploreMs} ms)`);
});

test('a client that does not read a big answer yet does not stop programs and other calls', async (t) => {
  const raw = rawAgentty(t);
  const tool = (id, name, args) => raw.send({
    jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { side_effects: ['NONE'], ...args } },
  });
  tool(1, 'execute', { command: 'seq 1 400000', max_output_bytes: 256 });
  const made = (await raw.reply(1, 30000)).result.structuredContent;
  assert.equal(made.status, 'completed');

  raw.child.stdout.pause(); // the client reads nothing for a while
  raw.send({
    jsonrpc: '2.0', id: 2, method: 'tools/call',
    params: { name: 'read', arguments: { execution_id: made.execution_id, since_seq: 1, max_output_bytes: 1000000 } },
  });
  // A program with output to be read (more than a terminal buffers), then a
  // file it makes: it gets there only if agentty keeps reading its terminal.
  const done = path.join(tempDirForRun('agentty-audit13-'), 'done');
  tool(3, 'execute', { command: `seq 1 200000; touch ${done}`, yield_ms: 0 });
  await eventually(() => existsSync(done), { timeout: 15000, what: 'the program to finish while the client does not read' });

  raw.child.stdout.resume();
  const page = (await raw.reply(2, 30000)).result.structuredContent;
  assert.equal(page.start_seq, 1);
  assert.ok(page.output.startsWith('1\n2\n3\n'), page.output.slice(0, 20));
  assert.ok(page.output.length > 800000, `a page of ${page.output.length}`);
  const started = await raw.reply(3, 30000);
  assert.ok(started.result.structuredContent.execution_id, JSON.stringify(started).slice(0, 500));
});

// agentty's CPU time (all its threads) in ms: what a flood costs its loop.
// Wall clock is no measure on a loaded machine: the load can change between
// two runs (10.7 s with waits against 2.2 s without, at load 11.5).
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 1000 / 100;  // utime + stime, USER_HZ 100
}

test('waits for a pattern on a flooding program do not slow the flood down', async (t) => {
  const agent = await startAgentty();
  t.after(() => agent.client.close());
  const { call } = agent;
  const pid = agent.transport.pid;
  const lines = 2000000; // ~15 MB
  const timed = async (waiters) => {
    const started = Date.now();
    const cpuBefore = cpuMs(pid);
    const r = await call('execute', { command: `seq 1 ${lines}`, side_effects: ['NONE'], yield_ms: 0, max_output_bytes: 256 });
    // Out-of-band (since_seq): cursorless waits share the cursor, and the
    // first to report the match would move the others past it.
    const waits = Array.from({ length: waiters }, () => call('wait', {
      execution_id: r.execution_id, pattern: `^${lines}$`, since_seq: 1, timeout_ms: 55000, max_output_bytes: 256,
    }));
    let end = await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 55000, max_output_bytes: 256 });
    while (end.wait_result !== 'exited') {
      end = await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 55000, max_output_bytes: 256 });
    }
    const elapsed = Date.now() - started;
    for (const w of await Promise.all(waits)) {
      assert.equal(w.wait_result, 'matched', JSON.stringify(w).slice(0, 300));
      assert.equal(w.match.text, String(lines));
    }
    return { cpu: cpuMs(pid) - cpuBefore, elapsed };
  };
  const alone = await timed(0);
  const watched = await timed(5);
  // Each wait searches each byte about once: 0.5-0.7 s of CPU against
  // 0.13-0.33 s at load 3-10. Searching the newest 4 MiB at every read took
  // seconds of the loop (the flood ran 14x slower). (The last 64 KiB again
  // at every read, with the screen caught up each time: 1.5-1.7 s.)
  assert.ok(watched.cpu < 3 * alone.cpu + 1000,
    `agentty used ${watched.cpu} ms of CPU (${watched.elapsed} ms) for seq with 5 waits for a pattern on it, ` +
    `${alone.cpu} ms (${alone.elapsed} ms) without`);
});

// Checks of the promise that held (kept as guards): with one program
// flooding, other executions answer, each wait wakes on its own match, a
// cancelled wait leaves the others, and concurrent floods read back by
// cursor pages lose nothing.
test('while one program floods, 20 executes and 10 waits answer on their own, and a cancelled wait leaves the others', async (t) => {
  const agent = await startAgentty();
  const { call } = agent;
  const started = [];
  const start = async (args) => {
    const r = await call('execute', { side_effects: ['NONE'], yield_ms: 0, max_output_bytes: 256, ...args });
    assert.equal(r.isError, false, r.error);
    started.push(r.execution_id);
    return r.execution_id;
  };
  t.after(async () => {
    for (const id of started) await call('stop', { execution_id: id, signal: 'SIGKILL' });
    await agent.client.close();
  });
  await start({ command: 'yes flood' });
  const echoes = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    call('execute', { command: `echo n${i}`, side_effects: ['NONE'] })));
  echoes.forEach((r, i) => {
    assert.equal(r.status, 'completed', JSON.stringify(r).slice(0, 300));
    assert.equal(r.output.trim(), `n${i}`);
  });

  const readers = [];
  for (let i = 0; i < 10; i++) {
    readers.push(await start({ command: 'read x; echo got-$x; sleep 600' }));
  }
  const cancel = new AbortController();
  const cancelled = agent.client.callTool({ name: 'wait', arguments: { execution_id: readers[0], pattern: 'never', timeout_ms: 55000 } },
    undefined, { signal: cancel.signal }).then(() => 'answered', (e) => `rejected: ${e.name}`);
  const waits = readers.map((id, i) => call('wait', { execution_id: id, pattern: `got-w${i}`, timeout_ms: 55000 }));
  cancel.abort();
  assert.match(await cancelled, /rejected/);
  for (let i = readers.length - 1; i >= 0; i--) {
    const w = await call('write', { execution_id: readers[i], input: `w${i}`, newline: true, yield_ms: 0 });
    assert.equal(w.isError, false, w.error);
  }
  (await Promise.all(waits)).forEach((w, i) => {
    assert.equal(w.wait_result, 'matched', JSON.stringify(w).slice(0, 300));
    assert.match(JSON.stringify(w), new RegExp(`got-w${i}\\b`));
  });
  const ping = Date.now();
  await agent.client.ping();
  assert.ok(Date.now() - ping < LATENCY_BOUND_MS, 'a ping during the flood');
});

test('several floods at once, each read back by cursor pages, lose no byte', async (t) => {
  const agent = await startAgentty();
  t.after(() => agent.client.close());
  const { call } = agent;
  const lines = 300000;
  let expected = '';
  for (let i = 1; i <= lines; i++) expected += `${i}\n`;
  const drain = async () => {
    const r = await call('execute', { command: `seq 1 ${lines}`, side_effects: ['NONE'], yield_ms: 0, max_output_bytes: 4096 });
    let text = r.output;
    for (;;) {
      const page = await call('read', { execution_id: r.execution_id, max_output_bytes: 65536 });
      text += page.output;
      if (page.status !== 'running' && page.next_seq >= page.latest_seq) return text;
      if (!page.output) await call('wait', { execution_id: r.execution_id, until: 'idle', idle_ms: 50, timeout_ms: 2000, since_seq: page.next_seq, max_output_bytes: 256 });
    }
  };
  const texts = await Promise.all([drain(), drain(), drain()]);
  for (const text of texts) {
    assert.equal(text.length, expected.length);
    assert.ok(text === expected, 'the pages put together are the program\'s output');
  }
});
