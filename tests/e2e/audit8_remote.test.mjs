// End-to-end regression tests for executions and sessions on an SSH host,
// found by driving agentty as an operator and an agent would, through the
// official MCP SDK client against a real OpenSSH sshd on 127.0.0.1
// (tests/e2e/lib/sshd.mjs), logged in as root like the other SSH tests (and
// as a throwaway account where root behaves differently). Needs root (sshd).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAgentty } from './lib/mcp-client.mjs';
import { startSshd, sshdUsable, createPasswordUser } from './lib/sshd.mjs';

const skip = sshdUsable() ? false : 'needs root and /usr/sbin/sshd';
const home = mkdtempSync(path.join(tmpdir(), 'agentty-audit8-home-'));  // no ~/.ssh keys or config

let sshd;
let agent;
let user;  // a throwaway account (not root), with a home of its own
let userHome;

before(async () => {
  if (skip) return;
  sshd = await startSshd();
  userHome = mkdtempSync(path.join(tmpdir(), 'agentty-audit8-user-'));
  user = createPasswordUser({ home: userHome });
  agent = await startAgentty({
    env: {
      HOME: home, SSH_AUTH_SOCK: '', AGENTTY_SSH_KNOWN_HOSTS: sshd.knownHosts,
      AGENTTY_SSH_CONFIG: sshd.writeConfig(sshd.clientKey),
    },
  });
});

after(async () => {
  await agent?.client.close();
  await sshd?.stop();
  user?.remove();
});

const run = (command, extra = {}) =>
  agent.call('execute', { host: sshd.host, command, side_effects: ['NONE'], ...extra });

// Starts `command` on the host in the background; SIGKILLed after the test.
async function background(t, command, extra = {}) {
  const r = await run(command, { yield_ms: 0, ...extra });
  assert.equal(r.isError, false, JSON.stringify(r));
  t.after(() => agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  return r.execution_id;
}

// stdin on a host travels in the command line (printf '%b' DATA | (CMD)):
// the data's lines and the subshell's own line came before the command, so
// the shell's messages named the wrong line ("line 4: no-such-cmd") where
// the same command run locally, or by `ssh host CMD`, says line 1.
test('execute(host, stdin): the shell\'s messages name the command\'s own line numbers', { skip }, async () => {
  let r = await run('no-such-cmd-8a', { stdin: 'a\nb\n' });
  assert.equal(r.exit_code, 127, JSON.stringify(r));
  assert.match(r.output, /line 1: no-such-cmd-8a: command not found/);
  r = await run('cat\nno-such-cmd-8a\necho "at $LINENO"', { stdin: 'one\ntwo\nthree\n' });
  assert.equal(r.output.replace(/\r/g, ''), 'one\ntwo\nthree\nbash: line 2: no-such-cmd-8a: command not found\nat 3\n');
});
