// End-to-end: executions and sessions on an SSH host, with the official MCP
// SDK client against the real binary and a real OpenSSH sshd on 127.0.0.1
// (tests/e2e/lib/sshd.mjs), logging in as the user running the tests; the
// password login tests need root (a throwaway account) and also drive
// Debian's chromium to type the password on
// the terminal page, as the person handed the login would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, existsSync, chownSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { startSshd, sshdSkip, rootOnly, loginUser, createPasswordUser } from './lib/sshd.mjs';

const skip = sshdSkip();
const skipUnlessRoot = skip || rootOnly;
const home = tempDirForRun('agentty-ssh-home-');  // no ~/.ssh keys or config

let sshd;
let agent;
let user;  // a throwaway account with a plain bash and no rc files (root only)
const started = [];

async function agentWith(env) {
  const a = await startAgentty({ env: { HOME: home, SSH_AUTH_SOCK: '', ...env } });
  started.push(a);
  return a;
}

before(async () => {
  if (skip) return;
  sshd = await startSshd();
  if (!rootOnly) user = createPasswordUser({ home: tempDirForRun('agentty-ssh-user-') });
  agent = await agentWith({
    AGENTTY_SSH_KNOWN_HOSTS: sshd.knownHosts,
    AGENTTY_SSH_CONFIG: sshd.writeConfig(sshd.clientKey),
  });
});

after(async () => {
  for (const a of started) await a.client.close();
  user?.remove();
  await sshd?.stop();
});

const run = (command, extra = {}) =>
  agent.call('execute', { host: sshd.host, command, side_effects: ['NONE'], ...extra });

test('exit codes 0, 1 and 127 with their output', { skip }, async () => {
  let r = await run('echo hello-$((6*7))');
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.exit_code, 0);
  assert.equal(r.output, 'hello-42\n');
  r = await run('echo to-stderr >&2; exit 1');
  assert.equal(r.exit_code, 1);
  assert.equal(r.output, 'to-stderr\n');
  r = await run('no-such-command-xyz');
  assert.equal(r.exit_code, 127);
  assert.match(r.output, /no-such-command-xyz: command not found/);
});

test('a long remote command yields; wait and read page its output', { skip }, async () => {
  const r = await run('sleep 1; seq 1 50000', { yield_ms: 200 });
  assert.equal(r.status, 'backgrounded');
  const w = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 30000 });
  assert.equal(w.wait_result, 'exited');
  assert.equal(w.exit_code, 0);
  let text = w.output;
  let next = w.next_seq;
  for (let page = 0; page < 100 && next < w.latest_seq; ++page) {
    const p = await agent.call('read', { execution_id: r.execution_id, since_seq: next, max_output_bytes: 32768 });
    text += p.output;
    next = p.next_seq;
  }
  const expected = Array.from({ length: 50000 }, (_, i) => `${i + 1}\n`).join('');
  assert.equal(text.length, expected.length);
  assert.equal(text, expected);
});

// On a host, stdin is the remote program's standard input too (a pipe the
// remote shell fills), not typing: never echoed or cut into lines, control
// and quoting bytes are data, the terminal is still the program's output.
test('stdin reaches the remote program as its standard input, byte for byte', { skip }, async () => {
  const completed = (r, output) => {
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.exit_code, 0, r.output);
    assert.equal(r.output, output);
  };
  completed(await run('cat', { stdin: 'hello\n' }), 'hello\n');
  completed(await run('python3 -', { stdin: 'import sys\nprint(6 * 7, sys.stdin.isatty(), sys.stdout.isatty())\n' }),
    '42 False True\n');
  completed(await run('od -An -tx1', { stdin: "a\x03'\\%b\u0000\\0000\n" }),
    ' 61 03 27 5c 25 62 00 5c 30 30 30 30 0a\n');
  const line = 'abcdefghij'.repeat(1000);  // 10,000 bytes: a typed line would be cut at 4095
  completed(await run('wc -c', { stdin: `${line}\n`, cwd: '/tmp' }), '10001\n');
  // A trailing comment in the command does not swallow the end of the pipe.
  completed(await run('tr a-z A-Z # upper', { stdin: 'x' }), 'X');
  const tooBig = await run('wc -c', { stdin: 'x'.repeat(200000) });
  assert.equal(tooBig.status, 'failed_to_start');
  assert.match(tooBig.error, /stdin: 200000 bytes do not fit .* nothing ran/);
});

test('ctrl-c through the remote terminal', { skip }, async () => {
  const r = await run('echo ready; sleep 100', { yield_ms: 500 });
  assert.equal(r.status, 'backgrounded');
  await agent.call('write', { execution_id: r.execution_id, keys: ['ctrl-c'] });
  const w = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 15000 });
  assert.equal(w.wait_result, 'exited');
  assert.ok(w.signal === 'SIGINT' || w.exit_code === 130, JSON.stringify(w));
});

test('cols and rows reach the remote terminal', { skip }, async () => {
  const r = await run('stty size', { cols: 101, rows: 33 });
  assert.equal(r.output, '33 101\n');
});

test('a remote REPL at its prompt answers before yield_ms; a silent remote command is waited for', { skip }, async (t) => {
  const sent = Date.now();
  const r = await run('python3 -q', { yield_ms: 30000 });
  t.after(() => agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.ok(Date.now() - sent < 20000, `took ${Date.now() - sent} ms`);
  assert.equal(r.waiting_for_input, true);
  assert.match(r.output, />>> $/);
  assert.match(r.message, /reads the terminal/);  // the host's /proc said so
  const w = await agent.call('write', { execution_id: r.execution_id, input: '6*7', newline: true });
  assert.match(w.output, /42/);
  // Quiet at the start of a line is a command at work, not a prompt.
  const quiet = await run('sleep 3; echo done', { yield_ms: 30000 });
  assert.equal(quiet.status, 'completed', JSON.stringify(quiet));
  assert.equal(quiet.output, 'done\n');
});

test('ps lists host executions; stop ends one', { skip }, async () => {
  const r = await run('sleep 100', { yield_ms: 200, name: 'remote-sleeper' });
  assert.equal(r.status, 'backgrounded');
  const ps = await agent.call('ps', {});
  const item = ps.executions.find((e) => e.execution_id === r.execution_id);
  assert.equal(item.host, sshd.host);
  assert.equal(item.status, 'running');
  assert.equal(item.name, 'remote-sleeper');
  await agent.call('stop', { execution_id: r.execution_id, force_after_ms: 2000 });
  const w = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 15000 });
  assert.equal(w.wait_result, 'exited');
  assert.equal(w.status, 'stopped');
});

test('open(host) and execute(session=): exact exit codes, cd persists', { skip }, async () => {
  const sessionUser = user?.name ?? loginUser;  // not root: sshd logs in only its own user
  const o = await agent.call('open', { host: `${sessionUser}@127.0.0.1:${sshd.port}` });
  assert.equal(o.isError, false, JSON.stringify(o));
  assert.equal(o.prompt_ready, true, JSON.stringify(o));
  const id = o.execution_id;
  const inSession = (command) => agent.call('execute', { session: id, command, side_effects: ['NONE'] });
  let r = await inSession('echo hi-$(id -un)');
  assert.equal(r.exit_code, 0);
  assert.equal(r.output, `hi-${sessionUser}\n`);
  assert.equal(r.boundaries, 'exact');
  r = await inSession('false');
  assert.equal(r.exit_code, 1);
  r = await inSession('(exit 7)');
  assert.equal(r.exit_code, 7);
  await inSession('cd /usr/share');
  r = await inSession('pwd');
  assert.equal(r.output, '/usr/share\n');
  const c = await agent.call('close', { execution_id: id });
  assert.equal(c.isError, false);
});

test('unknown host: refused with the fingerprint and the opt-in, then accepted', { skip }, async () => {
  const knownHosts = path.join(tempDirForRun('agentty-kh-'), 'known_hosts');
  writeFileSync(knownHosts, '');
  const config = sshd.writeConfig(sshd.clientKey);
  const strict = await agentWith({ AGENTTY_SSH_KNOWN_HOSTS: knownHosts, AGENTTY_SSH_CONFIG: config });
  const refused = await strict.call('execute', { host: sshd.host, command: 'true', side_effects: ['NONE'] });
  assert.equal(refused.isError, true);
  assert.equal(refused.status, 'failed_to_start');
  const message = refused.raw.content[0].text;
  assert.ok(message.includes(sshd.fingerprint), message);
  assert.match(message, /AGENTTY_SSH_ACCEPT_NEW=1/);
  assert.equal(readFileSync(knownHosts, 'utf8'), '');

  const trusting = await agentWith({
    AGENTTY_SSH_KNOWN_HOSTS: knownHosts, AGENTTY_SSH_CONFIG: config, AGENTTY_SSH_ACCEPT_NEW: '1',
  });
  const accepted = await trusting.call('execute', { host: sshd.host, command: 'echo trusted', side_effects: ['NONE'] });
  assert.equal(accepted.exit_code, 0, JSON.stringify(accepted));
  assert.equal(accepted.output, 'trusted\n');
  assert.match(readFileSync(knownHosts, 'utf8'), new RegExp(`^\\[127\\.0\\.0\\.1\\]:${sshd.port} `));
});

test('a wrong key is refused clearly', { skip }, async () => {
  const wrong = await agentWith({
    AGENTTY_SSH_KNOWN_HOSTS: sshd.knownHosts,
    AGENTTY_SSH_CONFIG: sshd.writeConfig(sshd.wrongKey, 'wrong_config'),
  });
  const r = await wrong.call('execute', { host: sshd.host, command: 'true', side_effects: ['NONE'] });
  assert.equal(r.isError, true);
  assert.equal(r.status, 'failed_to_start');
  assert.match(r.raw.content[0].text, new RegExp(`no key was accepted by ${loginUser}@127\\.0\\.0\\.1:\\d+`));
});

test('sshd killed mid-command: the execution fails with a reason, and the next call reconnects', { skip }, async () => {
  const doomed = await startSshd();
  try {
    const a = await agentWith({
      AGENTTY_SSH_KNOWN_HOSTS: doomed.knownHosts, AGENTTY_SSH_CONFIG: doomed.writeConfig(doomed.clientKey),
    });
    const r = await a.call('execute', { host: doomed.host, command: 'echo up; sleep 100', side_effects: ['NONE'], yield_ms: 500 });
    assert.equal(r.status, 'backgrounded');
    const killedAt = Date.now();
    doomed.signalTree('SIGKILL');
    // Within the keepalive window (5 s x 3 missed) plus slack for a loaded machine.
    const w = await a.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 25000 });
    assert.equal(w.wait_result, 'exited');
    assert.ok(Date.now() - killedAt < 25000);
    assert.equal(w.status, 'failed');
    assert.match(w.failure_reason, new RegExp(`connection to ${loginUser}@127\\.0\\.0\\.1:\\d+ lost`));
    const again = await a.call('execute', { host: doomed.host, command: 'true', side_effects: ['NONE'] });
    assert.equal(again.isError, true);  // nothing listens now
    assert.match(again.raw.content[0].text, /cannot connect|Connection refused/);
  } finally {
    await doomed.stop();
  }
});

async function launchChromium() {
  if (!existsSync(process.env.CHROMIUM_BIN || '/usr/bin/chromium')) return null;
  const { launchBrowser } = await import('./lib/web-helpers.mjs');
  return launchBrowser();
}

// What the person handed the login does: opens the terminal page, takes
// over and types the password at the prompt. Returns the page.
async function logInOnPage(browser, terminalUrl) {
  const page = await (await browser.newContext()).newPage();
  await page.goto(terminalUrl);
  await page.waitForFunction(() => window.__agentty?.screenText().includes("'s password:"), null, { timeout: 15000 });
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  await page.keyboard.type(user.password);
  await page.keyboard.press('Enter');
  return page;
}

// A server for the password-only sshd (no key of the agent's is accepted).
const passwordAgent = (locked) => agentWith({
  AGENTTY_SSH_KNOWN_HOSTS: locked.knownHosts,
  AGENTTY_SSH_CONFIG: locked.writeConfig(locked.wrongKey),
  AGENTTY_WEB_TOKEN: 'f'.repeat(64),
});

test('password login: held for a person, typed on the web page, never seen by the agent', { skip: skipUnlessRoot }, async () => {
  const browser = await launchChromium();
  if (!browser) return;  // no chromium here: the C++ tests cover the login itself
  const locked = await startSshd({ passwordAuth: true });
  try {
    const a = await passwordAgent(locked);
    const host = `${user.name}@127.0.0.1:${locked.port}`;
    const r = await a.call('execute', { host, command: 'echo logged-in-as-$(id -un)', side_effects: ['NONE'], yield_ms: 300 });
    assert.equal(r.status, 'backgrounded', JSON.stringify(r));
    assert.equal(r.held, true);
    const id = r.execution_id;
    const ps = await a.call('ps', {});
    assert.match(ps.executions.find((e) => e.execution_id === id).handoff_reason, /needs a password/);
    const refused = await a.call('write', { execution_id: id, input: 'guess', newline: true });
    assert.equal(refused.isError, true);
    assert.equal(refused.held, true);
    assert.match(refused.error, /the SSH login waits for a person/);  // nobody has taken over yet

    const page = await logInOnPage(browser, r.terminal_url);

    const w = await a.call('wait', { execution_id: id, until: 'exit', timeout_ms: 30000 });
    assert.equal(w.wait_result, 'exited');
    assert.equal(w.exit_code, 0, JSON.stringify(w));
    const all = await a.call('read', { execution_id: id, since_seq: 1, format: 'raw' });
    assert.match(all.output, new RegExp(`logged-in-as-${user.name}`));
    assert.match(all.output, /'s password: /);
    const screen = await a.call('screen', { execution_id: id });
    const leaks = [all.output, screen.lines.join('\n'), await page.evaluate(() => window.__agentty.screenText())];
    const audit = path.join(a.stateDir, 'audit.jsonl');
    if (existsSync(audit)) leaks.push(readFileSync(audit, 'utf8'));
    const cast = path.join(a.stateDir, 'recordings', `${id}.cast`);
    assert.ok(existsSync(cast));
    const recording = readFileSync(cast, 'utf8');
    leaks.push(recording);
    for (const text of leaks) assert.equal(text.includes(user.password), false);
    assert.match(recording, /\[hidden input\]/);
    const after = await a.call('ps', {});
    assert.equal(after.executions.find((e) => e.execution_id === id).held, false);
  } finally {
    await browser.close();
    await locked.stop();
  }
});

test('open(host) with a password: held at once, a person logs in on the page, then exact commands', { skip: skipUnlessRoot }, async () => {
  const browser = await launchChromium();
  if (!browser) return;  // no chromium here: tests/mcp/login_hook_test.cpp covers the hook logic
  const locked = await startSshd({ passwordAuth: true });
  try {
    const a = await passwordAgent(locked);
    const seen = [];  // every response the agent got
    const call = async (name, args) => {
      const r = await a.call(name, args);
      seen.push(JSON.stringify(r.raw));
      return r;
    };
    const openedAt = Date.now();
    const o = await call('open', { host: `${user.name}@127.0.0.1:${locked.port}` });
    // Answered once the connection knows it needs a person, not after the 10 s prompt wait.
    assert.ok(Date.now() - openedAt < 8000, `open took ${Date.now() - openedAt} ms`);
    assert.equal(o.isError, false, JSON.stringify(o));
    assert.equal(o.status, 'running');
    assert.equal(o.held, true);
    assert.equal(o.prompt_ready, false);
    assert.match(o.handoff_reason, /needs a password/);
    assert.ok(o.terminal_url, JSON.stringify(o));
    const id = o.execution_id;
    assert.ok(o.message.includes(`wait(execution_id="${id}", until="released")`), o.message);
    const inSession = (command) => call('execute', { session: id, command, side_effects: ['NONE'] });
    const refused = await inSession('true');
    assert.equal(refused.isError, true);
    assert.equal(refused.held, true);

    const page = await logInOnPage(browser, o.terminal_url);
    const w = await call('wait', { execution_id: id, until: 'released', timeout_ms: 30000 });
    assert.equal(w.wait_result, 'released', JSON.stringify(w));
    assert.equal(w.held, false);
    // No rearm: agentty typed its hook once the shell was up.
    let r = await inSession('false');
    assert.equal(r.status, 'completed', JSON.stringify(r));
    assert.equal(r.exit_code, 1);
    assert.equal(r.boundaries, 'exact');
    r = await inSession('echo ok');
    assert.equal(r.exit_code, 0, JSON.stringify(r));
    assert.equal(r.output, 'ok\n');
    r = await inSession('id -un');
    assert.equal(r.output, `${user.name}\n`);
    seen.push(JSON.stringify((await call('read', { execution_id: id, since_seq: 1, format: 'raw' })).raw));
    seen.push(JSON.stringify((await call('screen', { execution_id: id })).raw));
    seen.push(JSON.stringify((await call('ps', {})).raw));
    for (const text of seen) assert.equal(text.includes(user.password), false);
    assert.equal((await page.evaluate(() => window.__agentty.screenText())).includes(user.password), false);
    const c = await call('close', { execution_id: id });
    assert.equal(c.isError, false, JSON.stringify(c));
  } finally {
    await browser.close();
    await locked.stop();
  }
});

test('open(host) with a password: ended during the login, nothing typed; shutdown is clean', { skip: skipUnlessRoot }, async () => {
  const locked = await startSshd({ passwordAuth: true });
  try {
    const a = await passwordAgent(locked);
    const host = `${user.name}@127.0.0.1:${locked.port}`;
    const o = await a.call('open', { host });
    assert.equal(o.held, true, JSON.stringify(o));
    const stopped = await a.call('stop', { execution_id: o.execution_id, signal: 'SIGKILL' });
    assert.equal(stopped.isError, false, JSON.stringify(stopped));
    assert.notEqual(stopped.status, 'running');
    const all = await a.call('read', { execution_id: o.execution_id, since_seq: 1, format: 'raw' });
    assert.equal(all.output.includes('__agentty'), false, all.output);
    // A second one still waits for its login when the server shuts down.
    const pending = await a.call('open', { host });
    assert.equal(pending.held, true, JSON.stringify(pending));
    const child = a.transport._process;  // the SDK keeps the agentty process private
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await a.client.close();
    assert.deepEqual(await exited, { code: 0, signal: null });
  } finally {
    await locked.stop();
  }
});

// The login is typed on the execution's terminal page: without a web server
// nobody could, and the execution sat held until sshd's LoginGraceTime.
test('--no-web: a password-only host is refused at once, saying why and what to do', { skip: skipUnlessRoot }, async () => {
  const locked = await startSshd({ passwordAuth: true });
  try {
    const a = await startAgentty({
      args: ['--no-web'],
      env: {
        HOME: home, SSH_AUTH_SOCK: '',
        AGENTTY_SSH_KNOWN_HOSTS: locked.knownHosts,
        AGENTTY_SSH_CONFIG: locked.writeConfig(locked.wrongKey),
      },
    });
    started.push(a);
    const host = `${user.name}@127.0.0.1:${locked.port}`;
    const r = await a.call('execute', { host, command: 'true', side_effects: ['NONE'], yield_ms: 5000 });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.status, 'failed_to_start');
    assert.equal(r.held, undefined);
    assert.match(r.error, /password or keyboard-interactive/);
    assert.match(r.error, /--no-web/);
    assert.match(r.error, /ssh-copy-id/);
    assert.match(r.error, /passphrase is used only through ssh-agent/);
    const o = await a.call('open', { host });
    assert.equal(o.isError, true, JSON.stringify(o));
    assert.match(o.error, /--no-web/);
  } finally {
    await locked.stop();
  }
});
