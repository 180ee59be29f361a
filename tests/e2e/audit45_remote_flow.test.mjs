// Remote screen floods (audit 45; its SSH pause came back in session 39). A
// program on a host prints, as fast as it can, sequences that each cost
// libvterm the whole screen. Back to back, bare clears (`\e[2J`), resets
// (`\ec`) and alignment tests (`\e#8`) are repeats that change nothing,
// which the screen feeder leaves out (session 37). With a letter between
// they are not: the program must wait for the screen model, which it does
// through its SSH channel's window (SshChannel::pause_output). Before, every
// byte reached the screen model at once, and an execute on the same host
// took 10-14 s or failed to get its PTY. The frames test checks that nothing
// is lost, and that the exit comes after the output. A real OpenSSH sshd on
// 127.0.0.1 (tests/e2e/lib/sshd.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sshdAndAgentForFile } from './lib/sshd.mjs';
import { eventually } from './lib/web-helpers.mjs';

const ssh = sshdAndAgentForFile('agentty-audit45-home-');
const { skip } = ssh;
const call = (tool, args) => ssh.agent.call(tool, args);
const brief = (r) => JSON.stringify({ ...r, raw: undefined, output: r.output?.slice(0, 300) });

const execute = (args) => call('execute', { side_effects: ['NONE'], ...args });

// Starts `command` on the host in the background; SIGKILLed after the test.
async function backgroundOnHost(t, command) {
  const r = await execute({ host: ssh.sshd.host, command, yield_ms: 0 });
  assert.equal(r.isError, false, brief(r));
  t.after(() => call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  return r.execution_id;
}

const latestSeq = async (id) =>
  (await call('ps', {})).executions.find((e) => e.execution_id === id).latest_seq;

// How long the slowest of `count` calls took; each must succeed.
async function slowest(count, makeCall) {
  let worst = 0;
  for (let i = 0; i < count; ++i) {
    const started = Date.now();
    const r = await makeCall();
    assert.equal(r.isError, false, brief(r));
    worst = Math.max(worst, Date.now() - started);
  }
  return worst;
}

const FLOODS = {
  'full-screen clears (ED 2)': '\\e[2J',
  'terminal resets (RIS)': '\\ec',
  'screen alignment tests (DECALN)': '\\e#8',
  // Not repeats: the program waits for the screen model.
  'clears with a letter between': '\\e[2Jx',
  'alignment tests with a letter between': '\\e#8x',
  // Each scrolls the whole screen once the cursor is at the top. They came
  // in packets small enough to catch up at once, 64 to a pump of the
  // connection: a look waited 0.3-0.5 s and an execute on the host 4-6 s,
  // until output got one catch-up per turn (session 41).
  'reverse indexes': '\\eM',
};

for (const [what, sequence] of Object.entries(FLOODS)) {
  test(`a host program printing ${what} as fast as it can holds up no other call`, { skip }, async (t) => {
    const idleHere = await execute({ command: 'echo idle' });
    assert.equal(idleHere.status, 'completed', brief(idleHere));
    const idleThere = await execute({ host: ssh.sshd.host, command: 'echo idle' });
    assert.equal(idleThere.status, 'completed', brief(idleThere));
    const flood = await backgroundOnHost(t, `while :; do printf '${sequence}%.0s' {1..200}; done`);
    // More than a catch-up batch (1 MiB) and an SSH window (~1.3 MB) of it.
    await eventually(async () => (await latestSeq(flood)) > 2 * (1 << 20) + 400000,
      { timeout: 90000, what: '2.5 MB of the flood' });
    // A look at a local execution and at one on the same host connection
    // (no network: the screen model is here) ...
    const lookHere = await slowest(20, () => call('screen', { execution_id: idleHere.execution_id }));
    const lookThere = await slowest(20, () => call('screen', { execution_id: idleThere.execution_id }));
    // ... and new programs on this machine and on the host's connection,
    // whose channel shares the flood's.
    const runHere = await slowest(3, () => execute({ command: 'echo ping' }));
    const runThere = await slowest(3, async () => {
      const r = await execute({ host: ssh.sshd.host, command: 'echo ping' });
      assert.equal(r.status, 'completed', brief(r));
      assert.match(r.output, /ping/);
      return r;
    });
    const times = JSON.stringify({ lookHere, lookThere, runHere, runThere });
    // Fed to libvterm one by one these took seconds; left out, milliseconds.
    assert.ok(lookHere < 1000 && lookThere < 1000, `a screen call took too long: ${times}`);
    assert.ok(runHere < 5000 && runThere < 5000, `an execute took too long: ${times}`);
    // The flood still flows, and a look at it is quick.
    const before = await latestSeq(flood);
    await eventually(async () => (await latestSeq(flood)) > before + 100000,
      { timeout: 30000, what: 'the flood going on' });
    const started = Date.now();
    const look = await call('screen', { execution_id: flood });
    assert.equal(look.isError, false, look.error);
    assert.ok(Date.now() - started < 3000, `screen of the flood took ${Date.now() - started} ms`);
    const stopped = await call('stop', { execution_id: flood, signal: 'SIGKILL' });
    assert.equal(stopped.status, 'stopped', brief(stopped));
    // The hang-up brought what the window held (up to ~1.3 MB, and what was
    // being handed out) at once with the exit: the screen model settles it
    // at its pace, holding up no other call (audit 48; one catch-up of it
    // held the loop past a minute). A look at the stopped flood waits for
    // that: 2-4 s for clears, 16-27 s for alignment tests (session 39, idle),
    // so this one call may take longer than the client's default 60 s.
    const lookAfter = await slowest(5, () => call('screen', { execution_id: idleHere.execution_id }));
    assert.ok(lookAfter < 1000, `a screen call after the stop took ${lookAfter} ms`);
    const settling = Date.now();
    const last = await ssh.agent.call('screen', { execution_id: flood }, { timeout: 240000 });
    assert.equal(last.isError, false, brief(last));
    assert.equal(last.status, 'stopped', brief(last));
    t.diagnostic(JSON.stringify({ lookHere, lookThere, runHere, runThere, lookAfter,
      lookAtTheStopped: Date.now() - settling }));
  });
}

test('a host flood of frames loses no output: every frame is read back in order, then the exit', { skip }, async () => {
  // 100000 numbered frames, each a clear, a reset and its number (1.6 MB,
  // more than an SSH window): no repeats to leave out.
  const started = await execute({
    host: ssh.sshd.host,
    command: "for i in $(seq 1 100000); do printf '\\e[2J\\e[H\\ec%d\\n' $i; done; echo end; exit 3",
    yield_ms: 0,
  });
  assert.equal(started.isError, false, brief(started));
  let r = started;
  for (let rounds = 0; r.status === 'backgrounded' || r.status === 'running'; ++rounds) {
    assert.ok(rounds < 6, `still running after ${rounds} waits: ${brief(r)}`);
    r = await call('wait', { execution_id: started.execution_id, until: 'exit', timeout_ms: 55000, max_output_bytes: 256 });
    assert.equal(r.isError, false, brief(r));
  }
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.exit_code, 3, brief(r));
  let text = '';
  for (let since = 1; ;) {
    const page = await call('read', { execution_id: started.execution_id, since_seq: since, max_output_bytes: 1 << 20 });
    assert.equal(page.isError, false, page.error);
    text += page.output;
    if (page.next_seq >= page.latest_seq) break;
    since = page.next_seq;
  }
  const numbers = text.split('\n').filter((line) => /^\d+$/.test(line)).map(Number);
  assert.equal(numbers.length, 100000, `${numbers.length} frames read back`);
  assert.ok(numbers.every((n, i) => n === i + 1), 'frames out of order');
  assert.match(text, /end\n$/);
  const screen = await call('screen', { execution_id: started.execution_id });
  assert.equal(screen.lines[0], '100000', brief(screen));
  assert.equal(screen.lines[1], 'end', brief(screen));
});
