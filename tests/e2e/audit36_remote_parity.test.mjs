// Audit 36: local/remote parity. The same call made locally and with `host`
// (a real OpenSSH sshd on 127.0.0.1, tests/e2e/lib/sshd.mjs, logged in as the
// user running the tests) must give the agent the same answer, except where
// SSH itself cannot (docs/architecture.md, SSH).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sshdAndAgentForFile, rootOnly } from './lib/sshd.mjs';

const ssh = sshdAndAgentForFile('agentty-audit36-home-');
const { skip } = ssh;

const brief = (r) => JSON.stringify({ ...r, raw: undefined });

// Runs `args` locally and on the host; both answers, local first.
async function both(args) {
  const run = (where) => ssh.agent.call('execute', { side_effects: ['NONE'], ...where, ...args });
  return [await run({}), await run({ host: ssh.sshd.host })];
}

// A local command gets PAGER=cat and GIT_PAGER=cat, so `git log` prints; on a
// host they were unset, and the same `git log` sat in less waiting for keys.
test('a command on a host gets PAGER=cat and GIT_PAGER=cat as a local one does; env overrides them', { skip }, async () => {
  const command = 'echo "pager=[$PAGER] git=[$GIT_PAGER]"';
  const [local, remote] = await both({ command });
  assert.equal(local.output, 'pager=[cat] git=[cat]\n', brief(local));
  assert.equal(remote.output, local.output, brief(remote));
  const [ownLocal, ownRemote] = await both({ command, env: { PAGER: 'more' } });
  assert.equal(ownLocal.output, 'pager=[more] git=[cat]\n', brief(ownLocal));
  assert.equal(ownRemote.output, ownLocal.output, brief(ownRemote));
});

// OpenSSH refuses signal requests on a root login, so timeout_ms hangs the
// remote terminal up (status signal SIGHUP), but the message said "SIGTERM to
// its process group, then SIGKILL", as for a local command.
test('timeout_ms on a root login: the message says the terminal was hung up, as signal does', { skip: skip || rootOnly }, async () => {
  const [local, remote] = await both({ command: 'sleep 30', timeout_ms: 1000, yield_ms: 20000 });
  assert.equal(local.status, 'timed_out', brief(local));
  assert.equal(local.signal, 'SIGTERM', brief(local));
  assert.match(local.message, /SIGTERM to its process group ended it/, brief(local));
  assert.equal(remote.status, 'timed_out', brief(remote));
  assert.equal(remote.signal, 'SIGHUP', brief(remote));
  assert.doesNotMatch(remote.message, /SIGTERM to its process group/, brief(remote));
  assert.match(remote.message, /hung up/, brief(remote));
});

// Locally the answer names who reads the terminal ("cat (in the foreground
// process group of bash) reads the terminal"; the pager and REPL advice of
// execute(session=) goes by the same names); on a host, where the probe
// reads the same /proc, it said only "it reads the terminal".
test('a program waiting for input on a host is named as locally', { skip }, async (t) => {
  const [local, remote] = await both({ command: 'echo ready; cat; true', yield_ms: 20000 });
  for (const r of [local, remote]) t.after(() => ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  for (const r of [local, remote]) {
    assert.equal(r.status, 'backgrounded', brief(r));
    assert.equal(r.waiting_for_input, true, brief(r));
  }
  assert.match(local.message, /cat \(in the foreground process group of bash\) reads the terminal/, brief(local));
  const same = (r) => r.message.replaceAll(r.execution_id, 'ID');
  assert.equal(same(remote), same(local), brief(remote));
});

// sshd hangs the terminal up when the command's shell exits, which killed a
// job the command left in the background (`server &`): the execution said
// completed and the server was gone. Locally the job keeps the execution
// running; on a host the shell now waits for its jobs. And as locally,
// execute answers once the command has ended, not after yield_ms: the
// shell marks that end in its output, and nobody sees the mark.
test('a job a command leaves in the background on a host runs to its end, as locally', { skip }, async (t) => {
  const r = await ssh.agent.call('execute', {
    host: ssh.sshd.host, side_effects: ['NONE'], yield_ms: 55000,
    command: '(sleep 1.5; echo job-done) & echo started',
  });
  t.after(() => ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.match(r.message, /Its command has ended; what it left running in the background/, brief(r));
  assert.match(r.message, /its jobs started with &/, brief(r));
  const done = await ssh.agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 20000 });
  assert.equal(done.status, 'completed', brief(done));
  assert.equal(done.exit_code, 0, brief(done));
  const all = await ssh.agent.call('read', { execution_id: r.execution_id, since_seq: 1, format: 'raw' });
  assert.match(all.output, /started\r?\n[^]*job-done\r?\n/, brief(all));
  assert.doesNotMatch(all.output, /7771|agentty-command-ended/, brief(all));
});
