// End-to-end regression tests for contract gaps found by driving agentty the
// way an agent does (official MCP SDK client, real programs, real PTYs):
// session lines that run nothing or have not started, text left on a
// session's prompt, arguments that were silently ignored, and errors that
// must name the argument and the fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { serverForFile, startAgentty, openSession, tempDirForRun } from './lib/mcp-client.mjs';
import { startSshd, sshdSkip } from './lib/sshd.mjs';

// A plain rc file: the machine's own may be slow (pyenv init, ...).
const home = tempDirForRun('agentty-contract-home-');
writeFileSync(path.join(home, '.bashrc'), "PS1='contract$ '\n");

const server = serverForFile({ env: { HOME: home } });
const call = server.call;
const run = (session, command, extra = {}) =>
  call('execute', { session, command, side_effects: ['NONE'], yield_ms: 20000, ...extra });

const open = (t) => openSession(call, t);

test('session: a comment or blank line completes at once instead of hanging until yield_ms', async (t) => {
  const id = await open(t);
  for (const line of ['# only a comment', '   ']) {
    const r = await run(id, line);
    assert.equal(r.isError, false, r.error);
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.exit_code, 0);
    assert.equal(r.output, '');
  }
  const next = await run(id, 'echo next');
  assert.equal(next.status, 'completed');
  assert.equal(next.output, 'next\n');
});

test('session: an unclosed quote is reported, the next command is refused until flush', async (t) => {
  const id = await open(t);
  const r = await run(id, 'echo "unclosed', { yield_ms: 1500 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  const refused = await run(id, 'echo typed-into-the-quote');
  assert.equal(refused.isError, true);
  assert.match(refused.error, /has not started/);
  assert.match(refused.error, /flush/);
  const flushed = await call('write', { execution_id: id, action: 'flush' });
  assert.equal(flushed.isError, false, flushed.error);
  const next = await run(id, 'echo after-flush');
  assert.equal(next.status, 'completed', JSON.stringify(next));
  assert.equal(next.output, 'after-flush\n');
});

test('session: after yield_ms 0, wait(until=exit) returns the command, and the next one gets only its own output', async (t) => {
  const id = await open(t);
  const first = await run(id, 'echo first-output', { yield_ms: 0 });
  assert.equal(first.status, 'backgrounded');
  const w = await call('wait', { execution_id: id, until: 'exit', timeout_ms: 20000 });
  assert.equal(w.wait_result, 'exited');
  assert.match(w.output, /^first-output$/m);
  // Typed back to back: either refused (not started yet) or exactly its own output.
  await run(id, 'echo one', { yield_ms: 0 });
  const second = await run(id, 'echo two');
  if (second.isError) {
    assert.match(second.error, /has not started|still running/);
  } else {
    assert.equal(second.output, 'two\n');
  }
  await call('wait', { execution_id: id, until: 'exit', timeout_ms: 20000 });
  const third = await run(id, 'echo three');
  assert.equal(third.output, 'three\n');
});

test('session: text left on the prompt by write is erased before execute types its command', async (t) => {
  const id = await open(t);
  const typed = await call('write', { execution_id: id, input: 'echo LEFT_' });
  assert.equal(typed.ok, true);
  const r = await run(id, 'true');
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.exit_code, 0);
  assert.equal(r.output, '');
});

test('session: timeout_ms is refused, not silently ignored', async (t) => {
  const id = await open(t);
  const r = await run(id, 'sleep 1', { timeout_ms: 100 });
  assert.equal(r.isError, true);
  assert.equal(r.status, 'failed_to_start');
  assert.match(r.error, /^timeout_ms: /);
  assert.match(r.error, /ctrl-c/);
});

test('wait: a pattern without until waits for the match', async (t) => {
  const r = await server.agent.startCommand(t, { command: 'echo begin; read x; echo "marker-$x"', yield_ms: 0 });
  await call('write', { execution_id: r.execution_id, input: 'found', newline: true });
  // since_seq 1: write's reply may already have carried (and consumed) the marker.
  const w = await call('wait', {
    execution_id: r.execution_id,
    pattern: 'marker-(\\w+)',
    since_seq: 1,
    timeout_ms: 20000,
  });
  assert.equal(w.isError, false, w.error);
  assert.equal(w.wait_result, 'matched');
  assert.deepEqual(w.match.groups, ['found']);
});

test('write: newline alone presses Enter', async (t) => {
  const r = await server.agent.startCommand(t, {
    command: 'read -p "Press Enter to continue " x; echo "got [$x]"',
    yield_ms: 0,
  });
  // since_seq 1: execute's own answer may already have carried (and consumed) the prompt.
  const prompt = await call('wait', { execution_id: r.execution_id, pattern: 'Press Enter', since_seq: 1, timeout_ms: 20000 });
  assert.equal(prompt.wait_result, 'matched');
  const w = await call('write', { execution_id: r.execution_id, newline: true });
  assert.equal(w.isError, false, w.error);
  assert.equal(w.ok, true);
  const done = await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 20000 });
  assert.equal(done.exit_code, 0);
  const all = await call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.match(all.output, /got \[\]/);
});

test('execute: env names that cannot be set are refused with the argument named', async () => {
  for (const name of ['A=B', '']) {
    const r = await call('execute', { command: 'true', side_effects: ['NONE'], env: { [name]: 'x' } });
    assert.equal(r.isError, true);
    assert.equal(r.status, 'failed_to_start');
    assert.match(r.error, /^env: /);
  }
});

test('a NUL byte in a command, argument, path or pattern is refused, not cut off; stdin carries it', async () => {
  const base = { side_effects: ['NONE'] };
  for (const [args, named] of [
    [{ ...base, command: 'echo a\u0000b' }, 'command'],
    [{ ...base, argv: ['echo', 'a\u0000b'] }, 'argv\\[1\\]'],
    [{ ...base, script: 'echo a\u0000b\n' }, 'script'],
    [{ ...base, command: 'pwd', cwd: '/tmp\u0000/etc' }, 'cwd'],
  ]) {
    const r = await call('execute', args);
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(r.error, new RegExp(`^${named}: contains a NUL byte .*remove it`));
  }
  const w = await call('wait', { execution_id: 'nope', until: 'match', pattern: 'a\u0000b' });
  assert.match(w.error, /^pattern: contains a NUL byte .*\\x00/);
  // Data may hold one: stdin as a file passes it through.
  const r = await call('execute', { ...base, command: 'od -An -tx1', stdin: 'a\u0000b' });
  assert.equal(r.output, ' 61 00 62\n');
});

test('execute(argv): an empty or missing program names argv[0] and the fix', async () => {
  let r = await call('execute', { argv: [''], side_effects: ['NONE'] });
  assert.equal(r.isError, true);
  assert.match(r.error, /^argv\[0\]: is empty/);
  r = await call('execute', { argv: ['no-such-program-xyz'], side_effects: ['NONE'] });
  assert.equal(r.isError, true);
  assert.equal(r.status, 'failed_to_start');
  assert.match(r.error, /^argv\[0\]: cannot run 'no-such-program-xyz'/);
  assert.match(r.error, /full path/);
});

test('read: a since_seq past the end says so in hint', async () => {
  const r = await call('execute', { command: 'echo hi', side_effects: ['NONE'] });
  assert.equal(r.status, 'completed');
  const past = await call('read', { execution_id: r.execution_id, since_seq: r.latest_seq + 1000 });
  assert.equal(past.isError, false, past.error);
  assert.equal(past.output, '');
  assert.match(past.hint, /past the end of the output \(latest_seq \d+\)/);
  const atEnd = await call('read', { execution_id: r.execution_id, since_seq: r.latest_seq });
  assert.equal(atEnd.hint, undefined);
});

test('timers: yield_ms and wait.timeout_ms above the cap are clamped and reported, not refused', async (t) => {
  const r = await call('execute', { command: 'echo capped', side_effects: ['NONE'], yield_ms: 90000 });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.status, 'completed');
  assert.equal(r.yield_ms, 55000);
  assert.match(r.hint, /yield_ms 90000 is above the cap of 55000 ms, so 55000 ms applied/);
  const w = await call('wait', { execution_id: r.execution_id, timeout_ms: 90000 });
  assert.equal(w.isError, false, w.error);
  assert.equal(w.wait_result, 'exited');
  assert.equal(w.max_wait_ms, 55000);
  assert.equal(w.timeout_ms, 55000);
  assert.match(w.hint, /timeout_ms 90000 is above the cap/);
  const running = await server.agent.startCommand(t, { command: 'cat', yield_ms: 0 });
  const typed = await call('write', { execution_id: running.execution_id, input: 'x', yield_ms: 60000 });
  assert.equal(typed.isError, false, typed.error);
  assert.equal(typed.yield_ms, 55000);
  assert.match(typed.hint, /yield_ms 60000 is above the cap/);
  const id = await open(t);
  const s = await run(id, 'echo in-session', { yield_ms: 100000 });
  assert.equal(s.status, 'completed', JSON.stringify(s));
  assert.equal(s.yield_ms, 55000);
  assert.match(s.hint, /yield_ms 100000 is above the cap/);
  // Within the cap: no hint. Negative or fractional values are still refused, naming the argument.
  const plain = await call('execute', { command: 'true', side_effects: ['NONE'], yield_ms: 55000 });
  assert.equal(plain.hint, undefined);
  const bad = [
    ['execute', { command: 'true', side_effects: ['NONE'], yield_ms: -1 }, /^yield_ms: must be at least 0/],
    ['execute', { command: 'true', side_effects: ['NONE'], yield_ms: 1.5 }, /^yield_ms: must be an integer/],
    ['wait', { execution_id: r.execution_id, timeout_ms: -5 }, /^timeout_ms: must be at least 0/],
    ['write', { execution_id: running.execution_id, input: 'y', yield_ms: 'soon' }, /^yield_ms: must be an integer/],
  ];
  for (const [tool, args, pattern] of bad) {
    const refused = await call(tool, args);
    assert.equal(refused.isError, true, JSON.stringify(args));
    assert.match(refused.error, pattern);
  }
  const { tools } = await server.agent.client.listTools();
  for (const [tool, field] of [['execute', 'yield_ms'], ['write', 'yield_ms'], ['wait', 'timeout_ms']]) {
    const schema = tools.find((x) => x.name === tool).inputSchema.properties[field];
    assert.equal(schema.minimum, 0);
    assert.ok(schema.maximum > 55000, `${tool}.${field} accepts values above the cap`);
    assert.match(schema.description, /Capped at 55000 ms/);
  }
});

test('session: command_running is false once the shell has exited (exit N, or a job left behind)', async (t) => {
  const id = await open(t);
  const nested = await run(id, 'bash -c "exit 4"');
  assert.equal(nested.exit_code, 4);
  assert.equal(nested.command_running, false);
  // A nested shell left with ctrl-d: write's answer carries the session fields too.
  await run(id, 'bash --norc', { yield_ms: 0 });
  // The inner shell's own prompt (bash --norc: "bash-5.2$ ").
  const inner = await call('wait', { execution_id: id, pattern: 'bash-[0-9.]+[$#] ', since_seq: 1, timeout_ms: 20000 });
  assert.equal(inner.wait_result, 'matched');
  assert.equal(inner.command_running, true);
  const left = await call('write', { execution_id: id, eof: true });
  assert.equal(left.ok, true);
  const back = await call('wait', { execution_id: id, until: 'exit', timeout_ms: 20000 });
  assert.equal(back.wait_result, 'exited');
  assert.equal(back.command_running, false);
  assert.equal(back.prompt_ready, true, 'wait(until=exit) returns with the prompt back');
  const probe = await call('write', { execution_id: id, keys: ['ctrl-u'] });
  assert.equal(probe.command_running, false, JSON.stringify(probe));
  const r = await run(id, 'sleep 0.2 & exit 5');
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.exit_code, 5);
  assert.equal(r.command_running, false, JSON.stringify(r));
  assert.equal(r.prompt_ready, false);
  const w = await call('wait', { execution_id: id, until: 'exit', timeout_ms: 20000 });
  assert.equal(w.command_running, false);
  const refused = await run(id, 'echo late');
  assert.equal(refused.isError, true);
  assert.equal(refused.command_running, false);
  assert.match(refused.error, /the shell has ended/);
});

test('execute: a program that waits for input returns backgrounded at once, not after yield_ms', async (t) => {
  const started = Date.now();
  const r = await server.agent.startCommand(t, { command: 'read -p "Name: " x; echo "hi $x"', yield_ms: 30000 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.equal(r.waiting_for_input, true);
  assert.equal(r.output, 'Name: ');
  assert.match(r.message, /waits for input/);
  assert.ok(Date.now() - started < 20000, 'returned well before yield_ms');
  const answered = await call('write', { execution_id: r.execution_id, input: 'bob', newline: true });
  // write's reply settles 150 ms after the echo: a shell starved that long
  // prints "hi bob" after it, so the end is waited for too.
  const ended = await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 20000 });
  assert.equal(ended.exit_code, 0, JSON.stringify(ended));
  assert.match(answered.output + ended.output, /hi bob/);
  // A silent program that does not read the terminal still runs to its end inline.
  const quiet = await call('execute', { command: 'sleep 1.2; echo done', side_effects: ['NONE'] });
  assert.equal(quiet.status, 'completed');
  assert.equal(quiet.output, 'done\n');
});

test('session: a command that waits for input (a nested shell, a REPL, an open quote) returns at once', async (t) => {
  const id = await open(t);
  const nested = await run(id, 'bash --norc');
  assert.equal(nested.status, 'backgrounded', JSON.stringify(nested));
  assert.equal(nested.waiting_for_input, true);
  assert.equal(nested.command_running, true);
  assert.match(nested.message, /rearm/);
  const inner = await run(id, 'exit 3');
  assert.equal(inner.status, 'completed', JSON.stringify(inner));
  assert.equal(inner.command_running, false);
  const quote = await run(id, 'echo "open');
  assert.equal(quote.status, 'backgrounded', JSON.stringify(quote));
  assert.equal(quote.prompt_ready, false, 'a continuation prompt is not a prompt');
  assert.match(quote.message, /flush/);
  const flushed = await call('write', { execution_id: id, action: 'flush' });
  assert.equal(flushed.prompt_ready, true, JSON.stringify(flushed));
});

test('wait: idle_ms alone waits for idle; with another until it is refused, not ignored', async (t) => {
  const r = await server.agent.startCommand(t, { command: 'echo tick; sleep 30', yield_ms: 0 });
  const w = await call('wait', { execution_id: r.execution_id, idle_ms: 300, timeout_ms: 20000 });
  assert.equal(w.isError, false, w.error);
  assert.equal(w.wait_result, 'idle');
  const refused = await call('wait', { execution_id: r.execution_id, until: 'exit', idle_ms: 300 });
  assert.equal(refused.isError, true);
  assert.match(refused.error, /^idle_ms: only applies with until="idle"/);
  const withPattern = await call('wait', { execution_id: r.execution_id, pattern: 'x', idle_ms: 300 });
  assert.equal(withPattern.isError, true);
  assert.match(withPattern.error, /^idle_ms: /);
});

test('read: a capped tail_lines page says its start was cut (not "more output is waiting")', async () => {
  const r = await call('execute', { command: 'seq 1 3; printf "%0300d\\n" 0', side_effects: ['NONE'] });
  assert.equal(r.status, 'completed');
  const tail = await call('read', { execution_id: r.execution_id, tail_lines: 1, max_output_bytes: 50 });
  assert.equal(tail.capped, true);
  assert.equal(tail.next_seq, tail.latest_seq);
  assert.doesNotMatch(tail.hint, /More output is waiting/);
  assert.match(tail.hint, /newest 1 line\(s\) hold more than max_output_bytes/);
  assert.match(tail.hint, /explore op="read" line_offset=-1/);
});

test('explore: a line cut at max_bytes never ends inside a UTF-8 character', async () => {
  const r = await call('execute', { command: 'for i in $(seq 1 200); do printf "é€😀"; done; echo', side_effects: ['NONE'] });
  assert.equal(r.status, 'completed');
  let text = '';
  let next = { line_offset: 0 };
  for (let page = 0; page < 40; ++page) {
    const e = await call('explore', { execution_id: r.execution_id, op: 'read', limit: 1, max_bytes: 256, ...next });
    assert.equal(e.isError, false, e.error);
    assert.doesNotMatch(e.lines[0].text, /\uFFFD/, `page ${page}`);
    text += e.lines[0].text;
    if (!e.lines[0].truncated) break;
    next = { line_offset: e.next_line_offset, byte_offset: e.next_byte_offset };
  }
  assert.equal(text, 'é€😀'.repeat(200));
});

test('execute on an SSH host: a silent remote command is not taken for a prompt', {
  skip: sshdSkip(),
}, async (t) => {
  const sshd = await startSshd();
  t.after(() => sshd.stop());
  const agent = await startAgentty({
    env: { HOME: home, SSH_AUTH_SOCK: '', AGENTTY_SSH_KNOWN_HOSTS: sshd.knownHosts,
      AGENTTY_SSH_CONFIG: sshd.writeConfig(sshd.clientKey) },
  });
  t.after(() => agent.client.close());
  // Remotely waiting_for_input can only mean "quiet for 1 s": execute must run to the end.
  const r = await agent.call('execute', { host: sshd.host, command: 'sleep 2.5; echo done', side_effects: ['NONE'] });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.output, 'done\n');
});

test('session: wait(pattern) after execute(yield_ms 0) matches the output, not the echoed command line', async (t) => {
  const id = await open(t);
  // It runs on until it reads a line (a trailing `sleep 0.3` could end before
  // a loaded machine's agentty got to the match).
  const bg = await run(id, 'sleep 0.3; echo "Listening on port 8080"; read -r _', { yield_ms: 0 });
  assert.equal(bg.status, 'backgrounded');
  const w = await call('wait', { execution_id: id, pattern: 'Listening on port (\\d+)', timeout_ms: 20000 });
  assert.equal(w.wait_result, 'matched');
  assert.equal(w.match.line, 'Listening on port 8080');
  assert.doesNotMatch(w.output, /echo/, 'the echo of the typed line is not output');
  assert.equal(w.command_running, true, 'it matched while the command still runs');
  await call('write', { execution_id: id, input: '', newline: true });
  const done = await call('wait', { execution_id: id, until: 'exit', timeout_ms: 20000 });
  assert.equal(done.exit_code, 0);
  // A cursorless read skips the echo as well.
  await run(id, 'sleep 0.2; echo read-marker', { yield_ms: 0 });
  await call('wait', { execution_id: id, until: 'exit', since_seq: 1, timeout_ms: 20000 });
  const r = await call('read', { execution_id: id });
  assert.match(r.output, /^read-marker\n/);
});
