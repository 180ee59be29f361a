// End-to-end regression tests for remote (SSH) executions and sessions found
// by driving agentty as an operator and an agent would, through the official
// MCP SDK client against a real OpenSSH sshd on 127.0.0.1 (tests/e2e/lib/
// sshd.mjs), logged in as the user running the tests like the other SSH tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { setTimeout } from 'node:timers/promises';
import path from 'node:path';
import { startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { startSshd, createPasswordUser, sshdAndAgentForFile, rootOnly } from './lib/sshd.mjs';

const ssh = sshdAndAgentForFile('agentty-audit6-home-');
const { skip, home } = ssh;

const run = (command, extra = {}) =>
  ssh.agent.call('execute', { host: ssh.sshd.host, command, side_effects: ['NONE'], ...extra });

// OpenSSH refuses signal requests for a root login (it runs without
// privilege separation: "session signalling requires privilege separation"),
// so a SIGHUP sent as a request was ignored and stop waited out the whole
// grace before its SIGKILL hung the channel up. A hang-up is what closing the
// channel does to the remote terminal: it must happen at once.
test('stop(SIGHUP) of a remote command hangs its terminal up at once, not after the grace', { skip }, async () => {
  const r = await run('echo ready; sleep 600', { yield_ms: 0 });
  assert.equal(r.isError, false, r.error);
  await ssh.agent.call('wait', { execution_id: r.execution_id, pattern: 'ready', timeout_ms: 20000 });
  const startedAt = Date.now();
  const s = await ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGHUP', force_after_ms: 40000 });
  assert.equal(s.isError, false, JSON.stringify(s));
  assert.equal(s.status, 'stopped', JSON.stringify(s));
  assert.equal(s.signal, 'SIGHUP');
  assert.equal(s.stopped, true);
  assert.ok(Date.now() - startedAt < 20000, `stop took ${Date.now() - startedAt} ms`);
});

test('stop of a remote session (SIGHUP by default) ends it at once', { skip }, async () => {
  const o = await ssh.agent.call('open', { host: ssh.sshd.host });
  assert.equal(o.prompt_ready, true, JSON.stringify(o));
  const startedAt = Date.now();
  const s = await ssh.agent.call('stop', { execution_id: o.execution_id, force_after_ms: 40000 });
  assert.equal(s.status, 'stopped', JSON.stringify(s));
  assert.equal(s.signal, 'SIGHUP');
  assert.ok(Date.now() - startedAt < 20000, `stop took ${Date.now() - startedAt} ms`);
});

// A busy remote program (a REPL running a slow line) that printed half a
// line was reported as waiting: remotely "waiting for input" was a guess
// (stopped mid-line, then quiet). The host's /proc now shows it sleeping
// (remote_input.test.mjs has the guess, on a host that cannot tell).
test('wait(until=input) on a host: a program that printed half a line and sleeps is not waiting', { skip }, async () => {
  const r = await run('printf "slow> "; sleep 600', { yield_ms: 0 });
  assert.equal(r.isError, false, r.error);
  try {
    await ssh.agent.call('wait', { execution_id: r.execution_id, pattern: 'slow> ', timeout_ms: 30000 });
    const w = await ssh.agent.call('wait', { execution_id: r.execution_id, until: 'input', timeout_ms: 3000 });
    assert.equal(w.wait_result, 'deadline_reached', JSON.stringify(w));
    assert.equal(w.waiting_for_input, false);
  } finally {
    await ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' });
  }
});

// The bytes waiting, unread, in the receive queue of sshd's end of the
// connection from agentty (sshd listens on `port`; `ss` reports Recv-Q).
function unreadBySshd(port) {
  const lines = execFileSync('ss', ['-Htn', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  return lines.trim().split('\n').filter(Boolean).reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[0]), 0);
}

// The shared connection can die without a word (the network went away):
// an execute that was waiting on it for its channel got "connection lost"
// although nothing had run; a new `ssh` would simply have connected again.
test('a shared connection found dead while a channel opens: the execute reconnects and runs', { skip }, async () => {
  const own = await startSshd();
  const a = await startAgentty({
    env: { HOME: home, SSH_AUTH_SOCK: '', AGENTTY_SSH_KNOWN_HOSTS: own.knownHosts,
      AGENTTY_SSH_CONFIG: own.writeConfig(own.clientKey) },
  });
  const child = () => Number(execFileSync('pgrep', ['-P', readFileSync(`${own.dir}/sshd.pid`, 'utf8').trim()], { encoding: 'utf8' }).trim());
  let frozen;
  try {
    const first = await a.call('execute', { host: own.host, command: 'echo first', side_effects: ['NONE'] });
    assert.equal(first.output, 'first\n', JSON.stringify(first));
    frozen = child();  // the per-connection sshd: stopped, it answers nothing
    process.kill(frozen, 'SIGSTOP');
    const before = unreadBySshd(own.port);
    const pending = a.call('execute', { host: own.host, command: 'echo second', side_effects: ['NONE'], yield_ms: 40000 });
    for (let i = 0; i < 400 && unreadBySshd(own.port) <= before; ++i) await setTimeout(25);  // the open is on the wire
    process.kill(frozen, 'SIGKILL');  // its socket closes: the connection is dead
    const r = await pending;
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.output, 'second\n');
  } finally {
    try { process.kill(frozen, 'SIGCONT'); } catch { /* gone */ }
    await a.client.close();
    await own.stop();
  }
});

// `script` is bash (checked with bash -n here); on a host it ran under the
// account's login shell, so for an account whose shell is sh a script that
// passed the check failed remotely with sh's syntax error.
test('script on a host runs under bash even when the login shell is sh', { skip: skip || rootOnly }, async (t) => {
  const user = createPasswordUser({ home: tempDirForRun('agentty-audit6-sh-'), shell: '/bin/sh' });
  t.after(() => user.remove());
  const host = `${user.name}@127.0.0.1:${ssh.sshd.port}`;
  const script = 'letters=(a b c)\n[[ ${#letters[@]} == 3 ]] && echo "second=${letters[1]}"\nread -r line\necho "read=$line"\n';
  const r = await ssh.agent.call('execute', { host, script, stdin: 'piped\n', cwd: '/tmp', side_effects: ['NONE'] });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.output, 'second=b\nread=piped\n');
  assert.equal(r.exit_code, 0);
  // A command is the login shell's, as with `ssh host cmd`.
  const c = await ssh.agent.call('execute', { host, command: 'echo "${BASH_VERSION:-not bash}"', side_effects: ['NONE'] });
  assert.equal(c.output, 'not bash\n');
});

// OpenSSH allows MaxSessions (10 by default) channels per connection, and
// agentty shares one connection per host: one more execute was refused with
// libssh's "Channel opening failure: channel 54 error (2) open failed".
test('past the server\'s sessions per connection, the refusal says why and what to do', { skip }, async (t) => {
  const capped = await startSshd({ maxSessions: 2 });
  t.after(() => capped.stop());
  const a = await startAgentty({
    env: { HOME: home, SSH_AUTH_SOCK: '', AGENTTY_SSH_KNOWN_HOSTS: capped.knownHosts,
      AGENTTY_SSH_CONFIG: capped.writeConfig(capped.clientKey) },
  });
  t.after(() => a.client.close());
  const start = (command, extra) => a.call('execute', { host: capped.host, command, side_effects: ['NONE'], ...extra });
  for (let i = 0; i < 2; ++i) {
    const r = await start('sleep 600', { yield_ms: 0 });
    assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  }
  const refused = await start('echo third');
  assert.equal(refused.status, 'failed_to_start', JSON.stringify(refused));
  assert.match(refused.error, /2 other channels are open on this connection/);
  assert.match(refused.error, /MaxSessions/);
  assert.match(refused.error, /stop one/);
});

// An agent does not know the remote home's path and names a directory as a
// person would type it: cwd "~/dir" was quoted whole ("cd: ~/dir: No such
// file or directory").
test('execute(host, cwd) and open(host, cwd): "~" and "~/dir" are the remote home', { skip }, async (t) => {
  const made = await run('mkdir -p ".agentty audit6" && cd && pwd');
  assert.equal(made.exit_code, 0, JSON.stringify(made));
  const remoteHome = made.output.trim();
  t.after(() => run('rmdir ".agentty audit6"'));
  let r = await run('pwd', { cwd: '~' });
  assert.equal(r.output, `${remoteHome}\n`, JSON.stringify(r));
  r = await run('pwd', { cwd: '~/.agentty audit6' });
  assert.equal(r.exit_code, 0, JSON.stringify(r));
  assert.equal(r.output, `${remoteHome}/.agentty audit6\n`);
  const o = await ssh.agent.call('open', { host: ssh.sshd.host, cwd: '~/.agentty audit6' });
  assert.equal(o.prompt_ready, true, JSON.stringify(o));
  t.after(() => ssh.agent.call('close', { execution_id: o.execution_id }));
  r = await ssh.agent.call('execute', { session: o.execution_id, command: 'pwd', side_effects: ['NONE'] });
  assert.equal(r.output, `${remoteHome}/.agentty audit6\n`);
});
