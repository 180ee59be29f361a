// End-to-end regression tests for gaps found by a fourth "new user with a
// real MCP client" audit: what a malformed host is told, wait(until=
// "released") on an execution nobody holds, what ps shows for a session,
// and the edges found by driving every tool with odd arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { serverForFile, openSession, tempDirForRun } from './lib/mcp-client.mjs';

// A plain rc file: the machine's own may be slow (pyenv init, ...).
const home = tempDirForRun('agentty-audit4-home-');
writeFileSync(path.join(home, '.bashrc'), "PS1='audit4$ '\n");

const server = serverForFile({ env: { HOME: home } });
const call = server.call;

async function refusedHost(host) {
  const results = [];
  for (const tool of ['execute', 'open']) {
    const args = tool === 'execute' ? { host, command: 'true', side_effects: ['NONE'] } : { host };
    const r = await call(tool, args);
    assert.equal(r.isError, true, `${tool} ${host}: ${JSON.stringify(r)}`);
    assert.equal(r.status, 'failed_to_start');
    assert.match(r.error, /accepted forms: .*user@host:port/, `${tool} ${host}: shows the forms`);
    results.push(r.error);
  }
  return results;
}

test('host: junk after the port is named as junk, not as a bad port', async () => {
  for (const error of await refusedHost('me@example.com:22 extra')) {
    assert.doesNotMatch(error, /bad port/);
    assert.match(error, /white space before 'extra'/);
    assert.match(error, /remove what follows 'me@example.com:22'/);
  }
  for (const error of await refusedHost('me@example.com:22x')) {
    assert.doesNotMatch(error, /bad port/);
    assert.match(error, /unexpected 'x' after port 22/);
  }
  for (const error of await refusedHost('me@example.com:22\n')) {
    assert.match(error, /white space at the end/);
  }
  for (const error of await refusedHost('me@example.com:')) {
    assert.match(error, /no port after ':'/);
  }
  for (const error of await refusedHost('me@example.com:70000')) {
    assert.match(error, /bad port '70000' \(expected a number from 1 to 65535\)/);
  }
});

test('host: a name libssh cannot take is refused with the character, not an empty reason', async () => {
  for (const error of await refusedHost('build_box')) {
    assert.match(error, /'_' in host name/);
  }
  for (const error of await refusedHost('deploy@box-')) {
    assert.match(error, /starts or ends with '-'/);
  }
});

test('wait(until="released") on an execution nobody holds says there was nothing to wait for', async (t) => {
  const id = await openSession(call, t);
  const r = await call('wait', { execution_id: id, until: 'released', timeout_ms: 20000 });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.wait_result, 'released');
  assert.equal(r.held, false);
  assert.ok(r.waited_ms < 20000, 'returned at once');
  assert.match(r.message, /^Not held: .*nothing to wait for/);
  // A handoff nobody has taken yet is something to wait for: no such note.
  await call('handoff', { execution_id: id, reason: 'check the screen' });
  const pending = await call('wait', { execution_id: id, until: 'released', timeout_ms: 1 });
  assert.equal(pending.wait_result, 'deadline_reached');
  assert.doesNotMatch(pending.message, /Not held/);
});

test('ps: a session shows as a session, with the command running in it', async (t) => {
  const id = await openSession(call, t);
  const entry = async () => (await call('ps', {})).executions.find((e) => e.execution_id === id);
  const idle = await entry();
  assert.equal(idle.kind, 'session');
  assert.equal(idle.command, 'bash (session)');
  assert.equal(idle.running_command, null);
  assert.match(idle.shell_program, /bash$/);
  const started = await call('execute', {
    session: id, command: 'sleep 30', side_effects: ['NONE'], yield_ms: 0,
  });
  assert.equal(started.status, 'backgrounded', JSON.stringify(started));
  let busy = await entry();
  for (let i = 0; i < 200 && !busy.running_command; i++) {
    // The C mark arrives when bash starts the line; poll for it (no event to await through MCP).
    await call('wait', { execution_id: id, until: 'idle', idle_ms: 50, timeout_ms: 100 });
    busy = await entry();
  }
  assert.equal(busy.command, 'bash (session) running: sleep 30');
  assert.equal(busy.running_command, 'sleep 30');
  assert.equal(busy.command_running, true);
  // Not for commands: their command stays what was given.
  const done = await call('execute', { command: 'echo plain', side_effects: ['NONE'] });
  const plain = (await call('ps', {})).executions.find((e) => e.execution_id === done.execution_id);
  assert.equal(plain.command, 'echo plain');
  assert.equal(plain.running_command, undefined);
});

async function background(t, command) {
  const r = await call('execute', { command, side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  t.after(() => call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  return r;
}

test('write(eof) after text without a newline ends the input (one ctrl-d only handed the text over)', async (t) => {
  const { execution_id: id } = await background(t, 'cat; echo "cat ended"');
  const ready = await call('wait', { execution_id: id, until: 'input', timeout_ms: 20000 });
  assert.equal(ready.wait_result, 'waiting_for_input', JSON.stringify(ready));
  const w = await call('write', { execution_id: id, input: 'last', eof: true });
  assert.equal(w.isError, false, w.error);
  const done = await call('wait', { execution_id: id, timeout_ms: 20000 });
  assert.equal(done.wait_result, 'exited', JSON.stringify(done));
  assert.equal(done.exit_code, 0);
  const all = await call('read', { execution_id: id, since_seq: 1 });
  assert.match(all.output, /last/);
  assert.match(all.output, /cat ended/);
});

test('write(eof) on an empty line still sends one end-of-file (the next reader is not ended too)', async (t) => {
  const { execution_id: id } = await background(t, 'cat; echo first-done; cat; echo second-done');
  await call('wait', { execution_id: id, until: 'input', timeout_ms: 20000 });
  await call('write', { execution_id: id, input: 'line', newline: true, eof: true });
  const first = await call('wait', {
    execution_id: id, pattern: 'first-done', since_seq: 1, timeout_ms: 20000,
  });
  assert.equal(first.wait_result, 'matched', JSON.stringify(first));
  const second = await call('wait', { execution_id: id, until: 'input', timeout_ms: 20000 });
  assert.equal(second.wait_result, 'waiting_for_input', 'the second cat still reads');
  assert.equal(second.status, 'running');
});

test('an execution_id that is a process_id names the execution to use', async (t) => {
  const started = await background(t, 'sleep 30');
  const r = await call('read', { execution_id: String(started.process_id) });
  assert.equal(r.isError, true);
  assert.match(r.error, new RegExp(`^execution_id: '${started.process_id}' is the process_id of execution ${started.execution_id}.*execution_id="${started.execution_id}"`));
});

test('host: a port or user that contradicts the one in host is refused, not silently preferred', async () => {
  const port = await call('execute', {
    command: 'true', side_effects: ['NONE'], host: 'localhost:1', port: 2,
  });
  assert.equal(port.isError, true);
  assert.equal(port.status, 'failed_to_start');
  assert.match(port.error, /^port: 2 contradicts the port in host 'localhost:1'; give the port once/);
  const user = await call('open', { host: 'bob@localhost:1', user: 'alice' });
  assert.equal(user.isError, true);
  assert.match(user.error, /^user: 'alice' contradicts the user in host 'bob@localhost:1'/);
  // The same value twice is no contradiction: it goes on to connect (and fails there).
  const same = await call('execute', {
    command: 'true', side_effects: ['NONE'], host: 'bob@localhost:1', user: 'bob', port: 1,
  });
  assert.equal(same.isError, true);
  assert.doesNotMatch(same.error, /contradicts/);
});

// bash redraws a pasted multi-line command, prompt and marks included,
// before it runs it; that redrawn prompt was taken for "the line ran
// nothing", and about half the time the answer was the command's echo with
// exit 0 while it went on running. Repeated: the race lost every other time.
test('a multi-line command in a session answers with its output, every time', async (t) => {
  const id = await openSession(call, t);
  for (let i = 0; i < 10; i++) {
    const r = await call('execute', {
      session: id, command: `echo a${i}\necho b${i}`, side_effects: ['NONE'],
    });
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.output, `a${i}\nb${i}\n`, `run ${i}`);
    assert.equal(r.exit_code, 0);
  }
});

// A user with white space or '@' went to libssh as it was, and the server's
// refusal named nothing.
test('a user that is not a login name is refused before anything starts', async () => {
  for (const user of ['a b', 'me@there', '-oProxyCommand=x', 'tab\there']) {
    const r = await call('execute', { host: 'localhost', user, command: 'true', side_effects: ['NONE'] });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.status, 'failed_to_start');
    assert.match(r.error, /^user: '.*' is not a login name/, user);
  }
});
