// End-to-end: agentty where the machine runs out of something (audit 34): a
// full disk under its recordings, no processes left to start (a pids
// cgroup), no file descriptors left (ulimit -n), and its own working
// directory removed. Each says what ran out and what to do, loses nothing it
// claims to keep, and the server serves again once the resource is back.
// (A full spool: audit20_lifecycle; the web server out of fds:
// audit12_security; shutdown by signals and EOF: audit7_hygiene.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, rmdirSync, unlinkSync, writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { eventually, parseUrl } from './lib/web-helpers.mjs';

const isRoot = process.getuid?.() === 0;

// An agentty whose stderr is collected; closed after the test `t`.
async function agenttyWithStderr(t, options) {
  const agent = await startAgentty(options);
  let stderr = '';
  agent.transport.stderr?.on('data', (data) => { stderr += data; });
  t.after(() => agent.client.close().catch(() => {}));
  const run = (args) => agent.call('execute', { side_effects: ['NONE'], ...args });
  return { ...agent, run, stderr: () => stderr };
}

// ---- no processes left ----

// A pids cgroup to put agentty in: cgroup v1's pids hierarchy, or v2 with
// the pids controller on. Undefined where neither can be made.
function pidsCgroup() {
  if (!isRoot) return undefined;
  for (const root of ['/sys/fs/cgroup/pids', '/sys/fs/cgroup']) {
    if (!existsSync(path.join(root, 'cgroup.procs'))) continue;
    if (root === '/sys/fs/cgroup' && !/\bpids\b/.test(readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8'))) continue;
    try {
      const dir = mkdtempSync(path.join(root, 'agentty-e2e-'));
      if (existsSync(path.join(dir, 'pids.max'))) return dir;
      rmdirSync(dir);
    } catch {
      // not writable here
    }
  }
  return undefined;
}

// Failures to fork said "cannot start agentty-supervisor: Resource
// temporarily unavailable (... `make build` builds it beside the agentty
// binary)": the fix it named was the wrong one.
test('out of processes, execute, script and open say the process limit was reached, and work again once it is raised', async (t) => {
  const cgroup = pidsCgroup();
  if (!cgroup) {
    t.skip('needs root and a pids cgroup (v1 pids hierarchy or v2 with pids in subtree_control)');
    return;
  }
  const limit = (value) => writeFileSync(path.join(cgroup, 'pids.max'), value);
  let agent;
  t.after(async () => {
    limit('max');
    await agent?.client.close().catch(() => {});
    // rmdir is refused while anything of agentty's is still in it.
    await eventually(() => readFileSync(path.join(cgroup, 'cgroup.procs'), 'utf8').trim() === '',
      { what: "agentty's processes to end" }).catch(() => {});
    rmdirSync(cgroup);
  });
  agent = await agenttyWithStderr(t, {
    runAs: ['sh', '-c', `echo $$ > ${cgroup}/cgroup.procs && exec "$0" "$@"`],
  });
  assert.equal((await agent.run({ command: 'echo warm' })).output, 'warm\n');
  limit('1');  // below what runs already: nothing new forks
  const processLimit = /limit on processes was reached \(ulimit -u.*pids\.max of agentty's cgroup\)/;
  // A spare supervisor made ahead may still start one command.
  let refused;
  for (let i = 0; i < 3 && !refused; i++) {
    const r = await agent.run({ command: 'echo one' });
    if (r.isError) refused = r;
  }
  assert.equal(refused?.status, 'failed_to_start', JSON.stringify(refused));
  assert.match(refused.error, processLimit);
  assert.doesNotMatch(refused.error, /make build/);
  const script = await agent.run({ script: 'echo two' });
  assert.equal(script.status, 'failed_to_start');
  assert.match(script.error, processLimit);
  const session = await agent.call('open', {});
  assert.equal(session.status, 'failed_to_start');
  assert.match(session.error, processLimit);
  limit('max');
  assert.equal((await agent.run({ command: 'echo three' })).output, 'three\n');
  assert.equal((await agent.run({ script: 'echo four' })).output, 'four\n');
});

// ---- no file descriptors left ----

// A PTY that could not be opened said "open pty slave: Bad file
// descriptor" (a dup of the -1 the open returned), and the spare maker,
// dropped for agentty's own lack of fds, was never used again.
test('out of file descriptors, execute and open say so and how to fix it, and work again once programs end', async (t) => {
  const agent = await agenttyWithStderr(t, {
    runAs: ['sh', '-c', 'ulimit -n 64 && exec "$0" "$@"'],
    env: { AGENTTY_MAX_EXECUTIONS: '200' },
  });
  // Programs that keep their terminal open: each holds fds in agentty.
  const running = [];
  t.after(() => Promise.all(running.map((id) => agent.call('stop', { execution_id: id, signal: 'SIGKILL' }))));
  let refused;
  for (let i = 0; i < 60 && !refused; i++) {
    const r = await agent.run({ command: 'sleep 600', yield_ms: 0 });
    if (r.isError) refused = r;
    else running.push(r.execution_id);
  }
  assert.ok(refused, `all ${running.length} executions started under ulimit -n 64`);
  const outOfFds = /Too many open files \(errno 24\); agentty has as many files open as its limit allows \(ulimit -n, now 64\): close sessions/;
  assert.equal(refused.status, 'failed_to_start');
  assert.match(refused.error, outOfFds);
  assert.doesNotMatch(refused.error, /Bad file descriptor/);
  const session = await agent.call('open', {});
  assert.equal(session.status, 'failed_to_start');
  assert.match(session.error, outOfFds);
  for (const id of running.splice(0)) {
    assert.equal((await agent.call('stop', { execution_id: id, signal: 'SIGKILL' })).isError, false);
  }
  const again = await agent.call('open', {});
  assert.equal(again.isError, false, again.error);
  assert.equal(again.prompt_ready, true);
  assert.doesNotMatch(agent.stderr(), /spare maker failed/);
});
