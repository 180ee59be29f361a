// Audit 27: one `agentty mcp` used for a long time and hard (a scaled-down
// soak): what it costs per call does not grow with its history, and what
// it holds (fds, spool files, processes) goes back to where it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { startAgentty } from './lib/mcp-client.mjs';
import { openDashboardSocket } from './lib/terminal-viewer.mjs';
import { eventually } from './lib/web-helpers.mjs';
import { holdsPtyMaster, openFds, rssKb } from './lib/proc-stats.mjs';

const NONE = ['NONE'];

async function started(t, options) {
  const agent = await startAgentty(options);
  t.after(() => agent.client.close());
  return agent;
}

test('a dashboard gets the execution list at a bounded rate, not once per change', async (t) => {
  // Each list holds every record (up to --max-retained): sent at every
  // start and exit, it made each execute cost time in proportion to the
  // history while a dashboard was open (echo hi: 38 ms fresh, 115 ms with
  // 600 records; 640 KB sent per execute).
  const agent = await started(t);
  const first = await agent.call('execute', { command: 'echo first', side_effects: NONE });
  const dashboard = await openDashboardSocket(first.terminal_url);
  t.after(() => dashboard.close());
  await dashboard.message((m) => m.type === 'executions', 'the first list');
  const from = dashboard.texts.length;
  const began = Date.now();
  let last;
  for (let i = 0; i < 40; i++) {
    last = await agent.call('execute', { command: `echo soak-${i}`, side_effects: NONE });
    assert.equal(last.status, 'completed');
  }
  const shown = await dashboard.message((m) => m.type === 'executions' &&
    m.executions.some((e) => e.execution_id === last.execution_id && e.status === 'completed'),
  'the last execution, completed', from);
  const elapsed = Date.now() - began;
  const lists = dashboard.texts.slice(from, dashboard.texts.indexOf(shown) + 1)
    .filter((m) => m.type === 'executions').length;
  // At most one list per 100 ms (the first may follow the connect's at once).
  assert.ok(lists <= Math.floor(elapsed / 100) + 3,
    `${lists} lists in ${elapsed} ms for 40 executes`);
  assert.equal(shown.executions.length, 41);
});


function processes() {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' })
    .split('\n').filter(Boolean).map((line) => {
      const [, pid, ppid, stat, args] = line.match(/^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/);
      return { pid: Number(pid), ppid: Number(ppid), stat, args };
    });
}

// The processes under `pid` (zombies included).
function descendants(pid) {
  const rows = processes();
  const found = [];
  for (let parents = new Set([pid]); parents.size;) {
    const next = rows.filter((row) => parents.has(row.ppid));
    found.push(...next);
    parents = new Set(next.map((row) => row.pid));
  }
  return found;
}

test('a mixed soak leaves no fd, spool file or process behind once cleaned up', async (t) => {
  const agent = await started(t, { env: { AGENTTY_MAX_SPOOL_BYTES: '4M' } });
  const pid = agent.transport.pid;
  const call = agent.call;
  assert.equal((await call('execute', { command: 'echo warm', side_effects: NONE })).status, 'completed');
  await eventually(() => holdsPtyMaster(pid), { what: 'the spare terminal' });
  const fdsBefore = openFds(pid);
  const opened = await call('open', {});
  assert.equal(opened.isError, false, opened.error);
  const session = opened.execution_id;
  for (let i = 0; i < 90; i++) {
    const kind = i % 6;
    if (kind === 0) {
      assert.equal((await call('execute', { command: `echo fast-${i}`, side_effects: NONE })).status, 'completed');
    } else if (kind === 1) {
      const r = await call('execute', { command: 'for k in 1 2 3; do echo $k; sleep 0.05; done', side_effects: NONE, yield_ms: 0 });
      assert.equal(r.isError, false, r.error);
      await call('read', { execution_id: r.execution_id });
      assert.equal((await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 30000 })).wait_result, 'exited');
    } else if (kind === 2) {
      const r = await call('execute', { command: 'sleep 3027', side_effects: NONE, yield_ms: 0 });
      assert.equal((await call('stop', { execution_id: r.execution_id })).isError, false);
    } else if (kind === 3) {
      // A session command while other tools look at the same session.
      const [ran] = await Promise.all([
        call('execute', { session, command: `echo in-session-${i}`, side_effects: NONE }),
        call('read', { execution_id: session }), call('screen', { execution_id: session }), call('ps', {}),
      ]);
      assert.equal(ran.status, 'completed', ran.error);
    } else if (kind === 4) {
      // A job left in the background keeps the execution running until stopped.
      const r = await call('execute', { command: 'sleep 6027 & echo child', side_effects: NONE, yield_ms: 300 });
      assert.equal(r.isError, false, r.error);
      if (r.status === 'backgrounded') await call('stop', { execution_id: r.execution_id });
    } else {
      assert.equal((await call('execute', { command: 'seq 1 20000', side_effects: NONE })).status, 'completed');
    }
  }
  // Output past the spool cap, looked into with explore (its text cache is a file too).
  const big = await call('execute', { command: 'seq 1 1500000', side_effects: NONE, yield_ms: 0 });
  assert.equal((await call('wait', { execution_id: big.execution_id, until: 'exit', timeout_ms: 30000 })).wait_result, 'exited');
  assert.equal((await call('explore', { execution_id: big.execution_id, op: 'grep', pattern: '^1499999$' })).matches.length, 1);
  assert.equal((await call('close', { execution_id: session })).isError, false);

  const cleaned = await call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  // 75 commands (session commands are no records), warm, big and the session.
  assert.equal(cleaned.removed, 78, JSON.stringify(cleaned));
  assert.equal(cleaned.remaining, 0);
  const spool = path.join(agent.stateDir, 'spool');
  await eventually(() => readdirSync(spool).length === 0, { what: `${spool} to be empty` });
  await eventually(() => openFds(pid) <= fdsBefore, { what: `agentty's fds back to ${fdsBefore}` });
  // Only the spare terminal's supervisors are left under agentty.
  const left = descendants(pid).filter((p) => !/agentty-supervisor --spare/.test(p.args));
  assert.deepEqual(left, []);
  const sleeps = processes().filter((p) => /sleep (3027|6027)/.test(p.args));
  assert.deepEqual(sleeps, []);
});

test('cleanup hands the memory of the records it removed back to the system', async (t) => {
  // Freed, the records' memory stayed counted as agentty's (glibc keeps a
  // fragmented heap's free pages): 13 MB before 40 parallel outputs, 83 MB
  // after they were cleaned up.
  const agent = await started(t);
  const pid = agent.transport.pid;
  assert.equal((await agent.call('execute', { command: 'echo warm', side_effects: NONE })).status, 'completed');
  const before = rssKb(pid);
  const runs = await Promise.all(Array.from({ length: 40 }, () =>
    agent.call('execute', { command: 'seq 1 200000', side_effects: NONE })));
  for (const r of runs) assert.equal(r.status, 'completed', r.error);
  const peak = rssKb(pid);
  assert.ok(peak > before + 40 * 1024, `the outputs took memory (${before} -> ${peak} KiB)`);
  const cleaned = await agent.call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  assert.equal(cleaned.removed, 41);
  const after = rssKb(pid);
  assert.ok(after < before + (peak - before) / 4, `RSS ${before} KiB, ${peak} KiB at the peak, ${after} KiB after cleanup`);
});
