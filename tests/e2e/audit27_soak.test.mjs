// Audit 27: one `agentty mcp` used for a long time and hard (a scaled-down
// soak): what it costs per call does not grow with its history, and what
// it holds (fds, spool files, processes) goes back to where it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentty } from './lib/mcp-client.mjs';
import { openDashboardSocket } from './lib/terminal-viewer.mjs';

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
