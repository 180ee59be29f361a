// End-to-end audit 13: many things at once. An agent (or several clients'
// worth of calls on one server) runs builds, floods and waits concurrently;
// the promise is that calls are handled concurrently, none blocks another,
// and output is lossless.
//
// Each test names what a user ran into:
// - explore (stat, grep) on a few hundred MB of output held the event loop
//   for seconds: a concurrent ping, execute or read, and every web viewer,
//   waited until it was done (3.7 s for the first stat of 390 MB here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentty } from './lib/mcp-client.mjs';

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
  const started = Date.now();
  const exploring = agent.call('explore', { execution_id: again.execution_id, op: 'grep', pattern: `^${lines}$` });
  const echo = await agent.call('execute', { command: 'echo hi', side_effects: ['NONE'] });
  const echoMs = Date.now() - started;
  assert.match(echo.output, /^hi\s*$/);
  const found = await exploring;
  assert.deepEqual(found.matches.map((m) => m.line), [lines]);
  assert.ok(echoMs < 2 * LATENCY_BOUND_MS, `execute(echo hi) took ${echoMs} ms during an explore`);
});
