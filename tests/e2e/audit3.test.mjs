// End-to-end regression tests for gaps found by driving agentty as a new
// user would, through the official MCP SDK client: session argument
// combinations, ps filters, explore's edges, error messages that must name
// the argument and the fix, and the cwd/env/shell inputs of SSH hosts
// (a real OpenSSH sshd on 127.0.0.1, tests/e2e/lib/sshd.mjs).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { serverForFile, startAgentty, openSession, tempDirForRun } from './lib/mcp-client.mjs';
import { startSshd, sshdSkip, loginHome } from './lib/sshd.mjs';

// A plain rc file: the machine's own may be slow (pyenv init, ...).
const home = tempDirForRun('agentty-audit3-home-');
writeFileSync(path.join(home, '.bashrc'), "PS1='audit3$ '\n");

const server = serverForFile({ env: { HOME: home } });
const call = server.call;

const open = (t) => openSession(call, t);

async function background(t, command) {
  const r = await call('execute', { command, side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  t.after(() => call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  return r.execution_id;
}

test('ps: status=backgrounded (what execute answers) is accepted and lists the running execution', async (t) => {
  const id = await background(t, 'sleep 60');
  const r = await call('ps', { status: 'backgrounded' });
  assert.equal(r.isError, false, r.error);
  assert.ok(r.executions.some((e) => e.execution_id === id), JSON.stringify(r));
  assert.ok(r.executions.every((e) => e.status === 'running'), JSON.stringify(r));
});

test('ps: include_completed=false with an ended status is refused instead of answering nothing', async () => {
  const done = await call('execute', { command: 'true', side_effects: ['NONE'] });
  assert.equal(done.status, 'completed');
  const r = await call('ps', { include_completed: false, status: 'completed' });
  assert.equal(r.isError, true);
  assert.match(r.error, /^include_completed: .*status=completed.*drop include_completed/);
  const plain = await call('ps', { status: 'completed' });
  assert.ok(plain.executions.some((e) => e.execution_id === done.execution_id));
});

test('execute(session=): an argument that does not apply names what to do instead', async (t) => {
  const id = await open(t);
  const cases = [
    [{ cwd: '/' }, /^cwd: .*cd inside the session/],
    [{ env: { A: '1' } }, /^env: .*export inside the session/],
    [{ cols: 100 }, /^cols: .*write\(cols, rows\)/],
    [{ argv: ['pwd'] }, /^argv: .*give the line as command/],
    [{ stdin: 'x' }, /^stdin: .*write/],
    [{ close_stdin: true }, /^close_stdin: .*eof=true/],
    [{ name: 'n' }, /^name: .*open/],
  ];
  for (const [extra, expected] of cases) {
    const args = { session: id, side_effects: ['NONE'], ...(extra.argv ? {} : { command: 'pwd' }), ...extra };
    const r = await call('execute', args);
    assert.equal(r.isError, true, JSON.stringify(extra));
    assert.match(r.error, expected);
    assert.doesNotMatch(r.error, /cd\/export/, 'one generic fix for every argument');
  }
  const ok = await call('execute', { session: id, command: 'echo still-fine', side_effects: ['NONE'] });
  assert.equal(ok.output, 'still-fine\n');
});

test('execute(session=): a command execution id is named as such, not as unknown', async () => {
  const r = await call('execute', { command: 'true', side_effects: ['NONE'] });
  const refused = await call('execute', { session: r.execution_id, command: 'pwd', side_effects: ['NONE'] });
  assert.equal(refused.isError, true);
  assert.match(refused.error, /^session: .* is a command execution, not a shell session; .*open/);
});

test('write to a session whose shell ended says to open a new session, not execute', async (t) => {
  const id = await open(t);
  const exited = await call('execute', { session: id, command: 'exit 4', side_effects: ['NONE'] });
  assert.equal(exited.exit_code, 4, JSON.stringify(exited));
  const w = await call('write', { execution_id: id, input: 'x' });
  assert.equal(w.isError, true);
  assert.match(w.error, /Start a new one with open\./);
  const resize = await call('write', { execution_id: id, cols: 80 });
  assert.match(resize.error, /Start a new one with open\./);
});

test('explore: a read or grep past the end says how many lines there are', async () => {
  const r = await call('execute', { command: 'seq 1 20', side_effects: ['NONE'] });
  const read = await call('explore', { execution_id: r.execution_id, op: 'read', line_offset: 100 });
  assert.equal(read.isError, false);
  assert.deepEqual(read.lines, []);
  assert.equal(read.line_count, 20);
  assert.match(read.hint, /line_offset=100 is at or past the end: the output has 20 lines/);
  assert.match(read.hint, /line_offset=-N/);
  const grep = await call('explore', { execution_id: r.execution_id, op: 'grep', pattern: '1', start_line: 50 });
  assert.deepEqual(grep.matches, []);
  assert.match(grep.hint, /start_line=50 is past the end: the output has 20 lines/);
  const inside = await call('explore', { execution_id: r.execution_id, op: 'read', line_offset: 18 });
  assert.equal(inside.hint, undefined);
  assert.deepEqual(inside.lines.map((l) => l.text), ['19', '20']);
});

test('explore: an argument the op would ignore is refused, naming the op it belongs to', async () => {
  const r = await call('execute', { command: 'seq 1 20', side_effects: ['NONE'] });
  const id = r.execution_id;
  const cases = [
    [{ op: 'grep', pattern: '1', line_offset: 3 }, /^line_offset: only applies to op="read" \(a grep continues with start_line/],
    [{ op: 'read', before: 2 }, /^before: only applies to op="grep"/],
    [{ op: 'read', start_line: 2 }, /^start_line: only applies to op="grep" \(a read starts at line_offset/],
    [{ op: 'stat', ignore_case: true }, /^ignore_case: only applies to op="grep"/],
    [{ op: 'grep', pattern: '1', byte_offset: 2 }, /^byte_offset: only applies to op="read"/],
    [{ op: 'stat', limit: 5 }, /^limit: does not apply to op="stat"/],
  ];
  for (const [args, expected] of cases) {
    const e = await call('explore', { execution_id: id, ...args });
    assert.equal(e.isError, true, JSON.stringify(args));
    assert.match(e.error, expected);
  }
});

test('wait: an invalid pattern names the fix, as explore does', async (t) => {
  const id = await background(t, 'sleep 60');
  const w = await call('wait', { execution_id: id, pattern: 'f(x', timeout_ms: 100 });
  assert.equal(w.isError, true);
  assert.match(w.error, /^pattern: invalid PCRE2 pattern at offset \d+: .*; fix the regular expression, or escape/);
});

test('a wrong type or an empty list says what to give (the argument\'s description)', async () => {
  const id = await call('read', { execution_id: 12345 });
  assert.equal(id.isError, true);
  assert.match(id.error, /^execution_id: must be a string \(got 12345\)\. .*process_id is not accepted/);
  const none = await call('execute', { command: 'true', side_effects: [] });
  assert.match(none.error, /^side_effects: must have at least 1 item\(s\)\. .*\["NONE"\] for read-only commands/);
  const bounds = await call('stop', { execution_id: 'x', force_after_ms: 60000 });
  assert.match(bounds.error, /^force_after_ms: must be at most 50000 \(got 60000\)\. Grace before SIGKILL/);
  // A bound's message carries what the value means: since_seq=0 is told that 1 is the start.
  const seq = await call('read', { execution_id: 'x', since_seq: 0 });
  assert.match(seq.error, /^since_seq: must be at least 1 \(got 0\)\. .*1 = from the start/);
});

test('stop on a session without a signal hangs the shell up (an interactive shell ignores SIGTERM)', async () => {
  const o = await call('open', {});
  assert.equal(o.prompt_ready, true, JSON.stringify(o));
  const r = await call('stop', { execution_id: o.execution_id });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.stopped, true);
  assert.equal(r.signal, 'SIGHUP', 'not SIGKILL after the whole grace');
  assert.equal(r.status, 'stopped');
});

test('host: an ssh option or a line with spaces is refused as a host, with the forms to give', async () => {
  for (const host of ['-oProxyCommand=touch /tmp/agentty-audit3', 'example.com; id']) {
    for (const tool of ['execute', 'open']) {
      const args = tool === 'execute' ? { host, command: 'true', side_effects: ['NONE'] } : { host };
      const r = await call(tool, args);
      assert.equal(r.isError, true, `${tool} ${host}`);
      assert.equal(r.status, 'failed_to_start');
      assert.match(r.error, /^host: '.*' is not a host .*user@host:port/);
    }
  }
});

// --- SSH hosts ----------------------------------------------------------------
const skip = sshdSkip();
let sshd;
let remote;
async function sshAgent() {
  if (remote) return remote;
  sshd = await startSshd();
  remote = await startAgentty({
    env: {
      HOME: home, SSH_AUTH_SOCK: '', AGENTTY_SSH_KNOWN_HOSTS: sshd.knownHosts,
      AGENTTY_SSH_CONFIG: sshd.writeConfig(sshd.clientKey),
    },
  });
  return remote;
}
after(async () => {
  await remote?.client.close();
  await sshd?.stop();
});

test('execute(host, cwd): the command runs in that directory; one that does not exist stops it', { skip }, async () => {
  const a = await sshAgent();
  const dir = tempDirForRun('agentty-audit3-remote-cwd-');
  const r = await a.call('execute', { host: sshd.host, cwd: dir, command: 'pwd; echo ran', side_effects: ['NONE'], yield_ms: 20000 });
  assert.equal(r.exit_code, 0, JSON.stringify(r));
  assert.equal(r.output, `${dir}\nran\n`);
  // The shell's messages name the command's own lines, as without a cwd.
  const lines = await a.call('execute', { host: sshd.host, cwd: dir, command: 'no-such-command-audit3', side_effects: ['NONE'], yield_ms: 20000 });
  assert.match(lines.output, /line 1: no-such-command-audit3/);
  const missing = await a.call('execute', {
    host: sshd.host, cwd: '/nonexistent-audit3', command: 'echo must-not-run', side_effects: ['NONE'], yield_ms: 20000,
  });
  assert.equal(missing.exit_code, 1, JSON.stringify(missing));
  assert.match(missing.output, /nonexistent-audit3/);
  assert.doesNotMatch(missing.output, /must-not-run/);
  const plain = await a.call('execute', { host: sshd.host, command: 'pwd', side_effects: ['NONE'], yield_ms: 20000 });
  assert.equal(plain.output, `${loginHome}\n`, 'no cwd: the account\'s home, not the server\'s directory');
});

test('open(host): cwd and env reach the login shell; a shell other than bash is refused', { skip }, async (t) => {
  const a = await sshAgent();
  const refused = await a.call('open', { host: sshd.host, shell: 'zsh' });
  assert.equal(refused.isError, true);
  assert.match(refused.error, /^shell: with host .*remove shell/);
  const dir = tempDirForRun('agentty-audit3-remote-open-');
  const o = await a.call('open', { host: sshd.host, cwd: dir, env: { AUDIT3_VAR: "it's set" } });
  assert.equal(o.isError, false, o.error || o.message);
  t.after(() => a.call('close', { execution_id: o.execution_id }));
  assert.equal(o.prompt_ready, true, JSON.stringify(o));
  const r = await a.call('execute', {
    session: o.execution_id, command: 'pwd; echo "$AUDIT3_VAR"', side_effects: ['NONE'], yield_ms: 20000,
  });
  assert.equal(r.output, `${dir}\nit's set\n`, JSON.stringify(r));
  const missing = await a.call('open', { host: sshd.host, cwd: '/nonexistent-audit3' });
  assert.equal(missing.isError, true, JSON.stringify(missing));
  assert.match(missing.message, /The shell ended right away/);
  assert.match(missing.output, /nonexistent-audit3: No such file or directory/);
});
