// End-to-end tests from the fifty-eighth audit (session 51): two readers
// new to agentty, one working as a coding agent (a project, a session, a
// venv, servers, REPLs, editors), one checking the contract and feeding
// every tool bad input. What they found, each now mended; the comments say
// what the answers were before. (The exported PS1 in a nested shell is in
// sessions.test.mjs, the question above a status row in audit53.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  brief, openSession, serverForFile, sessionRunner, tempDirForRun, waiterFor, WAIT_MS,
} from './lib/mcp-client.mjs';

const server = serverForFile();
const call = server.call;
const run = sessionRunner(call);
const waitFor = waiterFor(call);

// read of a session whose command ended gave status "running", exit_code
// null and no command fields: an agent polling with read, as the
// backgrounded answer suggests, never learned the command failed.
test('read of a session gives the command fields: command_exit_code, command_running, prompt_ready', async (t) => {
  const id = await openSession(call, t);
  const r = await run(id, 'read -t 0.5; (exit 3)', { yield_ms: 0 });
  assert.equal(r.status, 'backgrounded', brief(r));
  const running = await call('read', { execution_id: id });
  assert.equal(typeof running.command_running, 'boolean', brief(running));
  await waitFor(id, 'exit');
  const ended = await call('read', { execution_id: id });
  assert.equal(ended.command_exit_code, 3, brief(ended));
  assert.equal(ended.command_running, false, brief(ended));
  assert.equal(ended.prompt_ready, true, brief(ended));
});

// max_output_bytes 1000 over 500 log lines and an error: capped, no
// output_tail (a quarter of the cap was under 256 bytes), the error unseen.
test('a small max_output_bytes still shows the end of an ended command in output_tail', async () => {
  const command = 'for i in $(seq 1 500); do echo log line $i; done; echo "Error: final boom"';
  for (const cap of [300, 1000]) {
    const r = await call('execute', { command, side_effects: ['NONE'], max_output_bytes: cap });
    assert.equal(r.capped, true, brief(r));
    assert.match(r.output_tail ?? '', /log line 500\nError: final boom\n$/, brief(r));
    assert.ok(r.output.length + r.output_tail.length <= cap, brief(r));
  }
});

// explore read with limit 2 of 10 lines answered capped: true and no hint;
// the contract wants a hint naming the next call whenever capped is set.
test('explore: a capped read names the next call; a grep start_line past 2^32 is past the end', async () => {
  const r = await call('execute', { command: 'seq 1 10', side_effects: ['NONE'] });
  const page = await call('explore', { execution_id: r.execution_id, op: 'read', line_offset: 0, limit: 2 });
  assert.equal(page.capped, true, brief(page));
  assert.match(page.hint, /line_offset=2/, brief(page));
  // start_line 4294967298 searched from line 2 (cut to 32 bits).
  const far = await call('explore', { execution_id: r.execution_id, op: 'grep', pattern: '1', start_line: 4294967298 });
  assert.deepEqual(far.matches, [], brief(far));
  assert.match(far.hint, /start_line=4294967298 is past the end/, brief(far));
});

// "   " ran bash on nothing and answered completed, exit code 0, where ""
// is refused; a name with U+202E (right-to-left override) was taken and
// reversed what ps and the dashboard show after it.
test('a command of white space only and a name with a bidi override are refused, saying what to give', async () => {
  const blank = await call('execute', { command: '  \t ', side_effects: ['NONE'] });
  assert.equal(blank.isError, true, brief(blank));
  assert.match(blank.error, /^command: holds only white space/);
  const spoof = await call('execute', { command: 'true', side_effects: ['NONE'], name: 'build\u202etset' });
  assert.equal(spoof.isError, true, brief(spoof));
  assert.match(spoof.error, /^name: contains the invisible character U\+202E at byte 5/);
  // An emoji sequence joined with U+200D is plain text.
  const emoji = await call('execute', { command: 'true', side_effects: ['NONE'], name: 'team \u{1F468}\u200D\u{1F469}' });
  assert.equal(emoji.status, 'completed', brief(emoji));
});

// cleanup(completed_older_than_ms: 4294967297) said the records ended "more
// recently than the thresholds (default 1 h)".
test('cleanup with a threshold given does not call it the default', async () => {
  await call('execute', { command: 'true', side_effects: ['NONE'] });
  const given = await call('cleanup', { completed_older_than_ms: 4294967297 });
  assert.match(given.message, /than the thresholds given/, brief(given));
  assert.doesNotMatch(given.message, /default 1 h/, brief(given));
});

// git commit without -m in execute: the message said "editor (in the
// foreground process group of git) reads the terminal" (Debian's
// /usr/bin/editor alternative) and nothing of how to leave it, where a
// pager's says "write input \"q\" quits it".
test('git commit opening the editor: the message names the editor it runs and the keys that leave it', async (t) => {
  const dir = tempDirForRun('agentty-a58-git-');
  execFileSync('sh', ['-c', 'git init -q && echo x > f && git add f'], { cwd: dir });
  const env = { GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' };
  const r = await call('execute', { command: 'git commit', cwd: dir, env, side_effects: ['NONE'], yield_ms: WAIT_MS });
  t.after(() => call('stop', { execution_id: r.execution_id }));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.doesNotMatch(r.message, /\beditor \(in the foreground/, brief(r));
  assert.match(r.message, /It is an editor \([^)]+\): it reads keys, not lines; keys \[/, brief(r));
  assert.match(r.message, /git, -m "message"/, brief(r));
});

// RUNS_INLINE_CODE declared honestly was refused as blocked, while the same
// command declared NONE ran: which categories are blocked was only in the
// README. execute's schema now names them (the defaults here).
test('execute\'s side_effects description names the categories this server blocks', async () => {
  const { tools } = await server.agent.client.listTools();
  const execute = tools.find((tool) => tool.name === 'execute');
  const description = execute.inputSchema.properties.side_effects.description;
  assert.match(description, /refused before anything starts: here KILLS_AGENT_PROCESS, MODIFIES_OS_SETTINGS, MODIFIES_OS_USER_SETTINGS, MODIFIES_PROTECTED_FILES, RUNS_INLINE_CODE\./, description);
});

// timeout_ms with a background job that ignores SIGTERM: the foreground
// died of the SIGTERM and execute answered at 1.2 s "backgrounded", "Its
// command has ended; what it left running ... the execution ends when they
// do"; the grace's SIGKILL made it timed_out 5 s later.
test('timeout_ms over a job that ignores SIGTERM answers timed_out once the grace\'s SIGKILL ends it', async () => {
  const r = await call('execute', {
    command: '(trap "" TERM; sleep 8562.1) & sleep 8562.2', side_effects: ['NONE'], timeout_ms: 800, yield_ms: WAIT_MS,
  });
  assert.equal(r.status, 'timed_out', brief(r));
  assert.match(r.message, /SIGKILL did/, brief(r));
  assert.doesNotMatch(r.message, /Its command has ended/, brief(r));
});

// wait(until="exit") answers early only at a question (the cursor after
// text): a program reading keys at a line's start (a server's "press q to
// quit") may run on for good, and the wait keeps waiting for its end.
test('wait(until="exit") keeps waiting on a program that reads keys at the start of a line', async (t) => {
  const r = await call('execute', { command: 'echo "press q to quit"; read -n1 k; echo key=$k', side_effects: ['NONE'], yield_ms: WAIT_MS });
  t.after(() => call('stop', { execution_id: r.execution_id }));
  assert.equal(r.waiting_for_input, true, brief(r));
  const w = await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 1500 });
  assert.equal(w.wait_result, 'deadline_reached', brief(w));
});

// ps: idle_ms null for a running program that printed nothing (read as
// "just started" after minutes) and growing on records that ended (read as
// stuck); resources/list titled a session by its shell's path, not the
// name given to open; close on an ended command said to "end it with stop".
test('ps idle_ms, resource titles and close on an ended command say what is so', async (t) => {
  const silent = await call('execute', { command: 'sleep 30', side_effects: ['NONE'], yield_ms: 300 });
  t.after(() => call('stop', { execution_id: silent.execution_id }));
  const done = await call('execute', { command: 'echo hi', side_effects: ['NONE'] });
  const { executions } = await call('ps', { include_completed: true });
  const entry = (id) => executions.find((e) => e.execution_id === id);
  assert.equal(typeof entry(silent.execution_id).idle_ms, 'number', JSON.stringify(entry(silent.execution_id)));
  assert.ok(entry(silent.execution_id).idle_ms >= 300, JSON.stringify(entry(silent.execution_id)));
  assert.equal(entry(done.execution_id).idle_ms, null, JSON.stringify(entry(done.execution_id)));

  const opened = await call('open', { name: 'builder' });
  t.after(() => call('close', { execution_id: opened.execution_id }));
  const { resources } = await server.agent.client.listResources();
  const titled = resources.find((r) => r.name === opened.execution_id);
  assert.match(titled.title, /^builder: \S+ \(session\)/, JSON.stringify(titled));

  const closed = await call('close', { execution_id: done.execution_id });
  assert.equal(closed.isError, true);
  assert.match(closed.error, /is a command, not a session; it has already ended \(status completed\)/, closed.error);
});

// A handoff could not be taken back: ps kept its handoff_reason and the
// dashboard its highlight for the session's life, and wait(until=
// "released") waited out its timeout for a person no longer needed.
test('handoff withdraw: true takes a request back; reason is required otherwise', async (t) => {
  const id = await openSession(call, t);
  const asked = await call('handoff', { execution_id: id, reason: 'check the screen' });
  assert.equal(asked.requested, true, brief(asked));
  const missing = await call('handoff', { execution_id: id });
  assert.equal(missing.isError, true);
  assert.match(missing.error, /^reason: required: what the person should do.*withdraw: true/);
  const both = await call('handoff', { execution_id: id, reason: 'x', withdraw: true });
  assert.match(both.error, /^reason: does not apply with withdraw: true/);
  const back = await call('handoff', { execution_id: id, withdraw: true });
  assert.equal(back.isError, false, back.error);
  assert.equal(back.requested, false);
  assert.match(back.message, /^Withdrawn/);
  const listed = (await call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(listed.handoff_reason, undefined, JSON.stringify(listed));
  const released = await call('wait', { execution_id: id, until: 'released', timeout_ms: WAIT_MS });
  assert.equal(released.wait_result, 'released', brief(released));
  assert.match(released.message, /^Not held: .*nothing to wait for/, brief(released));
  const again = await call('handoff', { execution_id: id, withdraw: true });
  assert.match(again.message, /no handoff to withdraw/);
});
