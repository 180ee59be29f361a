// End-to-end: a long-lived agentty under a careless or hostile client loses
// nothing and leaks nothing. Every program is found afterwards through a
// marker variable in agentty's environment (inherited by everything it
// starts), so an orphan anywhere on the machine is seen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agenttyBin, startAgentty } from './lib/mcp-client.mjs';
import { eventually } from './lib/web-helpers.mjs';

// ---- /proc ----

function processIds() {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
}

function readProc(pid, file) {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return '';
  }
}

// Live (not zombie) processes whose environment holds `marker`.
function markedProcesses(marker) {
  return processIds().filter((pid) => {
    const stat = readProc(pid, 'stat');
    return stat && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z' &&
      readProc(pid, 'environ').includes(marker);
  }).map((pid) => `${pid} ${readProc(pid, 'cmdline').replace(/\0/g, ' ').trim()}`);
}

function killMarked(marker) {
  for (const line of markedProcesses(marker)) {
    try { process.kill(Number(line.split(' ')[0]), 'SIGKILL'); } catch { /* gone */ }
  }
}

function listDir(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// An agentty whose every program carries a marker; killed with what it
// started after the test, whatever happens.
async function markedAgentty(t, { env = {}, ...options } = {}) {
  const marker = `AUDIT7_HYGIENE_${crypto.randomBytes(6).toString('hex')}`;
  const agent = await startAgentty({ env: { [marker]: '1', ...env }, ...options });
  const pid = agent.transport.pid;
  const stderr = [];
  agent.transport.stderr?.on('data', (data) => stderr.push(String(data)));
  const exited = new Promise((resolve) => {
    const child = agent.transport._process;
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  t.after(async () => {
    await agent.client.close().catch(() => {});
    killMarked(marker);
  });
  return { ...agent, marker, pid, exited, stderr };
}

const noneLeft = (marker) => eventually(() => markedProcesses(marker).length === 0,
  { timeout: 10000, what: 'every program to end' }).catch(() => {
  throw new Error(`left running:\n${markedProcesses(marker).join('\n')}`);
});

// ---- a session's rc files ----

test("a session's generated rc files go when it ends, and a refused open leaves none", async (t) => {
  const agent = await markedAgentty(t, { env: { AGENTTY_MAX_SESSIONS: '1' } });
  const sessionsDir = path.join(agent.stateDir, 'sessions');
  for (let i = 0; i < 5; i++) {
    const session = await agent.call('open', {});
    assert.equal(session.isError, false, session.error);
    assert.equal(listDir(sessionsDir).length, 1);
    // Refused by the limit after its rc files were written.
    const refused = await agent.call('open', {});
    assert.match(refused.error, /AGENTTY_MAX_SESSIONS/);
    assert.equal(listDir(sessionsDir).length, 1, 'the refused open left its rc files');
    const closed = await agent.call('close', { execution_id: session.execution_id });
    assert.equal(closed.closed, true);
    assert.deepEqual(listDir(sessionsDir), [], `open/close ${i} left its rc files`);
  }
});

