// End-to-end regression tests for SSH when things go wrong, found by a
// nineteenth audit: links that drop or hang mid-command, servers that
// restart or change their key, logins that fail, and programs on the host
// that left the terminal's session. Through the official MCP SDK client
// against a real OpenSSH sshd on 127.0.0.1 (tests/e2e/lib/sshd.mjs), logged
// in as root like the other SSH tests. Needs root (sshd).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAgentty, WAIT_MS } from './lib/mcp-client.mjs';
import { startSshd, sshdUsable, sshClientEnv } from './lib/sshd.mjs';

const skip = sshdUsable() ? false : 'needs root and /usr/sbin/sshd';
const home = mkdtempSync(path.join(tmpdir(), 'agentty-audit19-home-'));  // no ~/.ssh keys or config

let sshd;
let agent;

before(async () => {
  if (skip) return;
  sshd = await startSshd();
  agent = await startAgentty({ env: sshClientEnv(sshd, home) });
});

after(async () => {
  await agent?.client.close();
  await sshd?.stop();
});

const brief = (r) => JSON.stringify({ ...r, raw: undefined });

function installed(program) {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// `su user -c CMD` (util-linux) runs CMD with setsid on the same terminal and
// waits for it. The host probe looked only at the foreground group (su, in
// wait4) and answered busy, so a remote `su postgres -c psql` or a prompt
// under it was never waiting for input: execute waited out its whole
// yield_ms and wait(until="input") never answered. (Locally fixed in audit 18.)
async function answersARemotePromptOutsideTheSession(t, command) {
  const started = Date.now();
  const r = await agent.call('execute', { host: sshd.host, command, side_effects: ['NONE'], yield_ms: WAIT_MS });
  t.after(() => agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.ok(Date.now() - started < WAIT_MS, 'returned at the prompt, not at yield_ms');
  assert.doesNotMatch(r.message ?? '', /guess/, brief(r));  // the host's answer
  assert.match(r.output, /Name: $/);
  const seen = await agent.call('wait', { execution_id: r.execution_id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(seen.wait_result, 'waiting_for_input', brief(seen));
  const answer = await agent.call('write', { execution_id: r.execution_id, input: 'bob', newline: true });
  assert.equal(answer.isError, false, brief(answer));
  const done = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(done.exit_code, 0, brief(done));
  assert.match(answer.output + done.output, /hi bob\n/);
}

test('a remote prompt read by a program in a session of its own (setsid -w) waits for input', { skip }, async (t) => {
  await answersARemotePromptOutsideTheSession(t, `setsid -w bash -c 'read -p "Name: " n; echo "hi $n"'`);
});

test('a remote prompt under su -c waits for input', { skip: skip || !installed('su') }, async (t) => {
  await answersARemotePromptOutsideTheSession(t, `su nobody -s /bin/bash -c 'read -p "Name: " n; echo "hi $n"'`);
});
