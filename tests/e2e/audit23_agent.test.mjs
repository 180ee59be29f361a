// End-to-end regression tests from the twenty-third audit: an agent's first
// hour, driven through the MCP SDK. Each test is a mistake an agent makes
// (an answer typed without Enter, a wait for a line that already came, a
// server left in the background with &, a bare cleanup, a too-short
// timeout_ms) and checks that the answer says what happened and what to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, serverForFile, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);
const waitFor = waiterFor(call);

// A program at a [Y/n] prompt, returned early by execute (waiting for input).
async function startPrompt(t, command = 'read -p "Proceed? [Y/n] " a; echo got=$a') {
  const r = await start(t, { command, yield_ms: WAIT_MS });
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  return r.execution_id;
}

test('an answer typed without Enter is named as not submitted, and Enter then submits it', async (t) => {
  const id = await startPrompt(t);
  const typed = await call('write', { execution_id: id, input: 'y' });
  assert.equal(typed.isError, false, typed.error);
  assert.equal(typed.waiting_for_input, true, JSON.stringify(typed));
  assert.match(typed.message ?? '', /"y" is typed but not submitted/, JSON.stringify(typed));
  assert.match(typed.message, /newline=true/);

  // Waiting does not help: a wait for the end answers at once (session 51;
  // before, at its deadline), and says so instead of "wait again".
  const waited = await call('wait', { execution_id: id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(waited.wait_result, 'waiting_for_input', JSON.stringify(waited));
  assert.match(waited.message, /"y" is typed but not submitted/, waited.message);
  assert.doesNotMatch(waited.message, /Call wait again/);

  const entered = await call('write', { execution_id: id, newline: true });
  assert.equal(entered.isError, false, entered.error);
  const done = await waitFor(id, 'exit');
  assert.match(entered.output + done.output, /got=y/);
  assert.doesNotMatch(entered.message ?? '', /not submitted/);
});

test('a key a program reads by itself (read -n1) is not called unsubmitted', async (t) => {
  const id = await startPrompt(t, 'read -n1 -p "key? " k; echo; echo key=$k; read -p "next: " x');
  const typed = await call('write', { execution_id: id, input: 'j' });
  assert.equal(typed.isError, false, typed.error);
  const after = await waitFor(id, 'input');
  assert.match(typed.output + after.output, /key=j/);
  assert.doesNotMatch(typed.message ?? '', /not submitted/, JSON.stringify(typed));
});

// A wait for the end of a program at a question ran out its whole timeout
// (55 s by default) before saying so; execute answers at the question at
// once, and now wait(until="exit") does too (session 51).
test('a wait for the end at a prompt answers at once that it waits for an answer', async (t) => {
  const id = await startPrompt(t);
  const waited = await call('wait', { execution_id: id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(waited.wait_result, 'waiting_for_input', JSON.stringify(waited));
  assert.equal(waited.waiting_for_input, true);
  assert.ok(waited.waited_ms < WAIT_MS / 2, JSON.stringify(waited));
  assert.match(waited.message, /waits for input with the cursor after text/, waited.message);
  assert.match(waited.message, /Answer it with write/);
});

test('execute(session=) is refused, not appended, while an unsubmitted answer waits in the session', async (t) => {
  const session = await openSession(call, t);
  const asked = await call('execute', {
    session, command: 'read -p "Stage this hunk [y,n]? " a; echo got=$a', side_effects: ['NONE'], yield_ms: WAIT_MS,
  });
  assert.equal(asked.waiting_for_input, true, JSON.stringify(asked));
  await call('write', { execution_id: session, input: 'y' });

  const refused = await call('execute', { session, command: 'git status --short', side_effects: ['NONE'] });
  assert.equal(refused.isError, true, JSON.stringify(refused));
  assert.match(refused.error, /waits with "y", typed by an earlier write/, refused.error);
  assert.match(refused.error, /nothing was typed/);

  const entered = await call('write', { execution_id: session, newline: true });
  const done = await waitFor(session, 'exit');
  assert.match(entered.output + done.output, /got=y\n/);
  assert.doesNotMatch(entered.output + done.output, /git status/);
  assert.equal(done.command_exit_code, 0);
});

test('a wait for a line that came in an earlier answer says where it is', async (t) => {
  const r = await start(t, { command: 'echo Listening on port 8123; exec sleep 60', yield_ms: 1000 });
  assert.equal(r.status, 'backgrounded');
  // An earlier answer carried the line: execute's, or (a machine too loaded
  // to print it within yield_ms) a read's.
  const earlier = r.output || (await waitFor(r.execution_id, 'match', { pattern: '^Listening' })).output;
  assert.match(earlier, /Listening on port 8123/);
  const waited = await call('wait', { execution_id: r.execution_id, pattern: 'Listening on port \\d+', timeout_ms: 300 });
  assert.equal(waited.wait_result, 'deadline_reached');
  assert.match(waited.message, /The pattern is in output from before where this wait looked/, waited.message);
  assert.match(waited.message, /"Listening on port 8123"/);
  assert.match(waited.message, /since_seq=1/);
});

test('a command whose background job keeps it running answers once the command ends and names the job', async (t) => {
  // yield_ms at its cap: the answer must come from the command's end (as a
  // shell gives its prompt back), not from yield_ms running out.
  const began = Date.now();
  const r = await start(t, { command: 'sleep 60 & echo started', yield_ms: 55000 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.ok(Date.now() - began < 55000, `answered after ${Date.now() - began} ms`);
  assert.equal(r.output, 'started\n');
  assert.match(r.message, /Its command has ended; what it left running in the background keeps this execution running: sleep \(pid \d+\)/, r.message);
  assert.match(r.message, /without waiting for yield_ms/, r.message);

  const waited = await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 300 });
  assert.equal(waited.wait_result, 'deadline_reached');
  assert.match(waited.message, /sleep \(pid \d+\)/, waited.message);

  // A command still running itself is not described so.
  const busy = await start(t, { command: 'sleep 60', yield_ms: 300 });
  assert.doesNotMatch(busy.message, /left running/, busy.message);
});

test('a background job\'s first lines after the command ends are in execute\'s answer', async (t) => {
  // The job prints once the command has ended (tail --pid waits for the
  // shell); the answer waits for output to settle, so a server's
  // "listening" line is in it.
  const r = await start(t, {
    command: '(tail --pid=$$ -s 0.02 -f /dev/null; echo "job listening"; exec sleep 60) & echo started',
    yield_ms: 55000,
  });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.match(r.output, /started\n[^]*job listening\n/, JSON.stringify(r));
});

test('a write that gets nothing back from a busy program says it is not reading, and a prompt\'s reply does not', async (t) => {
  const r = await start(t, { command: 'sleep 60', yield_ms: 300 });
  const w = await call('write', { execution_id: r.execution_id, input: 'hello', newline: true, yield_ms: 500 });
  assert.equal(w.output, 'hello\n');
  assert.match(w.message ?? '', /Nothing came back within yield_ms but the echo, and sleep is not reading its terminal now/, JSON.stringify(w));

  const prompt = await start(t, { command: 'read -p "name? " n; echo "hi $n"; sleep 60', yield_ms: WAIT_MS });
  assert.equal(prompt.waiting_for_input, true, JSON.stringify(prompt));
  const answered = await call('write', { execution_id: prompt.execution_id, input: 'bob', newline: true, yield_ms: 500 });
  assert.match(answered.output, /hi bob/);
  assert.doesNotMatch(answered.message ?? '', /not reading its terminal/, JSON.stringify(answered));
});

test('a cleanup that keeps recent ended records says why and how to remove them', async () => {
  const done = await call('execute', { command: 'true', side_effects: ['NONE'] });
  assert.equal(done.status, 'completed');
  const kept = await call('cleanup', {});
  assert.equal(kept.isError, false);
  assert.match(kept.message, /ended records? (is|are) kept/, JSON.stringify(kept));
  assert.match(kept.message, /completed_older_than_ms=0/);
  await call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  // The id is told apart from a typo: what removed it, and when.
  const again = await call('read', { execution_id: done.execution_id });
  assert.equal(again.isError, true);
  assert.match(again.error, new RegExp(`^execution_id: '${done.execution_id}' was removed \\d+ s ago by cleanup; its record and output are gone`), again.error);
  const typo = await call('read', { execution_id: 'f00dfeedbeef' });
  assert.match(typo.error, /unknown execution_id 'f00dfeedbeef'/, typo.error);
});

test('timed_out says that timeout_ms ended it and how to allow longer', async () => {
  const r = await call('execute', { command: 'echo start; exec sleep 30', side_effects: ['NONE'], timeout_ms: 500 });
  assert.equal(r.status, 'timed_out', JSON.stringify(r));
  assert.match(r.message, /timeout_ms \(500 ms, the run time limit\) ran out/, r.message);
  assert.match(r.message, /timeout_ms=0 for no limit/);
});

test('a command given as a list of words is refused pointing to argv', async () => {
  const r = await call('execute', { command: ['ls', '-l'], side_effects: ['NONE'] });
  assert.equal(r.isError, true);
  assert.match(r.error, /^command: must be a string/);
  assert.match(r.error, /goes in argv instead/);
});

test('a REPL line typed with execute(session=) gets a short message, without the rearm advice', async (t) => {
  const session = await openSession(call, t);
  const repl = await call('execute', { session, command: 'python3 -q', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(repl.waiting_for_input, true, JSON.stringify(repl));
  const line = await call('execute', { session, command: 'print(6*7)', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(line.status, 'completed', JSON.stringify(line));
  assert.match(line.output, /42/);
  assert.match(line.message, /^Typed into python3[\w.]* \(running in the session\)/, line.message);
  assert.doesNotMatch(line.message, /rearm/);
  const quit = await call('execute', { session, command: 'exit()', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(quit.prompt_ready, true, JSON.stringify(quit));
});

test('a local cwd of ~ is refused with the absolute path to pass instead', async () => {
  const r = await call('execute', { command: 'pwd', cwd: '~/nowhere-a23', side_effects: ['NONE'] });
  assert.equal(r.isError, true);
  assert.equal(r.status, 'failed_to_start');
  assert.ok(r.error.includes(`'~' is not expanded in a local cwd; pass the absolute path: ${process.env.HOME}/nowhere-a23`), r.error);
});

// max_output_bytes caps the text the agent gets, not only the bytes it came
// from: DEC line drawing turns each `q` into a 3-byte `─`, and an invalid
// byte reads as a 3-byte U+FFFD.
test('max_output_bytes caps the text, also where it is longer than its bytes; paging still loses nothing', async (t) => {
  const cap = 4000;
  const lines = 40;
  // 40 lines of 300 q's in the DEC line-drawing set, then 3000 invalid bytes.
  const command = `printf '\\033(0'; for i in $(seq ${lines}); do printf 'q%.0s' $(seq 300); echo; done; ` +
    `printf '\\033(B'; head -c 3000 /dev/zero | tr '\\000' '\\377'; echo; echo end`;
  const r = await start(t, { command, max_output_bytes: cap, yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed', JSON.stringify(r).slice(0, 300));
  // Buffer lengths: the cap is in bytes.
  const bytes = (s) => Buffer.byteLength(s ?? '');
  assert.ok(bytes(r.output) + bytes(r.output_tail) <= cap, `execute: ${bytes(r.output)} + ${bytes(r.output_tail)} bytes`);
  let text = '';
  for (let since = 1, pages = 0; ; pages++) {
    assert.ok(pages < 200, 'paging ends');
    const page = await call('read', { execution_id: r.execution_id, since_seq: since, max_output_bytes: cap });
    assert.ok(bytes(page.output) <= cap, `a read page of ${bytes(page.output)} bytes`);
    text += page.output;
    if (!page.capped) break;
    assert.ok(page.next_seq > since, 'each page moves on');
    since = page.next_seq;
  }
  assert.equal((text.match(/─/g) ?? []).length, lines * 300);
  assert.match(text, /\uFFFD/);
  assert.match(text, /end\n?$/);
  const tail = await call('read', { execution_id: r.execution_id, tail_lines: 5, max_output_bytes: 1000 });
  assert.ok(bytes(tail.output) <= 1000, `a tail page of ${bytes(tail.output)} bytes`);

  // The same command in a session: its answer fits too, and says where the rest is.
  const session = await openSession(call, t);
  const inSession = await call('execute', {
    session, command, max_output_bytes: cap, side_effects: ['NONE'], yield_ms: WAIT_MS,
  });
  assert.equal(inSession.status, 'completed', JSON.stringify(inSession).slice(0, 300));
  assert.ok(bytes(inSession.output) + bytes(inSession.output_tail) <= cap,
    `session: ${bytes(inSession.output)} + ${bytes(inSession.output_tail)} bytes`);
  assert.equal(inSession.capped, true);
  assert.match(inSession.hint, /since_seq=\d+|output_tail/);
});

// passwd at its prompt ignores SIGTERM: stop takes the whole grace and SIGKILL ends it.
test('a stop that needed SIGKILL says the program ignored the signal and what to do next time', async (t) => {
  const r = await start(t, { command: "trap '' TERM; echo armed; sleep 100", yield_ms: 200 });
  assert.equal(r.status, 'backgrounded');
  // Not before the trap is set: 200 ms may pass before a loaded machine's
  // bash has run it, and SIGTERM would then end it at once.
  const armed = await waitFor(r.execution_id, 'match', { pattern: '^armed$', since_seq: 1 });
  assert.equal(armed.wait_result, 'matched', JSON.stringify(armed));
  const s = await call('stop', { execution_id: r.execution_id, force_after_ms: 300 });
  assert.equal(s.isError, false, s.error);
  assert.equal(s.signal, 'SIGKILL');
  assert.match(s.message, /SIGTERM did not end it within force_after_ms \(300 ms\), so SIGKILL did/);
  const plain = await start(t, { command: 'sleep 100', yield_ms: 200 });
  const ended = await call('stop', { execution_id: plain.execution_id });
  assert.equal(ended.signal, 'SIGTERM');
  assert.equal(ended.message, undefined);
});

test('binary output printed to the terminal says it looks binary and how to see the bytes', async () => {
  const binary = await call('execute', { command: 'head -c 4000 /bin/bash', side_effects: ['NONE'] });
  assert.equal(binary.status, 'completed', JSON.stringify(binary));
  assert.match(binary.hint ?? '', /^The output looks binary: \d+ of its \d+ characters are bytes that are not text/, JSON.stringify(binary));
  assert.match(binary.hint, /xxd \| head/);
  const again = await call('read', { execution_id: binary.execution_id, since_seq: 1 });
  assert.match(again.hint ?? '', /looks binary/);
  // A few stray bytes in text are text with a flaw, not a binary file.
  const text = await call('execute', { command: "printf 'caf\\351 ok\\n'; seq 1 200", side_effects: ['NONE'] });
  assert.equal(text.hint, undefined, JSON.stringify(text));
});

test("the session's own shell at a read prompt keeps exact boundaries; a nested bash does not", async (t) => {
  const session = await openSession(call, t);
  const asked = await call('execute', {
    session, command: 'read -p "name? " who; echo hi $who', side_effects: ['NONE'], yield_ms: WAIT_MS,
  });
  assert.equal(asked.waiting_for_input, true, JSON.stringify(asked));
  assert.equal(asked.boundaries, 'exact', JSON.stringify(asked));
  assert.doesNotMatch(asked.message, /nested shell|rearm/, asked.message);
  await call('write', { execution_id: session, input: 'bob', newline: true });
  const done = await waitFor(session, 'exit');
  assert.equal(done.command_exit_code, 0, JSON.stringify(done));

  const nested = await call('execute', { session, command: 'bash --norc', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(nested.waiting_for_input, true, JSON.stringify(nested));
  assert.equal(nested.boundaries, 'heuristic', JSON.stringify(nested));
  assert.match(nested.message, /rearm/, nested.message);
  await call('execute', { session, command: 'exit', side_effects: ['NONE'], yield_ms: WAIT_MS });
});
