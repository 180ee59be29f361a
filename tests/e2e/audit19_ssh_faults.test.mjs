// End-to-end regression tests for SSH when things go wrong, found by a
// nineteenth audit: links that drop or hang mid-command, servers that
// restart or change their key, logins that fail, and programs on the host
// that left the terminal's session. Through the official MCP SDK client
// against a real OpenSSH sshd on 127.0.0.1 (tests/e2e/lib/sshd.mjs), logged
// in as the user running the tests like the other SSH tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout } from 'node:timers/promises';
import { installed, startAgentty, WAIT_MS } from './lib/mcp-client.mjs';
import {
  startSshd, sshClientEnv, createPasswordUser, sshdAndAgentForFile, sshdTree, rootOnly, loginUser,
} from './lib/sshd.mjs';

const ssh = sshdAndAgentForFile('agentty-audit19-home-');
const { skip, home } = ssh;

const brief = (r) => JSON.stringify({ ...r, raw: undefined });

// `su user -c CMD` (util-linux) runs CMD with setsid on the same terminal and
// waits for it. The host probe looked only at the foreground group (su, in
// wait4) and answered busy, so a remote `su postgres -c psql` or a prompt
// under it was never waiting for input: execute waited out its whole
// yield_ms and wait(until="input") never answered. (Locally fixed in audit 18.)
async function answersARemotePromptOutsideTheSession(t, command) {
  const started = Date.now();
  const r = await ssh.agent.call('execute', { host: ssh.sshd.host, command, side_effects: ['NONE'], yield_ms: WAIT_MS });
  t.after(() => ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.ok(Date.now() - started < WAIT_MS, 'returned at the prompt, not at yield_ms');
  assert.doesNotMatch(r.message ?? '', /guess/, brief(r));  // the host's answer
  assert.match(r.output, /Name: $/);
  const seen = await ssh.agent.call('wait', { execution_id: r.execution_id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(seen.wait_result, 'waiting_for_input', brief(seen));
  const answer = await ssh.agent.call('write', { execution_id: r.execution_id, input: 'bob', newline: true });
  assert.equal(answer.isError, false, brief(answer));
  const done = await ssh.agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(done.exit_code, 0, brief(done));
  assert.match(answer.output + done.output, /hi bob\n/);
}

test('a remote prompt read by a program in a session of its own (setsid -w) waits for input', { skip }, async (t) => {
  await answersARemotePromptOutsideTheSession(t, `setsid -w bash -c 'read -p "Name: " n; echo "hi $n"'`);
});

test('a remote prompt under su -c waits for input', { skip: skip || rootOnly || !installed('su') }, async (t) => {
  await answersARemotePromptOutsideTheSession(t, `su nobody -s /bin/bash -c 'read -p "Name: " n; echo "hi $n"'`);
});

// A server and an agentty of a test's own, for faults that break the
// connection; both ended after the test `t`. `env`: added to agentty's, or a
// function of the server that returns it.
async function ownHost(t, sshdOptions = {}, env = {}) {
  const own = await startSshd(sshdOptions);
  const extra = typeof env === 'function' ? env(own) : env;
  const a = await startAgentty({ env: { ...sshClientEnv(own, home), ...extra } });
  t.after(async () => {
    await a.client.close();
    await own.stop();
  });
  const run = (command, extra = {}) =>
    a.call('execute', { host: own.host, command, side_effects: ['NONE'], ...extra });
  // The per-connection sshds (children of the listener).
  const connectionServers = () => {
    const listener = readFileSync(`${own.dir}/sshd.pid`, 'utf8').trim();
    try {
      return execFileSync('pgrep', ['-P', listener], { encoding: 'utf8' }).trim().split('\n').map(Number);
    } catch {
      return [];  // pgrep found none
    }
  };
  // The one serving agentty's connection.
  const connectionServer = () => {
    const pids = connectionServers();
    assert.equal(pids.length, 1, `one connection: ${pids}`);
    return pids[0];
  };
  // Signals every sshd process of agentty's connection: the per-connection
  // sshd and, on a login other than root, the privilege-separated child
  // below it that holds the socket and would go on serving alone. Returns
  // their pids.
  const signalConnection = (signal) => {
    const pids = sshdTree(connectionServer());
    for (const pid of pids) process.kill(pid, signal);
    return pids;
  };
  const openFds = () => readdirSync(`/proc/${a.transport.pid}/fd`).length;
  return { own, a, run, connectionServers, signalConnection, openFds };
}

// Kills what `signalConnection('SIGSTOP')` froze, after the test `t`.
function killAfter(t, frozen) {
  t.after(() => {
    for (const pid of frozen) {
      try { process.kill(pid, 'SIGKILL'); process.kill(pid, 'SIGCONT'); } catch { /* gone */ }
    }
  });
}

// The connection died under a running command (its sshd killed): the answer
// kept what it printed, said what happened and what to do next, and the
// next call connected again without leaving the dead socket behind.
test('a connection killed mid-command: output kept, the reason says what next, the next call reconnects', { skip }, async (t) => {
  const { a, run, signalConnection, openFds } = await ownHost(t);
  assert.equal((await run('echo warm')).output, 'warm\n');
  const fds = openFds();
  const r = await run('echo before-the-drop; sleep 100', { yield_ms: 0 });
  assert.equal(r.isError, false, brief(r));
  const printed = await a.call('wait', { execution_id: r.execution_id, pattern: 'before-the-drop', timeout_ms: WAIT_MS });
  assert.equal(printed.wait_result, 'matched', brief(printed));
  signalConnection('SIGKILL');
  const w = await a.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'exited', brief(w));
  assert.equal(w.status, 'failed', brief(w));
  assert.match(w.failure_reason, new RegExp(`connection to ${loginUser}@127\\.0\\.0\\.1:\\d+ lost`), brief(w));
  assert.match(w.failure_reason, /next execute or open on this host connects again/, brief(w));
  const all = await a.call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.match(all.output, /before-the-drop/);
  const listed = (await a.call('ps', { status: 'failed' })).executions.map((e) => e.execution_id);
  assert.deepEqual(listed, [r.execution_id]);
  const again = await run('echo again');
  assert.equal(again.output, 'again\n', brief(again));
  assert.equal(openFds(), fds, 'the dead connection\'s socket is closed, one new one open');
  const pruned = await a.call('cleanup', { stopped_older_than_ms: 0 });
  assert.equal(pruned.removed, 1, brief(pruned));
});

// The link hung (the per-connection sshd stopped: nothing it sends or
// answers). An execute started then waited 15 s for its channel and failed
// "timed out waiting for ... to open a session channel" although the
// keepalives declared the connection dead moments later and a new one would
// have worked: an open that nothing answered on a connection silent for two
// keepalive intervals now ends the connection and is made on a fresh one.
test('an execute on a connection whose link hung connects again and runs', { skip }, async (t) => {
  const { run, signalConnection } = await ownHost(t);
  assert.equal((await run('echo warm')).output, 'warm\n');
  killAfter(t, signalConnection('SIGSTOP'));
  const r = await run('echo after-the-hang', { yield_ms: 50000 });
  assert.equal(r.isError, false, brief(r));
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.output, 'after-the-hang\n');
});

// The link hung under a running command. stop (a hang-up on a root login)
// waited out its allowance, answered "not ended yet", and the execution
// ended only when the keepalives gave the connection up 15-20 s later. The
// hang-up now goes with a keepalive, which a live server answers at once:
// silence ends the execution within stop's allowance, saying why.
test('stop on a command whose link hung ends it within the call, saying the link is silent', { skip }, async (t) => {
  const { a, run, signalConnection } = await ownHost(t);
  const r = await run('echo ready; sleep 100', { yield_ms: 0 });
  assert.equal(r.isError, false, brief(r));
  const seen = await a.call('wait', { execution_id: r.execution_id, pattern: 'ready', timeout_ms: WAIT_MS });
  assert.equal(seen.wait_result, 'matched', brief(seen));
  killAfter(t, signalConnection('SIGSTOP'));
  const s = await a.call('stop', { execution_id: r.execution_id, force_after_ms: 1000 });
  assert.equal(s.stopped, true, brief(s));
  assert.equal(s.status, 'failed', brief(s));
  // Not the keepalives' "connection ... lost: nothing received for 15 s".
  assert.match(s.failure_reason, new RegExp(`link to ${loginUser}@127\\.0\\.0\\.1:\\d+ is silent`), brief(s));
  assert.match(s.failure_reason, /hangs the program up if the link comes back/, brief(s));
});

// Refusals before anything ran: each names what to check.
test('a closed port and a name that does not resolve: the refusal says what to check', { skip }, async () => {
  const closed = await ssh.agent.call('execute', { host: 'root@127.0.0.1:1', command: 'true', side_effects: ['NONE'] });
  assert.equal(closed.status, 'failed_to_start', brief(closed));
  assert.match(closed.error, /Connection refused/, brief(closed));
  assert.match(closed.error, /nothing listens on port 1 there: check the port/, brief(closed));
  const unknown = await ssh.agent.call('execute', { host: 'no-such-host.invalid', command: 'true', side_effects: ['NONE'] });
  assert.equal(unknown.status, 'failed_to_start', brief(unknown));
  assert.match(unknown.error, /cannot resolve no-such-host\.invalid/, brief(unknown));
  assert.match(unknown.error, /check the host name/, brief(unknown));
});

// A host behind a bastion is reached through a ProxyCommand of the ssh
// config (a ProxyJump becomes `ssh -W`), which libssh ran with its error
// output sent to /dev/null. One that worked connected; one that failed said
// "Connection reset by peer" and nothing of the proxy, which sent the agent
// checking the host. agentty now runs the command: the error names it and
// says what it printed, also when the link through it drops mid-command.
test('a host behind a ProxyCommand connects; a failing one is named in the error with what it said', { skip: skip || !installed('ssh') }, async (t) => {
  const config = `${home}/proxy_ssh_config`;
  const refusing = `${home}/refusing-bastion`;
  writeFileSync(refusing, '#!/bin/sh\necho "bastion for $1:$2: Permission denied (publickey)." >&2\nexit 255\n', { mode: 0o755 });
  const { sshd } = ssh;
  // A bastion's ssh -W, which says so on stderr when its link drops.
  const bastion = `${home}/bastion`;
  writeFileSync(bastion, '#!/bin/sh\n' +
    `ssh -F /dev/null -i ${sshd.clientKey} -o IdentitiesOnly=yes -o BatchMode=yes ` +
    `-o UserKnownHostsFile=${sshd.knownHosts} -p ${sshd.port} ${loginUser}@127.0.0.1 -W "$1:$2"\n` +
    'echo "bastion link dropped" >&2\n', { mode: 0o755 });
  writeFileSync(config, [
    'Host viaproxy', '  HostName 127.0.0.1', `  Port ${sshd.port}`, `  User ${loginUser}`, `  ProxyCommand ${bastion} %h %p`,
    // The same user, HostName and port behind another bastion: another
    // machine (private addresses repeat across networks), so not viaproxy's
    // connection, which the pool used to hand out for it.
    'Host brokenproxy', '  HostName 127.0.0.1', `  Port ${sshd.port}`, `  User ${loginUser}`, `  ProxyCommand ${refusing} %h %p`,
    'Host *', `  IdentityFile ${sshd.clientKey}`, '  IdentitiesOnly yes', '',
  ].join('\n'));
  const a = await startAgentty({ env: { ...sshClientEnv(sshd, home), AGENTTY_SSH_CONFIG: config } });
  t.after(() => a.client.close());
  const through = await a.call('execute', { host: 'viaproxy', command: 'echo through-the-proxy', side_effects: ['NONE'] });
  assert.equal(through.status, 'completed', brief(through));
  assert.equal(through.output, 'through-the-proxy\n', brief(through));
  const broken = await a.call('execute', { host: 'brokenproxy', command: 'true', side_effects: ['NONE'] });
  assert.equal(broken.status, 'failed_to_start', brief(broken));
  assert.match(broken.error, /goes through the ProxyCommand `exec \S*refusing-bastion 127\.0\.0\.1 \d+` of the ssh config/, brief(broken));
  assert.match(broken.error, /It said on stderr: bastion for 127\.0\.0\.1:\d+: Permission denied \(publickey\)\./, brief(broken));

  const running = await a.call('execute', { host: 'viaproxy', command: 'echo before-the-drop; sleep 100', side_effects: ['NONE'], yield_ms: 0 });
  const printed = await a.call('wait', { execution_id: running.execution_id, pattern: 'before-the-drop', timeout_ms: WAIT_MS });
  assert.equal(printed.wait_result, 'matched', brief(printed));
  const wrapper = execFileSync('pgrep', ['-f', bastion], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(wrapper.length, 1, `one bastion process: ${wrapper}`);
  execFileSync('pkill', ['-KILL', '-P', wrapper[0]]);  // its ssh -W: the link drops
  const dropped = await a.call('wait', { execution_id: running.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(dropped.status, 'failed', brief(dropped));
  assert.match(dropped.failure_reason, /lost: .*goes through the ProxyCommand `exec \S*bastion 127\.0\.0\.1 \d+`/, brief(dropped));
  assert.match(dropped.failure_reason, /It said on stderr: [^]*bastion link dropped\)/, brief(dropped));
});

// OpenSSH drops a new connection before its banner while MaxStartups
// connections have not logged in yet (a person's pending password login
// beside an agent's key login is one): the error said "is that port an SSH
// server's?", which sent the agent looking at the wrong thing.
test('a server refusing connections for now (MaxStartups) is named as the likely cause', { skip }, async (t) => {
  const { own, run, connectionServers } = await ownHost(t, { maxStartups: 1 });
  const pending = net.connect(own.port, '127.0.0.1');  // not logged in: holds the one start-up
  t.after(() => pending.destroy());
  await new Promise((resolve, reject) => { pending.once('data', resolve); pending.once('error', reject); });
  const refused = await run('echo hi');
  assert.equal(refused.status, 'failed_to_start', brief(refused));
  assert.match(refused.error, /MaxStartups/, brief(refused));
  assert.match(refused.error, /try again in a moment/, brief(refused));
  pending.destroy();
  // Its slot is free once the server process that took it has gone.
  for (let i = 0; i < 400 && connectionServers().length > 0; ++i) await setTimeout(25);
  const again = await run('echo hi');
  assert.equal(again.output, 'hi\n', brief(again));
});

// Waited out yield_ms (30 s by default) for a login only a person can do,
// then said "write to answer prompts" while every write was refused (held).
test('execute on a host that wants a password answers at once, held, saying who must act and how to follow', { skip: skip || rootOnly }, async (t) => {
  const user = createPasswordUser({ suffix: 'p' });
  t.after(() => user.remove());
  // No key of agentty's is accepted: only a password logs in.
  const { a, own } = await ownHost(t, { passwordAuth: true },
    (server) => ({ AGENTTY_SSH_CONFIG: server.writeConfig(server.wrongKey, 'wrong_config') }));
  const started = Date.now();
  const r = await a.call('execute', {
    host: `${user.name}@127.0.0.1:${own.port}`, command: 'echo hi', side_effects: ['NONE'], yield_ms: WAIT_MS,
  });
  assert.equal(r.status, 'backgrounded', brief(r));  // ended with its agentty after the test
  assert.equal(r.held, true, brief(r));
  assert.ok(Date.now() - started < WAIT_MS, 'returned at once, not at yield_ms');
  assert.match(r.handoff_reason ?? '', /password/, brief(r));
  assert.match(r.message, /until="released"/, brief(r));
  assert.doesNotMatch(r.message, /write to answer/, brief(r));
  const ps = (await a.call('ps', {})).executions.find((e) => e.execution_id === r.execution_id);
  assert.equal(ps.held, true, brief(ps));  // still waiting for the person, nothing ran
  assert.equal(ps.status, 'running', brief(ps));
});
