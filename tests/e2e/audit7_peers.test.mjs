// End-to-end: an agent that knows the peer shell servers (YieldShell, a Go
// PTY session manager, ai-device-bash) and calls agentty the way it called
// them. Each test names the peer behaviour it holds agentty to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startAgentty } from './lib/mcp-client.mjs';

// A server for one test, closed (and its state dir removed) after it; closing
// it stops whatever the test left running.
async function server(t, options = {}) {
  const agent = await startAgentty(options);
  t.after(async () => {
    await agent.client.close();
    rmSync(agent.stateDir, { recursive: true, force: true });
  });
  return agent;
}

const scriptFiles = (stateDir) => {
  const dir = path.join(stateDir, 'scripts');
  return existsSync(dir) ? readdirSync(dir) : [];
};

// ai-device-bash: "script" is a bash script, checked by `bash -n` and run by
// that same bash. --shell only chooses what runs `command` strings.
test('a script is run by bash, the shell that checked it, even when --shell is sh', async (t) => {
  const { call } = await server(t, { env: { AGENTTY_SHELL: '/bin/sh' } });
  const r = await call('execute', {
    script: 'words=(a b c)\n[[ ${#words[@]} == 3 ]] && echo "array of ${#words[@]}"\n',
    side_effects: ['NONE'],
  });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.exit_code, 0, r.output);
  assert.equal(r.output, 'array of 3\n');
});

// ai-device-bash removes the managed script file when the execution is done;
// agentty keeps it while its record lives ($0 names it) and no longer.
test('a checked script file goes with its record, and a refused script leaves none', async (t) => {
  const { call, stateDir } = await server(t, { env: { AGENTTY_DENY_COMMAND_REGEX: 'forbidden' } });
  const r = await call('execute', { script: 'echo "running $0"\n', side_effects: ['NONE'] });
  assert.equal(r.exit_code, 0, r.output);
  assert.equal(scriptFiles(stateDir).length, 1, 'kept while the record lives');
  assert.ok(r.output.includes(scriptFiles(stateDir)[0]), r.output);

  const cleaned = await call('cleanup', { completed_older_than_ms: 0 });
  assert.equal(cleaned.removed, 1);
  assert.deepEqual(scriptFiles(stateDir), []);

  const refused = await call('execute', { script: 'echo forbidden\n', side_effects: ['NONE'] });
  assert.equal(refused.status, 'failed_to_start');
  assert.match(refused.error, /AGENTTY_DENY_COMMAND_REGEX/);
  const bad = await call('execute', { script: 'if true; then\n', side_effects: ['NONE'] });
  assert.match(bad.error, /^script: bash -n found a syntax error/);
  assert.deepEqual(scriptFiles(stateDir), []);
});

// All three peers' argument names, as an agent that learnt them would send
// them: the refusal names the argument and says what agentty takes instead.
test('arguments named as in a peer server are refused with what to use instead', async (t) => {
  const { call } = await server(t);
  const started = await call('execute', { command: 'cat', side_effects: ['NONE'], yield_ms: 0 });
  const id = started.execution_id;
  const cases = [
    ['write', { execution_id: id, input: 'x', close_stdin: true }, /^close_stdin: unknown argument; instead: eof=true/],
    ['read', { execution_id: id, streams: 'stdout' }, /^streams: unknown argument; instead: remove it \(a terminal merges stdout and stderr/],
    ['read', { execution_id: id, mode: 'tail' }, /^mode: unknown argument; instead: tail_lines=N/],
    ['wait', { execution_id: id, timeout: 5 }, /^timeout: unknown argument; instead: timeout_ms \(milliseconds\);/],
    // A misnamed argument is named before the one it leaves missing.
    ['read', { pid: started.process_id }, /^pid: unknown argument; instead: execution_id/],
    ['explore', { execution_id: id, action: 'stat' }, /^action: unknown argument; instead: op/],
    ['stop', { execution_id: id, pid: 1 }, /^pid: unknown argument; instead: execution_id/],
    ['execute', { command: 'true', side_effects: ['NONE'], timeout: 60 }, /^timeout: unknown argument; instead: timeout_ms \(milliseconds; 0 = none\)/],
    ['execute', { command: 'true', side_effects: ['NONE'], bytes: 100 }, /^bytes: unknown argument; instead: max_output_bytes;/],
    ['execute', { command: 'true', side_effects: ['NONE'], timeout_behavior: 'kill' }, /^timeout_behavior: unknown argument; instead: nothing for "background"/],
    ['explore', { execution_id: id, op: 'stat', output_ref: 'r1' }, /^output_ref: unknown argument; instead: execution_id/],
  ];
  for (const [tool, args, expected] of cases) {
    const r = await call(tool, args);
    assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)}`);
    assert.match(r.error, expected);
    if (/unknown argument/.test(r.error)) assert.match(r.error, /the accepted ones are: /);
  }
  // An argument no peer uses keeps the plain message.
  const plain = await call('execute', { command: 'true', side_effects: ['NONE'], bogus: 1 });
  assert.match(plain.error, /^bogus: unknown argument; the accepted ones are: /);
});

test('a peer tool name is refused with the agentty tool that does its job', async (t) => {
  const { client } = await server(t);
  const expectations = {
    terminal_send: /Unknown tool: terminal_send\. agentty does this with execute with session=ID and command/,
    terminal_output: /agentty does this with read \(without since_seq: every new byte once/,
    get: /agentty does this with wait/,
    run: /agentty does this with execute with argv \(no shell\)/,
    frobnicate: /^MCP error -32602: Unknown tool: frobnicate\. tools\/list names the available tools\.$/,
  };
  for (const [name, expected] of Object.entries(expectations)) {
    await assert.rejects(client.callTool({ name, arguments: {} }), (e) => {
      assert.match(e.message, expected);
      return true;
    });
  }
});

// Unlike ai-device-bash, a cancelled execute only ends the call (the MCP
// issue's rule: the process keeps running): the command is found with ps
// by its name and followed or stopped like any other.
test('a cancelled execute returns at once; its command runs on and ps finds it', async (t) => {
  const { client, call } = await server(t);
  const controller = new AbortController();
  const pending = client.callTool(
    { name: 'execute', arguments: { command: 'sleep 300', name: 'cancel-me', side_effects: ['NONE'], yield_ms: 50000 } },
    undefined, { signal: controller.signal });
  let started;
  while (!started) {
    started = (await call('ps', { status: 'running' })).executions.find((e) => e.name === 'cancel-me');
  }
  controller.abort('the user pressed stop');
  await assert.rejects(pending, /the user pressed stop/);
  const after = await call('read', { execution_id: started.execution_id });
  assert.equal(after.status, 'running', JSON.stringify(after));
  process.kill(-started.process_id, 0);  // the group is alive
  const stopped = await call('stop', { execution_id: started.execution_id, signal: 'SIGKILL' });
  assert.equal(stopped.status, 'stopped', JSON.stringify(stopped));
});

// The Go session manager's review: its descriptions lacked error recovery
// guidance. Every agentty tool says what its errors are and what to do.
test('every tool description says how to recover from its errors', async (t) => {
  const { client } = await server(t);
  const { tools } = await client.listTools();
  for (const tool of tools) {
    assert.match(tool.description, /Errors?:/, `${tool.name}: ${tool.description}`);
  }
});

// YieldShell: tail_lines is out-of-band, it neither uses nor moves the
// server-side cursor. A wait for a pattern with tail_lines looks in the
// lines it returns (and what comes after), not from a cursor it ignores.
test('wait with tail_lines and a pattern matches in the tail, not from the cursor', async (t) => {
  const { call } = await server(t);
  const r = await call('execute', { command: 'echo listening on 8080; sleep 30', side_effects: ['NONE'], yield_ms: 1000 });
  assert.equal(r.status, 'backgrounded');
  // The cursor is now past the line: execute's answer carried it, or (a
  // machine too loaded to print it within yield_ms) a cursorless wait does.
  const past = r.output || (await call('wait', { execution_id: r.execution_id, pattern: '^listening', timeout_ms: 20000 })).output;
  assert.equal(past, 'listening on 8080\n');
  const w = await call('wait', { execution_id: r.execution_id, pattern: 'listening on (\\d+)', tail_lines: 5, timeout_ms: 20000 });
  assert.equal(w.wait_result, 'matched', JSON.stringify(w));
  assert.deepEqual(w.match.groups, ['8080']);
  assert.equal(w.output, 'listening on 8080\n');
  // Out-of-band: a cursorless read still has nothing new.
  assert.equal((await call('read', { execution_id: r.execution_id })).output, '');
});

// The Go session manager sends a command line the way write does
// (terminal_send). A line left open that way (an apostrophe in a message)
// keeps the shell at its continuation prompt: that is not a ready prompt,
// and execute(session=) must not type its command into the open quote.
test('a line write left open (unclosed quote) is not a ready prompt; execute refuses to type into it', async (t) => {
  const { call } = await server(t);
  const { execution_id: id } = await call('open', {});
  const done = await call('write', { execution_id: id, input: 'true', newline: true });
  assert.equal(done.prompt_ready, true, JSON.stringify(done));

  const open = await call('write', { execution_id: id, input: "echo it's done", newline: true });
  assert.equal(open.prompt_ready, false, JSON.stringify(open));
  const listed = (await call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(listed.prompt_ready, false);
  const refused = await call('execute', { session: id, command: 'echo next', side_effects: ['NONE'] });
  assert.equal(refused.isError, true, JSON.stringify(refused));
  assert.match(refused.error, /^session: .*rest of the line.*write\(action="flush"\).*nothing was typed/);

  const flushed = await call('write', { execution_id: id, action: 'flush' });
  assert.equal(flushed.prompt_ready, true, JSON.stringify(flushed));
  const next = await call('execute', { session: id, command: 'echo next', side_effects: ['NONE'] });
  assert.equal(next.output, 'next\n');
  assert.equal(next.exit_code, 0);
});

// YieldShell resolves cwd against its own default directory. An agent that
// gives a relative cwd learns which directory it was taken from.
test('a relative cwd that does not exist says which directory it was taken from', async (t) => {
  const { call } = await server(t);
  const r = await call('execute', { command: 'pwd', cwd: 'no-such-subdir-7a', side_effects: ['NONE'] });
  assert.equal(r.status, 'failed_to_start');
  assert.equal(r.error, `cwd 'no-such-subdir-7a' (relative to the server's directory ${process.cwd()}; ` +
    'pass an absolute path) does not exist; create it first or pass an existing directory.');
});

// YieldShell's write reports input the program does not take (ok: false
// after backpressure). A terminal queues typed-ahead input; the answer says
// how much the program has not read, and past the queue's limit nothing is
// written and the refusal says so, where the bytes used to be dropped with
// ok: true.
test('write says how much input the program has not read, and refuses past the queue limit', async (t) => {
  const { call } = await server(t);
  const r = await call('execute', { command: 'stty raw -echo; echo ready; sleep 60', side_effects: ['NONE'], yield_ms: 0 });
  // since_seq 1: yield_ms 0 may still answer with "ready" (the program ran
  // first on a loaded machine), which moves the cursor past it.
  const ready = await call('wait', { execution_id: r.execution_id, pattern: 'ready', since_seq: 1, timeout_ms: 20000 });
  assert.equal(ready.wait_result, 'matched', JSON.stringify(ready));
  const chunk = 'y'.repeat(1 << 20);
  const first = await call('write', { execution_id: r.execution_id, input: chunk, yield_ms: 0 });
  assert.equal(first.ok, true, first.error);
  assert.ok(first.input_pending_bytes > (1 << 20) - 65536, JSON.stringify({ ...first, raw: undefined }));
  assert.match(first.message, /has not read \d+ bytes of the input typed so far/);
  let refused;
  for (let i = 0; i < 20 && !refused; i++) {
    const w = await call('write', { execution_id: r.execution_id, input: chunk, yield_ms: 0 });
    if (w.isError) refused = w;
  }
  assert.ok(refused, 'a write past the queue limit is refused');
  assert.equal(refused.ok, false);
  assert.match(refused.error, /^input: the program has not read the \d+ bytes typed before it; nothing was written/);
  assert.ok(refused.input_pending_bytes > 15 * (1 << 20));
});
