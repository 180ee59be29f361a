// Audit 39: one session used the way an agent uses a shell for a whole
// working day: many commands in one long-lived shell, its prompt replaced,
// the shell replaced or killed. Each answer is the command's own, and what
// the session says about its shell stays true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { sshdUsable, startSshd, sshClientEnv } from './lib/sshd.mjs';
import { WAIT_MS, startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { openFds } from './lib/proc-stats.mjs';

const NONE = ['NONE'];
const brief = (r) => JSON.stringify({ ...r, raw: undefined });

async function started(t, options) {
  const agent = await startAgentty(options);
  t.after(() => agent.client.close());
  const execute = (session, command, extra = {}) =>
    agent.call('execute', { session, command, side_effects: NONE, yield_ms: WAIT_MS, ...extra });
  return { ...agent, execute };
}

// Pids of the processes whose argv is exactly `argv`.
function processesRunning(argv) {
  const wanted = `${argv.join('\0')}\0`;
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === wanted;
    } catch {
      return false;  // ended meanwhile
    }
  });
}

test('a long-lived session: every answer is its own command\'s output and exit code, fds stay flat', async (t) => {
  const agent = await started(t, { args: ['--no-web'] });
  const opened = await agent.call('open', {});
  assert.equal(opened.prompt_ready, true, brief(opened));
  const id = opened.execution_id;
  const dir = tempDirForRun('agentty-e2e-audit39-');
  const steps = (i) => [
    [`mkdir -p ${dir}/d${i % 3} && cd ${dir}/d${i % 3} && pwd`, `${dir}/d${i % 3}\n`, 0],
    [`export SOAK_N=${i}`, '', 0],
    ['f() { echo "f:$1"; return $2; }; f "$SOAK_N" 3', `f:${i}\n`, 3],
    [`alias soak='echo alias-${i}'`, '', 0],
    ['soak', `alias-${i}\n`, 0],
    ['(cd /; echo "sub:$PWD"; exit 7)', 'sub:/\n', 7],
    ['pwd', `${dir}/d${i % 3}\n`, 0],
    ['(set -e; false; echo never)', '', 1],
    [`echo 'héllo 中文 🎉 ${i}'`, `héllo 中文 🎉 ${i}\n`, 0],
  ];
  let fdsAfterWarmUp;
  for (let i = 0; i < 12; i++) {
    for (const [command, output, code] of steps(i)) {
      const r = await agent.execute(id, command);
      assert.equal(r.status, 'completed', `${command}: ${brief(r)}`);
      assert.equal(r.output, output, `${command}: ${brief(r)}`);
      assert.equal(r.exit_code, code, `${command}: ${brief(r)}`);
      assert.equal(r.boundaries, 'exact', `${command}: ${brief(r)}`);
    }
    if (i === 1) fdsAfterWarmUp = openFds(agent.transport.pid);
  }
  assert.equal(openFds(agent.transport.pid), fdsAfterWarmUp);
  // execute's answers moved the cursor past everything: nothing is read twice.
  const rest = await agent.call('read', { execution_id: id });
  assert.equal(rest.output, '', brief(rest));
});

// After PROMPT_COMMAND and PS1 were both replaced, or `exec bash`, the
// session's own shell (same pid, so "in the foreground") waits at a prompt
// that prints no marks. The answer said "boundaries: exact" and "the command
// waits for input... answer it with write", with no word of rearm, and the
// command rules took a line written there for an answer to the shell's
// `read`: `write("echo forbidden-ran\n")` ran it.
test('a session whose shell no longer marks its prompt says so, and rules check lines written to it', async (t) => {
  const where = [{}];
  let sshd;
  let env = { AGENTTY_DENY_COMMAND_REGEX: String.raw`\bforbidden-ran\b` };
  if (sshdUsable()) {
    sshd = await startSshd();
    t.after(() => sshd.stop());
    env = { ...env, ...sshClientEnv(sshd, tempDirForRun('agentty-e2e-audit39-home-')) };
    where.push({ host: sshd.host });
  }
  const agent = await started(t, { env, args: ['--no-web'] });
  for (const place of where) {
    for (const unhook of [['PROMPT_COMMAND=', "PS1='unmarked> '"], ['exec bash --norc']]) {
      const opened = await agent.call('open', place);
      assert.equal(opened.prompt_ready, true, brief(opened));
      const id = opened.execution_id;
      let r;
      for (const command of unhook) r = await agent.execute(id, command, { yield_ms: 10000 });
      const what = `${JSON.stringify(place)} ${unhook.join('; ')}: ${brief(r)}`;
      assert.equal(r.boundaries, 'heuristic', what);
      assert.match(r.message, /no longer marks/, what);
      assert.match(r.message, /write\(action="rearm"\)/, what);
      // A wait for the command's end runs out (no end mark comes), and its
      // advice is rearm, not "answer it with write".
      const waited = await agent.call('wait', { execution_id: id, until: 'exit', timeout_ms: 300 });
      assert.equal(waited.wait_result, 'deadline_reached', brief(waited));
      assert.match(waited.message, /no longer marks.*write\(action="rearm"\)/s, brief(waited));
      const refused = await agent.call('write', { execution_id: id, input: 'echo forbidden-ran', newline: true });
      assert.equal(refused.ok, false, `${what}\n${brief(refused)}`);
      assert.match(refused.error, /AGENTTY_DENY_COMMAND_REGEX/, brief(refused));
      const rearmed = await agent.call('write', { execution_id: id, action: 'rearm', yield_ms: WAIT_MS });
      assert.equal(rearmed.armed, true, brief(rearmed));
      const exact = await agent.execute(id, '(exit 6)');
      assert.equal(exact.exit_code, 6, brief(exact));
      assert.equal(exact.boundaries, 'exact', brief(exact));
      await agent.call('close', { execution_id: id });
    }
  }
});

// A local session's terminal outlived its shell: agentty-supervisor, not
// the shell, leads the terminal's session, so nothing hung up what the
// shell left. With `sleep` in the foreground, a shell killed from outside
// left the session "running" (execute: "a command is still running",
// wait(until=exit) ran out); `exit` with a job in the background left it
// "running" with no shell, every later execute refused. On a host sshd
// ends the session with its login shell.
test('a local session ends with its shell: killed from outside, or exit with a job left', async (t) => {
  const agent = await started(t, { args: ['--no-web'] });
  // Killed while a job runs in the foreground.
  let opened = await agent.call('open', {});
  let id = opened.execution_id;
  const running = await agent.execute(id, 'sleep 4242', { yield_ms: 300 });
  assert.equal(running.status, 'backgrounded', brief(running));
  process.kill(opened.process_id, 'SIGKILL');
  const ended = await agent.call('wait', { execution_id: id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(ended.wait_result, 'exited', brief(ended));
  assert.equal(ended.signal, 'SIGKILL', brief(ended));
  assert.deepEqual(processesRunning(['sleep', '4242']), []);
  const refused = await agent.execute(id, 'echo hi');
  assert.equal(refused.isError, true, brief(refused));
  assert.match(refused.error, /the shell has ended/, brief(refused));
  // `exit` with a job in the background.
  opened = await agent.call('open', {});
  id = opened.execution_id;
  assert.match((await agent.execute(id, 'sleep 4243 &')).output, /^\[1\] \d+\n$/);
  const exited = await agent.execute(id, 'exit');
  assert.equal(exited.status, 'completed', brief(exited));
  assert.equal(exited.exit_code, 0, brief(exited));
  assert.deepEqual(processesRunning(['sleep', '4243']), []);
  // nohup asked to outlive the terminal: it does, and the session ends anyway.
  opened = await agent.call('open', {});
  id = opened.execution_id;
  await agent.execute(id, 'nohup sleep 4244 >/dev/null 2>&1 &');
  const left = await agent.execute(id, 'exit');
  assert.equal(left.status, 'completed', brief(left));
  const survivors = processesRunning(['sleep', '4244']);
  assert.equal(survivors.length, 1);
  process.kill(Number(survivors[0]), 'SIGKILL');
});

// stop took a program's own end by SIGKILL for its escalation: a command
// whose shell was killed from outside while its `&` job ran on, stopped
// with SIGTERM, was said to have ignored SIGTERM for the whole grace.
test('stop does not blame the signal it sent for a SIGKILL that came from elsewhere', async (t) => {
  const agent = await started(t, { args: ['--no-web'] });
  const r = await agent.call('execute', { command: 'sleep 4245 & kill -9 $$', side_effects: NONE, yield_ms: 1000 });
  assert.equal(r.status, 'backgrounded', brief(r));
  const began = Date.now();
  const stopped = await agent.call('stop', { execution_id: r.execution_id, force_after_ms: 10000 });
  assert.equal(stopped.stopped, true, brief(stopped));
  assert.ok(Date.now() - began < 5000, brief(stopped));
  assert.doesNotMatch(stopped.message ?? '', /did not end it within/, brief(stopped));
});

// An idle shell killed from outside, and a command typed before agentty saw
// the end: the answer was "completed", exit code 137, "The shell ended while
// the command ran", as if the command had been killed. Nothing ran.
test('a line typed into a shell that had just been killed is refused: nothing ran', async (t) => {
  const agent = await started(t, { args: ['--no-web'] });
  for (let round = 0; round < 3; round++) {
    const opened = await agent.call('open', {});
    assert.equal(opened.prompt_ready, true, brief(opened));
    process.kill(opened.process_id, 'SIGKILL');
    const r = await agent.execute(opened.execution_id, 'echo hi');
    assert.equal(r.isError, true, brief(r));
    assert.match(r.error, /the shell (has ended|ended) \(killed by signal 9 \(SIGKILL\)\)/, brief(r));
    assert.doesNotMatch(r.error, /while the command ran/, brief(r));
  }
  // A command that ends its own shell still answers with that end.
  const opened = await agent.call('open', {});
  const own = await agent.execute(opened.execution_id, 'exit 3');
  assert.equal(own.status, 'completed', brief(own));
  assert.equal(own.exit_code, 3, brief(own));
  assert.match(own.message, /The shell ended \(exited with code 3\) while the command ran/, brief(own));
});
