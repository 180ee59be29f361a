// waiting_for_input on an SSH host, asked of the host's kernel (a probe on a
// PTY-less exec channel of the same connection reads the remote /proc, as
// input_probe.cpp does locally) instead of guessed from a mid-line cursor and
// 2 s of quiet. Against a real OpenSSH sshd on 127.0.0.1 (tests/e2e/lib/sshd.mjs),
// logged in as the user running the tests like the other SSH tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startAgentty, WAIT_MS, tempDirForRun } from './lib/mcp-client.mjs';
import { startSshd, createPasswordUser, sshClientEnv, sshdAndAgentForFile, rootOnly } from './lib/sshd.mjs';

const ssh = sshdAndAgentForFile('agentty-remote-input-home-');
const { skip, home } = ssh;

const brief = (r) => JSON.stringify({ ...r, raw: undefined });

// Starts `command` on the host in the background; SIGKILLed after the test.
async function background(t, command) {
  const r = await ssh.agent.call('execute', { host: ssh.sshd.host, command, side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.isError, false, brief(r));
  t.after(() => ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  return r.execution_id;
}

const waitFor = (id, pattern) =>
  ssh.agent.call('wait', { execution_id: id, pattern, timeout_ms: WAIT_MS });

// The guess needed 2 s of quiet after the prompt: a wait of 1.5 s from the
// prompt on ran out. The host's /proc shows python reading its terminal as
// soon as output has been quiet for a moment (0.2-0.35 s after the prompt at
// load 7-10, the probe ~0.1 s). The waits for input allow WAIT_MS: what
// tells the host's answer from the guess is the guess's message, not a time
// (a probe slowed past 1.5 s by load is still the host's answer).
test('a remote python REPL waits for input by the host\'s answer, not the 2 s guess', { skip }, async (t) => {
  const id = await background(t, 'python3 -q -i');
  const prompt = await waitFor(id, '>>> $');
  assert.equal(prompt.wait_result, 'matched', brief(prompt));
  const w = await ssh.agent.call('wait', { execution_id: id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'waiting_for_input', brief(w));
  assert.equal(w.waiting_for_input, true);
  assert.equal(w.message, undefined, brief(w));
  // Typed input is answered, and the REPL is back at its prompt, reading.
  const answer = await ssh.agent.call('write', { execution_id: id, input: 'print(6 * 7)\n' });
  assert.equal(answer.isError, false, brief(answer));
  assert.match(answer.output, /42/, brief(answer));  // write returns what it printed back
  const again = await ssh.agent.call('wait', { execution_id: id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(again.wait_result, 'waiting_for_input', brief(again));
  assert.equal(again.message, undefined, brief(again));
});

// Half a line printed and then work: the guess (cursor mid-line, quiet for
// 2 s) called it waiting; the host shows it sleeping.
test('a remote program that printed half a line and works is not waiting for input', { skip }, async (t) => {
  const id = await background(t, "printf 'working...'; sleep 30");
  assert.equal((await waitFor(id, 'working\\.\\.\\.')).wait_result, 'matched');
  const idle = await ssh.agent.call('wait', { execution_id: id, until: 'idle', idle_ms: 3000, timeout_ms: WAIT_MS });
  assert.equal(idle.wait_result, 'idle', brief(idle));
  const r = await ssh.agent.call('read', { execution_id: id });
  assert.equal(r.waiting_for_input, false, brief(r));
  const w = await ssh.agent.call('wait', { execution_id: id, until: 'input', timeout_ms: 1500 });
  assert.equal(w.wait_result, 'deadline_reached', brief(w));
  assert.equal(w.waiting_for_input, false);
  const s = await ssh.agent.call('screen', { execution_id: id });
  assert.equal(s.waiting_for_input, false, brief(s));
  const listed = (await ssh.agent.call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(listed.waiting_for_input, false);
});

test('a remote silent password prompt (read -s) is waiting for input', { skip }, async (t) => {
  const id = await background(t, "read -r -s -p 'Password: ' pw; echo; echo \"got ${#pw} chars\"");
  assert.equal((await waitFor(id, 'Password: $')).wait_result, 'matched');
  const w = await ssh.agent.call('wait', { execution_id: id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'waiting_for_input', brief(w));
  assert.equal(w.message, undefined, brief(w));  // the host's answer, not the guess
  await ssh.agent.call('write', { execution_id: id, input: 'hunter2\n' });
  const done = await ssh.agent.call('wait', { execution_id: id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(done.status, 'completed', brief(done));
  const all = await ssh.agent.call('read', { execution_id: id, since_seq: 1 });
  assert.match(all.output, /got 7 chars/);
});

// A command ahead of `sleep` in the same remote line: the shell runs it in a
// child and waits, and the probe finds the terminal by the shell's command line.
test('a remote execute answers at once when its program prompts, from the host, not the guess', { skip }, async (t) => {
  const r = await ssh.agent.call('execute', {
    host: ssh.sshd.host, command: "sleep 0.2; printf 'Continue? [y/N] '; read -r answer; echo \"answer=$answer\"",
    side_effects: ['NONE'], yield_ms: 20000,
  });
  t.after(() => ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.doesNotMatch(r.message ?? '', /guess/, brief(r));
  assert.match(r.message ?? '', /reads the terminal/, brief(r));
});

test('open(host): a REPL in a remote session waits for input without the guess; a busy command does not', { skip }, async (t) => {
  const o = await ssh.agent.call('open', { host: ssh.sshd.host });
  assert.equal(o.prompt_ready, true, brief(o));
  t.after(() => ssh.agent.call('close', { execution_id: o.execution_id }));
  const session = o.execution_id;
  const r = await ssh.agent.call('execute', { session, command: 'python3 -q -i', side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.isError, false, brief(r));
  assert.equal((await waitFor(session, '>>> $')).wait_result, 'matched');
  const w = await ssh.agent.call('wait', { execution_id: session, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'waiting_for_input', brief(w));
  assert.equal(w.message, undefined, brief(w));
  await ssh.agent.call('write', { execution_id: session, input: 'exit()\n' });
  const busy = await ssh.agent.call('execute', {
    session, command: "printf 'working...'; sleep 30", side_effects: ['NONE'], yield_ms: 0,
  });
  assert.equal(busy.isError, false, brief(busy));
  assert.equal((await waitFor(session, 'working\\.\\.\\.$')).wait_result, 'matched');
  const idle = await ssh.agent.call('wait', { execution_id: session, until: 'idle', idle_ms: 3000, timeout_ms: WAIT_MS });
  assert.equal(idle.wait_result, 'idle', brief(idle));
  const read = await ssh.agent.call('read', { execution_id: session });
  assert.equal(read.waiting_for_input, false, brief(read));
  const still = await ssh.agent.call('wait', { execution_id: session, until: 'input', timeout_ms: 1500 });
  assert.equal(still.wait_result, 'deadline_reached', brief(still));
  await ssh.agent.call('write', { execution_id: session, keys: ['ctrl-c'] });
});

// A remote program stopped with nothing to continue it (SIGSTOP here: ctrl-z
// does not stop a remote command, whose process group has no parent in its
// session, so the kernel discards SIGTSTP from the terminal). The host shows
// the foreground group stopped (suspended=true), and write(action="resume")
// continues it with SIGCONT, sent by `kill` on an exec channel.
test('a stopped remote program is suspended, and resume continues it', { skip }, async (t) => {
  const id = await background(t, 'python3 -q -i');
  assert.equal((await waitFor(id, '>>> $')).wait_result, 'matched');
  await ssh.agent.call('write', { execution_id: id, input: 'import os, signal; os.kill(os.getpid(), signal.SIGSTOP)\n' });
  // No event announces the stop: look again after each quiet spell.
  let r;
  for (let i = 0; i < 40; ++i) {
    r = await ssh.agent.call('read', { execution_id: id });
    if (r.suspended) break;
    await ssh.agent.call('wait', { execution_id: id, until: 'idle', idle_ms: 250, timeout_ms: 5000 });
  }
  assert.equal(r.suspended, true, brief(r));
  assert.equal(r.waiting_for_input, false);
  const resumed = await ssh.agent.call('write', { execution_id: id, action: 'resume' });
  assert.equal(resumed.isError, false, brief(resumed));
  const answer = await ssh.agent.call('write', { execution_id: id, input: 'print(6 * 7)\n' });
  assert.match(answer.output, /42/, brief(answer));
  const w = await ssh.agent.call('wait', { execution_id: id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'waiting_for_input', brief(w));
});

// A host that cannot tell: here an account whose login shell answers the
// probe as a host that is not Linux would, and runs everything else with
// bash. waiting_for_input falls back to the guess (stopped mid-line, quiet
// for 2 s), and wait's answer says it is one.
test('a host that cannot tell (not Linux) falls back to the guess, and wait says so', { skip: skip || rootOnly }, async (t) => {
  const dir = tempDirForRun('agentty-remote-input-fake-');
  chmodSync(dir, 0o755);
  const shell = path.join(dir, 'fake-os-shell');
  writeFileSync(shell, [
    '#!/bin/sh',
    'if [ "$2" = "exec sh -s" ]; then printf "agentty-probe 1\\nunsupported FakeOS\\n"; exit 0; fi',
    'exec /bin/bash "$@"',
    '',
  ].join('\n'), { mode: 0o755 });
  const user = createPasswordUser({ home: dir, shell, suffix: 'f' });
  t.after(() => user.remove());
  const r = await ssh.agent.call('execute', {
    host: `${user.name}@127.0.0.1:${ssh.sshd.port}`, command: 'printf "name? "; read -r name; echo "hello $name"',
    side_effects: ['NONE'], yield_ms: 0,
  });
  assert.equal(r.isError, false, brief(r));
  t.after(() => ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  const w = await ssh.agent.call('wait', { execution_id: r.execution_id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'waiting_for_input', brief(w));
  assert.match(w.message ?? '', /is a guess: it stopped mid-line .* printed nothing for 2 s/, brief(w));
  await ssh.agent.call('write', { execution_id: r.execution_id, input: 'guessed\n' });
  await ssh.agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  const all = await ssh.agent.call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.match(all.output, /hello guessed/);
});

// A probe holds a channel of the connection for ~100 ms. Under a server's
// MaxSessions of 2, a background command and a probe of it took both, and
// an execute right then was refused ("1 other channel is open ... raise
// MaxSessions"): a look at the host must not make a command fail. Nor may a
// channel that just closed (OpenSSH frees its slot a moment later).
// Two commands hold both channels: every probe of the first is refused. It
// used to count each refusal as a failure and, after three, guess for good.
test('under MaxSessions 2, probes refused while both channels are taken are asked again once one is free', { skip }, async (t) => {
  const capped = await startSshd({ maxSessions: 2 });
  t.after(() => capped.stop());
  const a = await startAgentty({ env: { ...sshClientEnv(capped, home), AGENTTY_LOG_LEVEL: 'debug' } });
  t.after(() => a.client.close());
  let refusals = 0;
  let notice;
  const threeRefusals = new Promise((resolve) => { notice = resolve; });
  a.transport.stderr.on('data', (chunk) => {
    refusals += (String(chunk).match(/input probe on .* (refused|failed)/g) || []).length;
    if (refusals >= 3) notice();
  });
  const start = async (command) => {
    const r = await a.call('execute', { host: capped.host, command, side_effects: ['NONE'], yield_ms: 0 });
    assert.equal(r.status, 'backgrounded', brief(r));
    return r.execution_id;  // ended with the connection when the client closes
  };
  const asker = await start("printf 'ask> '; exec sleep 600");  // mid-line and quiet, yet not reading
  const other = await start('exec sleep 600');
  // Each answer about the quiet asker starts a probe (5 s apart after a refusal).
  let asked = true;
  const keepAsking = (async () => {
    while (asked) await a.call('wait', { execution_id: asker, until: 'input', timeout_ms: 1000 });
  })();
  await threeRefusals;
  const stopped = await a.call('stop', { execution_id: other, signal: 'SIGKILL' });
  assert.equal(stopped.isError, false, brief(stopped));
  const gone = await a.call('wait', { execution_id: other, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(gone.wait_result, 'exited', brief(gone));
  asked = false;
  await keepAsking;
  // The host now answers: sleep is not reading its terminal, so the wait runs
  // out instead of ending on the mid-line guess.
  const deadline = Date.now() + WAIT_MS;
  let w;
  do {
    w = await a.call('wait', { execution_id: asker, until: 'input', timeout_ms: 2000 });
  } while (w.wait_result === 'waiting_for_input' && Date.now() < deadline);
  assert.notEqual(w.wait_result, 'waiting_for_input', brief(w));
  assert.equal(w.waiting_for_input, false, brief(w));
});

test('under MaxSessions 2, a command started while a probe holds the second channel still runs', { skip }, async (t) => {
  const capped = await startSshd({ maxSessions: 2 });
  t.after(() => capped.stop());
  const a = await startAgentty({ env: sshClientEnv(capped, home) });
  t.after(() => a.client.close());
  for (let round = 0; round < 4; ++round) {
    const sleeper = await a.call('execute', { host: capped.host, command: 'sleep 600', side_effects: ['NONE'], yield_ms: 0 });
    assert.equal(sleeper.status, 'backgrounded', brief(sleeper));
    // Quiet: the answer's waiting_for_input starts the terminal's first probe.
    const quiet = await a.call('wait', { execution_id: sleeper.execution_id, until: 'idle', idle_ms: 100 });
    assert.equal(quiet.wait_result, 'idle', brief(quiet));
    const r = await a.call('execute', { host: capped.host, command: 'echo ran', side_effects: ['NONE'] });
    assert.equal(r.status, 'completed', `round ${round}: ${brief(r)}`);
    assert.equal(r.output, 'ran\n');
    const stopped = await a.call('stop', { execution_id: sleeper.execution_id, signal: 'SIGKILL' });
    assert.equal(stopped.isError, false, brief(stopped));
    const gone = await a.call('wait', { execution_id: sleeper.execution_id, until: 'exit', timeout_ms: WAIT_MS });
    assert.equal(gone.wait_result, 'exited', brief(gone));
  }
});
