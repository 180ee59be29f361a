// Audit 40: job control and signals, used as an agent and a person use them:
// ctrl-z, fg/bg/jobs/kill %1 in a session, a program stopped with no shell
// to continue it (execute without a session), programs that catch or ignore
// signals, children that leave the process group, SIGWINCH while stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openSession, serverForFile, sessionRunner, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';
import { sshdAndAgentForFile } from './lib/sshd.mjs';
import { endsWithin } from './lib/proc-stats.mjs';

const server = serverForFile({ args: ['--no-web'] });
const ssh = sshdAndAgentForFile('agentty-e2e-audit40-home-');
const call = server.call;
const run = sessionRunner(call);
const waitFor = waiterFor(call);
const brief = (r) => JSON.stringify({ ...r, raw: undefined, terminal_url: undefined });

// Long enough that an answer that waits out its time is told apart from one
// that came at once, short enough that the old behaviour fails quickly.
const BUDGET_MS = 10000;

const killLater = (t, pid) => t.after(() => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } });

// The first pid in `text` after `label=`.
const pidAfter = (label, text) => Number(new RegExp(`${label}=(\\d+)`).exec(text)?.[1]);

// Waits for a line the program prints, from the start of its output.
async function printed(id, pattern) {
  const w = await waitFor(id, 'match', { pattern, since_seq: 1 });
  assert.equal(w.wait_result, 'matched', brief(w));
  return w;
}

// execute answered `backgrounded` only after yield_ms (30 s by default) for a
// program stopped with nothing to continue it, saying "it continues in the
// background"; a wait on it ran out its whole budget and said "call wait
// again", which never ends.
test('execute: a command that stops itself answers suspended at once, and resume lets it finish', async (t) => {
  const started = Date.now();
  const r = await server.agent.startCommand(t, {
    command: 'echo before; kill -STOP $$; echo after', yield_ms: BUDGET_MS,
  });
  const took = Date.now() - started;
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.suspended, true, brief(r));
  assert.equal(r.waiting_for_input, false, brief(r));
  assert.ok(took < BUDGET_MS / 2, `answered after ${took} ms: ${brief(r)}`);
  assert.match(r.message, /does not go on by itself/, brief(r));
  assert.match(r.message, /action="resume"/, brief(r));

  const resumed = await call('write', { execution_id: r.execution_id, action: 'resume' });
  assert.equal(resumed.isError, false, resumed.error);
  const exited = await waitFor(r.execution_id, 'exit');
  assert.equal(exited.wait_result, 'exited', brief(exited));
  assert.equal(exited.exit_code, 0, brief(exited));
  assert.match((await call('read', { execution_id: r.execution_id, since_seq: 1 })).output, /before\nafter\n/);
});

test('wait(until=exit, match or input) on a program stopped by ctrl-z answers suspended at once, not after its budget', async (t) => {
  const r = await server.agent.startCommand(t, {
    argv: ['python3', '-c', 'print("got", input("name? "))'], yield_ms: 0,
  });
  const id = r.execution_id;
  await waitFor(id, 'input');
  const z = await call('write', { execution_id: id, keys: ['ctrl-z'] });
  assert.equal(z.isError, false, z.error);
  for (const until of ['exit', 'match', 'input']) {
    const started = Date.now();
    const w = await call('wait', {
      execution_id: id, until, timeout_ms: BUDGET_MS, ...(until === 'match' ? { pattern: '^got' } : {}),
    });
    const took = Date.now() - started;
    assert.equal(w.wait_result, 'suspended', `${until}: ${brief(w)}`);
    assert.equal(w.status, 'running', `${until}: ${brief(w)}`);
    assert.equal(w.suspended, true, `${until}: ${brief(w)}`);
    assert.ok(took < BUDGET_MS / 2, `${until}: answered after ${took} ms`);
    assert.match(w.message, /action="resume"/, `${until}: ${brief(w)}`);
    assert.doesNotMatch(w.message, /Call wait again/, `${until}: ${brief(w)}`);
  }
  // idle still means quiet: a stopped program is.
  const idle = await call('wait', { execution_id: id, until: 'idle', idle_ms: 200, timeout_ms: BUDGET_MS });
  assert.equal(idle.wait_result, 'idle', brief(idle));

  await call('write', { execution_id: id, action: 'resume' });
  await waitFor(id, 'input');
  await call('write', { execution_id: id, input: 'ada', newline: true });
  const exited = await waitFor(id, 'exit');
  assert.equal(exited.wait_result, 'exited', brief(exited));
  assert.equal(exited.exit_code, 0, brief(exited));
});

// A resize of a stopped program waited out write's yield_ms for a redraw
// that cannot come; the program gets the new size once continued.
test('write(cols, rows) to a stopped program answers at once; it sees the new size once resumed', async (t) => {
  const program = [
    'import os, signal, time',
    'signal.signal(signal.SIGWINCH, lambda *a: print("size", *os.get_terminal_size(), flush=True))',
    'print("ready", flush=True)',
    'while True: time.sleep(1)',
  ].join('\n');
  const r = await server.agent.startCommand(t, { argv: ['python3', '-c', program], yield_ms: 0 });
  const id = r.execution_id;
  await printed(id, '^ready');
  const z = await call('write', { execution_id: id, keys: ['ctrl-z'] });
  assert.equal(z.isError, false, z.error);
  await waitFor(id, 'idle', { idle_ms: 100 });  // the stop has taken effect (it printed ^Z)
  const started = Date.now();
  const resized = await call('write', { execution_id: id, cols: 101, rows: 31, yield_ms: BUDGET_MS });
  const took = Date.now() - started;
  assert.equal(resized.isError, false, resized.error);
  assert.equal(resized.suspended, true, brief(resized));
  assert.equal(resized.cols, 101);
  assert.ok(took < BUDGET_MS / 2, `answered after ${took} ms: ${brief(resized)}`);
  const resumed = await call('write', { execution_id: id, action: 'resume' });
  assert.equal(resumed.isError, false, resumed.error);
  await printed(id, 'size 101 31$');  // after the echoed ^Z
});

test('a stop signal sent from outside (kill -STOP) reads as suspended without claiming ctrl-z', async (t) => {
  const r = await server.agent.startCommand(t, { argv: ['sleep', '600'], yield_ms: 0 });
  process.kill(r.process_id, 'SIGSTOP');
  const w = await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: BUDGET_MS });
  assert.equal(w.wait_result, 'suspended', brief(w));
  assert.match(w.message, /stop signal/, brief(w));
  process.kill(r.process_id, 'SIGCONT');
  const read = await call('read', { execution_id: r.execution_id });
  assert.equal(read.suspended, undefined, brief(read));
});

// "it ignores or blocks SIGTERM (its own clean-up did not run)" while the
// output showed the handler running.
test('stop: a SIGTERM handler slower than force_after_ms is said to be cut short, not to have ignored it', async (t) => {
  const r = await server.agent.startCommand(t, {
    command: "trap 'echo got-TERM; sleep 30; exit 7' TERM; echo ready; while :; do sleep 0.1; done",
    yield_ms: 0,
  });
  await printed(r.execution_id, '^ready');
  const s = await call('stop', { execution_id: r.execution_id, force_after_ms: 1000 });
  assert.equal(s.status, 'stopped', brief(s));
  assert.equal(s.signal, 'SIGKILL', brief(s));
  assert.match(s.message, /SIGTERM did not end it within force_after_ms \(1000 ms\), so SIGKILL did/);
  assert.match(s.message, /handles it more slowly than that/, brief(s));
  assert.doesNotMatch(s.message, /did not run/, brief(s));
  assert.match((await call('read', { execution_id: r.execution_id, since_seq: 1 })).output, /got-TERM/);
});

// On a host the stop comes from the host's /proc (ctrl-z does not stop a
// remote command: nothing in its session would continue it, so the kernel
// discards SIGTSTP; a SIGSTOP does).
test('execute(host): a remote command that stops itself answers suspended at once', { skip: ssh.skip }, async (t) => {
  const started = Date.now();
  const r = await ssh.agent.call('execute', {
    host: ssh.sshd.host, command: 'echo before; kill -STOP $$; echo after', side_effects: ['NONE'], yield_ms: BUDGET_MS,
  });
  const took = Date.now() - started;
  t.after(() => ssh.agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.suspended, true, brief(r));
  assert.ok(took < BUDGET_MS / 2, `answered after ${took} ms: ${brief(r)}`);
  assert.match(r.message, /action="resume"/, brief(r));
  const resumed = await ssh.agent.call('write', { execution_id: r.execution_id, action: 'resume' });
  assert.equal(resumed.isError, false, resumed.error);
  const exited = await ssh.agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(exited.exit_code, 0, brief(exited));
});

test('session: a shell that stops itself (kill -STOP $$) answers suspended at once; resume brings its prompt back', async (t) => {
  const id = await openSession(call, t);
  const started = Date.now();
  const r = await call('execute', { session: id, command: 'kill -STOP $$', side_effects: ['NONE'], yield_ms: BUDGET_MS });
  const took = Date.now() - started;
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.suspended, true, brief(r));
  assert.ok(took < BUDGET_MS / 2, `answered after ${took} ms: ${brief(r)}`);
  assert.match(r.message, /action="resume"/, brief(r));
  // A command typed meanwhile is refused naming resume, not wait or ctrl-c
  // (which do nothing for a stopped shell).
  const refused = await call('execute', { session: id, command: 'echo early', side_effects: ['NONE'] });
  assert.equal(refused.isError, true, brief(refused));
  assert.match(refused.error, /is stopped \(suspended=true\)[^]*action="resume"/, brief(refused));
  const resumed = await call('write', { execution_id: id, action: 'resume' });
  assert.equal(resumed.isError, false, resumed.error);
  const back = await run(id, 'echo alive');
  assert.equal(back.status, 'completed', brief(back));
  assert.equal(back.output, 'alive\n');
});

test('session: ctrl-z, jobs, bg and fg say what the shell did, resume points to fg; close ends a stopped job', async (t) => {
  const id = await openSession(call, t);
  const started = await call('execute', { session: id, command: 'sleep 600', side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(started.isError, false, started.error);
  // The job's pid, before the stop: the shell's child running `sleep 600`.
  const sleepPid = await (async () => {
    const deadline = Date.now() + WAIT_MS;
    while (Date.now() < deadline) {
      const children = readFileSync(`/proc/${started.process_id}/task/${started.process_id}/children`, 'utf8').trim();
      for (const pid of children.split(/\s+/).filter(Boolean)) {
        try {
          if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') === 'sleep\x00600\x00') return Number(pid);
        } catch { /* ended */ }
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return undefined;
  })();
  assert.ok(sleepPid > 0, 'sleep 600 never started');
  killLater(t, sleepPid);

  // The shell takes the terminal back: the command is over (128 + SIGTSTP),
  // the prompt is ready, nothing is suspended.
  const z = await call('write', { execution_id: id, keys: ['ctrl-z'] });
  assert.equal(z.isError, false, z.error);
  const over = z.prompt_ready ? z : await waitFor(id, 'exit');
  assert.match(over.output ?? '', /Stopped\s+sleep 600/, brief(over));
  assert.equal(over.command_exit_code, 148, brief(over));
  const listed = (await call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(listed.command_running, false, brief(listed));
  assert.equal(listed.running_command, null, brief(listed));
  assert.equal(listed.suspended, undefined, brief(listed));
  // resume is for a program no shell will continue; the refusal said "not
  // stopped", as if the job were lost, and named no way to continue it.
  const resume = await call('write', { execution_id: id, action: 'resume' });
  assert.equal(resume.isError, true, brief(resume));
  assert.match(resume.error, /command="fg"/, brief(resume));

  assert.match((await run(id, 'jobs')).output, /^\[1\]\+\s+Stopped\s+sleep 600\n$/);
  assert.match((await run(id, 'bg')).output, /^\[1\]\+ sleep 600 &\n$/);
  assert.match((await run(id, 'jobs')).output, /^\[1\]\+\s+Running\s+sleep 600 &\n$/);
  // fg: the job runs in the foreground again, as the running command.
  const fg = await call('execute', { session: id, command: 'fg', side_effects: ['NONE'], yield_ms: 300 });
  assert.equal(fg.status, 'backgrounded', brief(fg));
  assert.equal(fg.command_running, true, brief(fg));
  // ps names the job fg continued, not only the builtin typed.
  const resumed = (await call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(resumed.running_command, 'fg (resumed sleep)', brief(resumed));
  assert.equal(resumed.command, 'bash (session) running: fg (resumed sleep)', brief(resumed));
  const again = await call('write', { execution_id: id, keys: ['ctrl-z'] });
  assert.equal(again.isError, false, again.error);
  if (!again.prompt_ready) await waitFor(id, 'exit');
  // A stopped job still ends at close: the hang-up continues it to take it.
  const closed = await call('close', { execution_id: id });
  assert.equal(closed.isError, false, closed.error);
  assert.equal(await endsWithin(sleepPid, 5000), true, 'the stopped job outlived close');
});

test('session: kill %1 on a stopped job ends it (the shell continues it to take the signal)', async (t) => {
  const id = await openSession(call, t);
  const started = await call('execute', { session: id, command: 'sleep 601', side_effects: ['NONE'], yield_ms: 300 });
  assert.equal(started.isError, false, started.error);
  const z = await call('write', { execution_id: id, keys: ['ctrl-z'] });
  if (!z.prompt_ready) await waitFor(id, 'exit');
  const pid = Number((await run(id, 'jobs -p')).output.trim());
  assert.ok(pid > 0);
  killLater(t, pid);
  const killed = await run(id, 'kill %1');
  assert.equal(killed.exit_code, 0, brief(killed));
  assert.equal(await endsWithin(pid, 5000), true, 'the stopped job outlived kill %1');
  // bash reports the end once, before a prompt: in this answer or the last.
  const jobs = await run(id, 'jobs');
  assert.match(killed.output + jobs.output, /Terminated\s+sleep 601/, brief(jobs));
  assert.equal((await run(id, 'jobs')).output, '');
});

// bash hangs up its jobs at the hang-up, and agentty what the shell left
// (a double fork's orphan, a disowned job); what left the session (setsid)
// or ignores the hang-up (nohup) is left, as the README promises.
test('session close: jobs, disowned jobs and double-forked children end; setsid and nohup ones are left', async (t) => {
  const id = await openSession(call, t);
  const r = await run(id, [
    'sleep 611 & echo "job=$!"',
    'sleep 612 & echo "disowned=$!"; disown',
    '(sleep 613 & echo "orphan=$!")',
    // setsid forks when it leads a group (a job does): the pid is the child's own.
    // (printed by the job itself: waited for below).
    `setsid sh -c 'echo "setsid=$$"; exec sleep 614' & :`,
    'nohup sleep 615 >/dev/null 2>&1 & echo "nohup=$!"',
  ].join('; '));
  const pids = Object.fromEntries(['job', 'disowned', 'orphan', 'nohup'].map((k) => [k, pidAfter(k, r.output)]));
  pids.setsid = Number((await printed(id, 'setsid=(\\d+)')).match.groups[0]);
  for (const [name, pid] of Object.entries(pids)) {
    assert.ok(pid > 0, `${name}: ${brief(r)}`);
    killLater(t, pid);
  }
  const closed = await call('close', { execution_id: id });
  assert.equal(closed.isError, false, closed.error);
  for (const name of ['job', 'disowned', 'orphan'])
    assert.equal(await endsWithin(pids[name], 5000), true, `${name} (${pids[name]}) outlived close`);
  for (const name of ['setsid', 'nohup'])
    assert.equal(await endsWithin(pids[name], 100), false, `${name} (${pids[name]}) was ended`);
});

test('a program that catches SIGINT keeps running after ctrl-c; ctrl-\\ ends it with SIGQUIT', async (t) => {
  const program = [
    'import time',
    'while True:',
    '    try:',
    '        print("loop", flush=True); time.sleep(100)',
    '    except KeyboardInterrupt:',
    '        print("caught", flush=True)',
  ].join('\n');
  const r = await server.agent.startCommand(t, { argv: ['python3', '-c', program], yield_ms: 0 });
  await printed(r.execution_id, '^loop');
  await call('write', { execution_id: r.execution_id, keys: ['ctrl-c'] });
  await printed(r.execution_id, 'caught');  // after the echoed ^C
  const ps = (await call('ps', {})).executions.find((e) => e.execution_id === r.execution_id);
  assert.equal(ps.status, 'running', brief(ps));
  await call('write', { execution_id: r.execution_id, keys: ['ctrl-backslash'] });
  const exited = await waitFor(r.execution_id, 'exit');
  assert.equal(exited.status, 'completed', brief(exited));
  assert.equal(exited.signal, 'SIGQUIT', brief(exited));
  assert.equal(exited.exit_code, 131, brief(exited));
});

// ctrl-c that only got the terminal's ^C back answered `running` with no
// word of what that means.
test('ctrl-c to a program that ignores SIGINT: the answer says it was delivered and the program runs on', async (t) => {
  const r = await server.agent.startCommand(t, {
    argv: ['bash', '-c', "trap '' INT; echo ready; exec sleep 4246"],
    yield_ms: 0,
  });
  await printed(r.execution_id, '^ready');
  const w = await call('write', { execution_id: r.execution_id, keys: ['ctrl-c'] });
  assert.equal(w.status, 'running', brief(w));
  assert.match(w.message ?? '', /ctrl-c was delivered .*sleep is still running: it catches or ignores SIGINT/s, brief(w));
  const stopped = await call('stop', { execution_id: r.execution_id });
  assert.equal(stopped.signal, 'SIGTERM', brief(stopped));
});

test('timeout_ms ends a program stopped by ctrl-z with SIGTERM, not after a grace with SIGKILL', async (t) => {
  const r = await server.agent.startCommand(t, { argv: ['sleep', '600'], yield_ms: 0, timeout_ms: 2000 });
  await call('write', { execution_id: r.execution_id, keys: ['ctrl-z'] });
  // until=idle ends when the execution does (a wait for exit answers
  // suspended at once while it is stopped).
  const w = await waitFor(r.execution_id, 'idle', { idle_ms: WAIT_MS - 1000 });
  assert.equal(w.wait_result, 'exited', brief(w));
  assert.equal(w.status, 'timed_out', brief(w));
  assert.equal(w.signal, 'SIGTERM', brief(w));
});

// Only SIGTERM, SIGHUP, SIGINT and SIGQUIT continued a stopped program:
// SIGUSR1 stayed pending, stop waited out force_after_ms, then SIGKILL, and
// the message said it ignores SIGUSR1.
test('stop(signal=SIGUSR1) ends a program stopped by ctrl-z at once, with that signal', async (t) => {
  const r = await server.agent.startCommand(t, { argv: ['sleep', '600'], yield_ms: 0 });
  await call('write', { execution_id: r.execution_id, keys: ['ctrl-z'] });
  // The stop arrives once the terminal has stopped it (state T): no event says so.
  const stat = () => readFileSync(`/proc/${r.process_id}/stat`, 'utf8');
  while (!/\) T /.test(stat())) await new Promise((resolve) => setTimeout(resolve, 10));
  const s = await call('stop', { execution_id: r.execution_id, signal: 'SIGUSR1', force_after_ms: 20000 });
  assert.equal(s.status, 'stopped', brief(s));
  assert.equal(s.signal, 'SIGUSR1', brief(s));
  assert.equal(s.exit_code, 138, brief(s));
});
