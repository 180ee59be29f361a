// End-to-end: agentty run by a user other than root (audit 22). Such a user
// may not look at another user's processes: /proc/PID/syscall needs ptrace
// access, which it lacks for set-user-ID programs (su, sudo, passwd) at their
// password prompts. Run as root, these tests start agentty as nobody
// (setpriv) to be that user.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, existsSync, statSync } from 'node:fs';
import { startAgenttyAs, isRoot } from './lib/as-user.mjs';
import { startAgentty, tempDirForRun, WAIT_MS } from './lib/mcp-client.mjs';

const setUserId = (file) => existsSync(file) && (statSync(file).mode & 0o4000) !== 0;

// An agentty that is not root: this one, or as root one run as nobody with
// a home it owns.
async function unprivilegedAgentty(t) {
  if (!isRoot) {
    const agent = await startAgentty();
    t.after(() => agent.client.close());  // which stops what it runs
    return agent;
  }
  const home = tempDirForRun('agentty-audit22-home-');
  chownSync(home, 65534, 65534);
  return startAgenttyAs(t, { uid: 65534, gid: 65534, home });
}

// su's password prompt could not be seen reading (su runs as root), so the
// probe said busy: execute waited out all of yield_ms and wait(until=input)
// never answered. Now it is the guess that hosts without /proc get, saying so.
test('su\'s password prompt under an agentty that is not root waits for input, as a guess that says why', {
  skip: !setUserId('/usr/bin/su') && 'needs su installed set-user-ID',
}, async (t) => {
  const agent = await unprivilegedAgentty(t);
  const started = Date.now();
  const r = await agent.call('execute', { command: 'su -c true', side_effects: ['NONE'], yield_ms: WAIT_MS });
  const brief = (x) => JSON.stringify({ ...x, raw: undefined });
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.ok(Date.now() - started < WAIT_MS, `returned at the prompt, not at yield_ms: ${brief(r)}`);
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.match(r.output, /Password: $/);
  assert.match(r.message, /cannot see whether it reads its terminal \(it runs as another user/, brief(r));
  assert.match(r.message, /this is a guess/, brief(r));
  const w = await agent.call('wait', { execution_id: r.execution_id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'waiting_for_input', brief(w));
  assert.match(w.message, /^waiting_for_input is a guess: .* agentty cannot see whether it reads its terminal/, brief(w));
  const ps = await agent.call('ps', {});
  assert.equal(ps.executions.find((e) => e.execution_id === r.execution_id)?.waiting_for_input, true);
});
