// End-to-end: agentty run by a user other than root (audit 22). Such a user
// may not look at another user's processes: /proc/PID/syscall needs ptrace
// access, which it lacks for set-user-ID programs (su, sudo, passwd) at their
// password prompts. Run as root, these tests start agentty as nobody
// (setpriv) to be that user.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, copyFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { agenttyBin, startAgentty, tempDirForRun, WAIT_MS } from './lib/mcp-client.mjs';

const isRoot = process.getuid?.() === 0;
const setUserId = (file) => existsSync(file) && (statSync(file).mode & 0o4000) !== 0;

// An agentty that is not root: this one, or as root one run as nobody with
// a state dir and home it owns, started in that home from a copy of the
// build's agentty and agentty-supervisor that nobody can reach (a checkout
// under /root, mode 700 on Debian, is neither a cwd nor a path for nobody).
async function unprivilegedAgentty(t) {
  const options = {};
  if (isRoot) {
    const [stateDir, home] = [tempDirForRun('agentty-audit22-state-'), tempDirForRun('agentty-audit22-home-')];
    for (const dir of [stateDir, home]) chownSync(dir, 65534, 65534);
    const binDir = tempDirForRun('agentty-audit22-bin-');
    chmodSync(binDir, 0o755);
    for (const name of ['agentty', 'agentty-supervisor']) {
      copyFileSync(path.join(path.dirname(agenttyBin), name), path.join(binDir, name));
    }
    Object.assign(options, {
      stateDir,
      env: { HOME: home, XDG_STATE_HOME: '' },
      cwd: home,
      bin: path.join(binDir, 'agentty'),
      runAs: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'],
    });
  }
  const agent = await startAgentty(options);
  t.after(() => agent.client.close());  // which stops what it runs
  return agent;
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
