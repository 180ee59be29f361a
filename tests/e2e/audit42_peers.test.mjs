// Audit 42: feature by feature against the three peers (YieldShell 1.1,
// ai-device-bash, the Go PTY session manager). Each test names the peer
// behaviour it holds agentty to, checked or fixed in this audit. What a test
// leaves running ends with its server, closed after the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { agenttyBin, agenttyWithStderr, tempDirForRun, WAIT_MS } from './lib/mcp-client.mjs';

// ai-device-bash checks argv and script sizes before it runs anything. Linux
// takes at most 128 KiB in one program argument, and bash -c gets a command
// as one: a long heredoc was refused as "cannot start agentty-supervisor".
test('a command longer than one exec argument is refused naming command, and the advice works', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const text = 'a'.repeat(200000);
  const r = await agent.run({ command: `printf %s ${text} | wc -c` });
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.equal(r.status, 'failed_to_start');
  assert.match(r.error, /^command: \d+ bytes, more than Linux lets one program argument hold \(\d+ bytes, MAX_ARG_STRLEN\), and bash -c gets the command as one\. Nothing was started\./);
  assert.match(r.error, /as script \(run from a file, up to 1 MiB\), as stdin/);
  assert.doesNotMatch(r.error, /supervisor/);
  // What it points to: the same line as a script, the text as stdin.
  const script = await agent.call('execute', { script: `printf %s ${text} | wc -c\n`, side_effects: ['NONE'] });
  assert.equal(script.isError, false, script.error);
  assert.equal(script.output.trim(), '200000');
  const stdin = await agent.run({ command: 'wc -c', stdin: text });
  assert.equal(stdin.output.trim(), '200000');
});

test('an argv element longer than one exec argument is refused naming its index', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const r = await agent.run({ argv: ['echo', 'short', 'x'.repeat(200000)] });
  assert.equal(r.status, 'failed_to_start', JSON.stringify(r));
  assert.match(r.error, /^argv\[2\]: 200000 bytes, more than Linux lets one program argument hold .* Pass long text through stdin/);
});

// Arguments that each fit but together pass ARG_MAX: the system's limit is
// named, not a missing program or a broken install.
test('arguments past ARG_MAX together are refused naming ARG_MAX, not the supervisor', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const argMax = Number(execFileSync('getconf', ['ARG_MAX'], { encoding: 'utf8' }));
  const piece = 'y'.repeat(100000);
  const argv = ['true', ...Array.from({ length: Math.ceil(argMax / piece.length) + 2 }, () => piece)];
  const r = await agent.run({ argv });
  assert.equal(r.status, 'failed_to_start', JSON.stringify({ ...r, raw: undefined }));
  assert.match(r.error, /Argument list too long \(errno 7\); the program's arguments and environment together are more than the system lets a program start with \(ARG_MAX, \d+ bytes here\)\. Nothing was started/);
  assert.doesNotMatch(r.error, /supervisor|Check the program's name/);
  // The next command starts as usual.
  assert.equal((await agent.run({ command: 'echo fine' })).output, 'fine\n');
});

// YieldShell: a since_seq read is out-of-band; its hint must name the
// position to continue from. With output_tail, wait's hint said "the cursor
// is at byte N" though the server-side cursor had not moved there.
test('wait(since_seq) on a long ended output: the output_tail hint names since_seq', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const r = await agent.run({ command: 'seq 1 30000', max_output_bytes: 4000 });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.ok(r.output_tail.endsWith('30000\n'), r.output_tail);
  assert.match(r.hint, new RegExp(`to page through them \\(the cursor is at byte ${r.next_seq}\\)`));

  const w = await agent.call('wait', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 4000 });
  assert.equal(w.wait_result, 'exited', JSON.stringify(w));
  assert.ok(w.output_tail.endsWith('30000\n'), w.output_tail);
  assert.match(w.hint, new RegExp(`Call read with execution_id="${r.execution_id}" and since_seq=${w.next_seq} to page through them, or explore`));
  // The server-side cursor stayed after execute's page, as the hint implies.
  const cursorless = await agent.call('read', { execution_id: r.execution_id, max_output_bytes: 100 });
  assert.equal(cursorless.start_seq, r.next_seq);
  const named = await agent.call('read', { execution_id: r.execution_id, since_seq: w.next_seq, max_output_bytes: 100 });
  assert.equal(named.start_seq, w.next_seq);
});

// The Go session manager's own names for a key (ctrl-\) and a recovery
// action (hard), and spellings other tools use (Ctrl+C, tmux's C-d, TERM,
// 9), are refused with what agentty takes; YieldShell: an invalid signal
// name is rejected without stopping the process.
test('peer spellings of keys, actions and signals are refused with what to send instead', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const r = await agent.run({ command: 'cat', yield_ms: 0 });
  const id = r.execution_id;
  const cases = [
    ['write', { keys: ['ctrl-\\'] }, /^keys\[0\]: "ctrl-\\\\" is not one of the allowed values; instead: "ctrl-backslash" \(ctrl-\\, SIGQUIT\)\. The allowed values are: "ctrl-c"/],
    ['write', { keys: ['tab', 'Ctrl+C'] }, /^keys\[1\]: "Ctrl\+C" is not one of the allowed values; instead: "ctrl-c"\./],
    ['write', { keys: ['C-d'] }, /; instead: "ctrl-d"\./],
    ['write', { keys: ['Escape'] }, /; instead: "esc"\./],
    ['write', { action: 'hard' }, /^action: "hard" is not one of the allowed values; instead: close this session, then open a new one/],
    ['stop', { signal: 'TERM' }, /^signal: "TERM" is not one of the allowed values; instead: "SIGTERM"\./],
    ['stop', { signal: '9' }, /; instead: "SIGKILL"\./],
    ['stop', { signal: 'SIGCONT' }, /; instead: write with action="resume" continues a suspended program\./],
  ];
  for (const [tool, args, expected] of cases) {
    const refused = await agent.call(tool, { execution_id: id, ...args });
    assert.equal(refused.isError, true, `${tool} ${JSON.stringify(args)}`);
    assert.match(refused.error, expected);
  }
  const still = await agent.call('read', { execution_id: id });
  assert.equal(still.status, 'running', JSON.stringify(still));
  // A spelling of nothing agentty has keeps the plain list.
  const plain = await agent.call('stop', { execution_id: id, signal: 'SIGWINCH' });
  assert.match(plain.error, /^signal: "SIGWINCH" is not one of the allowed values: "SIGTERM"/);
});

// YieldShell's YIELDSHELL_MAX_YIELD_MS: an operator whose MCP client times
// requests out sooner than 55 s lowers the longest any call blocks.
test('--max-yield-ms caps yield_ms and wait, and lowers the default yield with it', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web', '--max-yield-ms', '1500'] });
  const r = await agent.run({ command: 'echo started; sleep 60', yield_ms: 50000 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.equal(r.yield_ms, 1500);
  assert.match(r.hint, /yield_ms 50000 is above the cap of 1500 ms, so 1500 ms applied/);
  const w = await agent.call('wait', { execution_id: r.execution_id, timeout_ms: 50000 });
  assert.equal(w.wait_result, 'deadline_reached', JSON.stringify(w));
  assert.equal(w.max_wait_ms, 1500);
  assert.ok(w.waited_ms < 10000, `waited ${w.waited_ms} ms`);
  const byDefault = await agent.run({ command: 'sleep 60' });
  assert.equal(byDefault.yield_ms, 1500, JSON.stringify(byDefault));
  const { tools } = await agent.client.listTools();
  assert.match(tools.find((tool) => tool.name === 'wait').description, /timeout_ms \(<= 1500 ms\)/);
  // stop answers within the cap too; its SIGKILL still comes after force_after_ms.
  const stubborn = await agent.run({ command: 'trap "" TERM; echo ready; sleep 60' });
  const ready = await agent.call('wait', { execution_id: stubborn.execution_id, pattern: 'ready', since_seq: 1 });
  assert.equal(ready.wait_result, 'matched', JSON.stringify(ready));
  const started = Date.now();
  const stop = await agent.call('stop', { execution_id: stubborn.execution_id, force_after_ms: 3000 });
  assert.ok(Date.now() - started < 3000, `stop took ${Date.now() - started} ms`);
  assert.equal(stop.stopped, false, JSON.stringify(stop));
  assert.match(stop.message, /^Signalled, but the process group has not ended yet; wait with until=exit\./);
  let ended = await agent.call('wait', { execution_id: stubborn.execution_id, until: 'exit' });
  for (let i = 0; ended.wait_result !== 'exited' && i < 20; i++) {
    ended = await agent.call('wait', { execution_id: stubborn.execution_id, until: 'exit' });
  }
  assert.equal(ended.status, 'stopped', JSON.stringify(ended));
  assert.equal(ended.signal, 'SIGKILL');
});

// open waits for the shell's first prompt (10 s on each of its steps) and
// execute(session=) for a prompt before it types: under the cap too, or a
// slow rc file outlasts the client's request timeout.
test('--max-yield-ms bounds open and execute(session=) waiting for a slow first prompt', async (t) => {
  const home = tempDirForRun('agentty-e2e-audit42-home-');
  writeFileSync(path.join(home, '.bashrc'), 'sleep 6\n');
  const agent = await agenttyWithStderr(t, { args: ['--no-web', '--max-yield-ms', '1500'], env: { HOME: home } });
  let started = Date.now();
  const opened = await agent.call('open', {});
  assert.ok(Date.now() - started < 5000, `open took ${Date.now() - started} ms`);
  assert.equal(opened.isError, false, opened.error);
  assert.equal(opened.prompt_ready, false, JSON.stringify(opened));
  assert.match(opened.message, /^No prompt within [12] s: the shell is still starting/);
  started = Date.now();
  const typed = await agent.call('execute', { session: opened.execution_id, command: 'echo hi', side_effects: ['NONE'] });
  assert.ok(Date.now() - started < 5000, `execute took ${Date.now() - started} ms`);
  assert.equal(typed.isError, true, JSON.stringify(typed));
  assert.match(typed.error, /the shell did not show a prompt within [12] s; read the session/);
  await agent.call('close', { execution_id: opened.execution_id });
});

test('--default-yield-ms above --max-yield-ms stops start-up naming both', () => {
  const stateDir = tempDirForRun('audit42-yield-');
  const run = spawnSync(agenttyBin, ['mcp', '--no-web', '--state-dir', stateDir, '--max-yield-ms', '2000', '--default-yield-ms', '5000'],
    { input: '', encoding: 'utf8', timeout: WAIT_MS });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /--default-yield-ms 5000 is above --max-yield-ms 2000: lower the default or raise the maximum/);
});

// YieldShell: a cursor at evicted data is not an error: the read starts at
// the oldest retained byte with evicted=true; a range that was kept is not
// reported evicted.
test('a since_seq before the kept output reads from the oldest kept byte with evicted, not an error', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web', '--ram-bytes', '4096'], env: { AGENTTY_MAX_SPOOL_BYTES: '64K' } });
  const r = await agent.run({ command: 'seq 1 100000', max_output_bytes: 100 });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  const old = await agent.call('read', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 100 });
  assert.equal(old.isError, false, old.error);
  assert.equal(old.evicted, true);
  // 64K kept: the page starts near latest_seq - 65536, far past byte 1.
  assert.ok(old.start_seq > old.latest_seq - 66000 && old.start_seq < old.latest_seq - 60000, JSON.stringify(old));
  assert.match(old.hint, new RegExp(`Output before byte ${old.start_seq} is gone for good \\(past the spool cap\\)`));
  const kept = await agent.call('read', { execution_id: r.execution_id, since_seq: old.next_seq, max_output_bytes: 100 });
  assert.equal(kept.evicted, false, JSON.stringify(kept));
  assert.equal(kept.start_seq, old.next_seq);
});

// YieldShell: when the newest tail_lines hold more than max_output_bytes,
// the newest bytes are kept; the hint says how to see the lines whole.
test('tail_lines past max_output_bytes keeps the newest bytes and says so', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const r = await agent.run({ command: 'seq 1 1000' });
  const tail = await agent.call('read', { execution_id: r.execution_id, tail_lines: 3, max_output_bytes: 6 });
  assert.equal(tail.output, '1000\n', JSON.stringify(tail));
  assert.equal(tail.capped, true);
  assert.equal(tail.next_seq, tail.latest_seq);
  assert.match(tail.hint, /^The newest 3 line\(s\) hold more than max_output_bytes, so this page is only their last 6 bytes .* explore op="read" line_offset=-3/);
});

// ai-device-bash: script and stdin are separate channels; run's stdin ""
// is an immediate end of file, and no stdin leaves the program its terminal.
test('script with stdin reads it separately; argv with stdin "" ends at once, without stdin waits', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const script = await agent.call('execute', { script: 'read -r line\necho "got $line"\n', stdin: 'from stdin\n', side_effects: ['NONE'] });
  assert.equal(script.output, 'got from stdin\n', JSON.stringify(script));
  const empty = await agent.run({ argv: ['cat'], stdin: '' });
  assert.equal(empty.status, 'completed', JSON.stringify(empty));
  assert.equal(empty.output, '');
  const reading = await agent.run({ argv: ['cat'] });
  assert.equal(reading.status, 'backgrounded', JSON.stringify(reading));
  assert.equal(reading.waiting_for_input, true);
});

// The Go manager's explore continues a long line with byte_offset.
test('explore read continues a line longer than max_bytes with byte_offset', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const r = await agent.run({ command: 'seq -s, 1 3000; echo END', max_output_bytes: 1024 });
  const line = Array.from({ length: 3000 }, (_, i) => i + 1).join(',');
  const first = await agent.call('explore', { execution_id: r.execution_id, op: 'read', line_offset: 0, limit: 1, max_bytes: 300 });
  assert.equal(first.lines[0].truncated, true, JSON.stringify(first));
  assert.equal(first.next_byte_offset, 300);
  const second = await agent.call('explore', { execution_id: r.execution_id, op: 'read', line_offset: 0, limit: 1, max_bytes: 300, byte_offset: 300 });
  assert.equal(first.lines[0].text + second.lines[0].text, line.slice(0, 600));
  const end = await agent.call('explore', { execution_id: r.execution_id, op: 'read', line_offset: -1 });
  assert.deepEqual(end.lines, [{ line: 2, text: 'END' }]);
});

// YieldShell drains the output through end of file before it answers: a
// 4 MB line printed just before exit is all there, byte for byte.
test('every byte a command printed before it exited is in the log when execute answers', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const file = path.join(tempDirForRun('audit42-drain-'), 'big.txt');
  writeFileSync(file, 'z'.repeat(4000000));
  for (let i = 0; i < 3; i++) {
    const r = await agent.run({ command: `cat ${file}`, max_output_bytes: 100 });
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.latest_seq - 1, 4000000);
  }
});

// The Go manager blocks terminal_send while the session is busy. agentty
// refuses execute(session=) then, types nothing, and names the command;
// ctrl-c brings the prompt back.
test('execute(session=) while a command runs is refused naming it; ctrl-c recovers', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const opened = await agent.call('open', {});
  assert.equal(opened.prompt_ready, true, JSON.stringify(opened));
  const id = opened.execution_id;
  const busy = await agent.call('execute', { session: id, command: 'sleep 60', side_effects: ['NONE'], yield_ms: 200 });
  assert.equal(busy.status, 'backgrounded', JSON.stringify(busy));
  const refused = await agent.call('execute', { session: id, command: 'echo second', side_effects: ['NONE'] });
  assert.equal(refused.isError, true);
  assert.match(refused.error, /^session: a command is still running in this session \(sleep 60\)\. wait\(until="exit"\) for it to end \(until="input" for a program that reads input again, as a REPL does at its next prompt\), write to answer it, write keys \["ctrl-c"\] to interrupt it/);
  const interrupted = await agent.call('write', { execution_id: id, keys: ['ctrl-c'] });
  assert.equal(interrupted.ok, true, JSON.stringify(interrupted));
  // The write may answer before the prompt is back: wait for the command's end.
  const ended = await agent.call('wait', { execution_id: id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(ended.wait_result, 'exited', JSON.stringify(ended));
  assert.equal(ended.command_exit_code, 130, JSON.stringify(ended));
  const next = await agent.call('execute', { session: id, command: 'echo second', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(next.output, 'second\n', JSON.stringify(next));
  assert.equal(next.exit_code, 0);
});
