// Audit 12: security defaults, probed as another user of the same machine and
// as a careful operator would: the web server under connections that never
// send a request and out of file descriptors, duplicate Host headers, the
// state directory's modes under a permissive umask, the web secret in the
// environment of executed programs, and command rules against keys that run
// the line without Enter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import crypto from 'node:crypto';
import path from 'node:path';
import {
  chmodSync, lstatSync, readFileSync, readdirSync, statSync, writeFileSync,
} from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { agenttyBin, startAgentty, WAIT_MS, tempDirForRun } from './lib/mcp-client.mjs';
import { TOKEN, Tmux, httpGet, tryUpgrade, parseUrl, eventually } from './lib/web-helpers.mjs';

const protocols = ['agentty.v1', `agentty-token.${TOKEN}`];

// The built agentty behind a shell line run first (a umask, a ulimit).
function wrappedBin(prefix) {
  const dir = tempDirForRun('agentty-wrap-');
  const file = path.join(dir, 'agentty-wrapped');
  writeFileSync(file, `#!/bin/sh\n${prefix}\nexec '${agenttyBin}' "$@"\n`);
  chmodSync(file, 0o755);
  return file;
}

async function startWrapped(prefix, options = {}) {
  const stateDir = options.stateDir ?? tempDirForRun('agentty-e2e-');
  const transport = new StdioClientTransport({
    command: wrappedBin(prefix),
    args: ['mcp', '--state-dir', stateDir, '--web-listen', '127.0.0.1:0'],
    env: { ...process.env, AGENTTY_LOG_LEVEL: 'warn', AGENTTY_WEB_TOKEN: TOKEN, ...options.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk; });
  const client = new Client({ name: 'agentty-e2e', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    return { ...result.structuredContent, isError: !!result.isError };
  };
  return { client, call, stateDir, stderr: () => stderr };
}

// Opens `count` TCP connections to `port` that each send one byte of a
// request and nothing more (a slowloris client); resolves once all connected.
async function idleConnections(t, port, count) {
  const sockets = [];
  t.after(() => sockets.forEach((s) => s.destroy()));
  await Promise.all(Array.from({ length: count }, () => new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => { socket.write('G'); resolve(); });
    socket.on('error', () => resolve());
    sockets.push(socket);
  })));
  return sockets;
}

// A raw request on its own connection; resolves the status line.
function rawStatus(port, request) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk;
      if (data.includes('\r\n')) { socket.destroy(); resolve(data.split('\r\n')[0]); }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(data.split('\r\n')[0]));
  });
}

// A WebSocket viewer kept open on a raw socket; `received()` is every byte it got.
function openViewer(t, url) {
  return new Promise((resolve, reject) => {
    const { port, path: target } = parseUrl(url);
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write([
        `GET ${target} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: Upgrade', 'Upgrade: websocket',
        'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}`,
        `Sec-WebSocket-Protocol: ${protocols.join(', ')}`, '', ''].join('\r\n'));
    });
    t.after(() => socket.destroy());
    let data = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      if (data.includes('\r\n\r\n')) resolve({ socket, received: () => data.toString('latin1') });
    });
    socket.on('error', reject);
  });
}

test('connections that never send a request do not lock the person out of watching and taking over', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => agent.client.close());
  const shell = await agent.call('execute', { command: 'cat', side_effects: ['NONE'], yield_ms: 0 });
  const { origin, port } = parseUrl(shell.terminal_url);
  const viewer = await openViewer(t, `${origin}/ws/terminal/${shell.execution_id}`);
  assert.match(viewer.received(), /^HTTP\/1\.1 101/);
  // Any local user may connect: no secret is needed to hold a connection.
  await idleConnections(t, port, 80);
  const api = await httpGet(`${origin}/api/executions`, { 'X-Agentty-Token': TOKEN });
  assert.equal(api.status, 200);
  const upgrade = await tryUpgrade(`${origin}/ws/terminal/${shell.execution_id}`, { protocols });
  assert.equal(upgrade.status, 101);
  // The viewer that was watching still is.
  await agent.call('write', { execution_id: shell.execution_id, input: 'still-watched', newline: true });
  await eventually(() => viewer.received().includes('still-watched'), { what: 'the viewer to get the output' });
});

test('out of file descriptors, the web server waits instead of spinning, and serves again after', async (t) => {
  const agent = await startWrapped('ulimit -n 48');
  t.after(() => agent.client.close());
  const shell = await agent.call('execute', { command: 'true', side_effects: ['NONE'] });
  const { origin, port } = parseUrl(shell.terminal_url);
  const sockets = await idleConnections(t, port, 60);
  await eventually(() => /Too many open files/.test(agent.stderr()), { timeout: WAIT_MS, what: 'EMFILE' });
  // MCP keeps answering meanwhile, and the log says it once, not per retry.
  for (let i = 0; i < 5; i++) assert.equal((await agent.call('ps', {})).isError, false);
  const lines = agent.stderr().split('\n').filter((line) => /accept/.test(line));
  assert.ok(lines.length <= 2, `${lines.length} accept lines, e.g. ${lines[0]}`);
  sockets.forEach((s) => s.destroy());
  await eventually(async () => (await httpGet(`${origin}/api/executions`, { 'X-Agentty-Token': TOKEN })
    .catch(() => ({}))).status === 200, { timeout: WAIT_MS, what: 'the web server to serve again' });
});

test('a request with two Host headers is refused, whichever comes first', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => agent.client.close());
  const shell = await agent.call('execute', { command: 'true', side_effects: ['NONE'] });
  const { port } = parseUrl(shell.terminal_url);
  for (const hosts of [[`127.0.0.1:${port}`, 'evil.example'], ['evil.example', `127.0.0.1:${port}`]]) {
    const status = await rawStatus(port, `GET /api/executions HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}`
      + `X-Agentty-Token: ${TOKEN}\r\nConnection: close\r\n\r\n`);
    assert.match(status, /^HTTP\/1\.1 4\d\d/, `${hosts}: ${status}`);
  }
});

test('refused requests are not each a line in the log (any local user can send them)', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => agent.client.close());
  let stderr = '';
  agent.transport.stderr.on('data', (chunk) => { stderr += chunk; });
  const shell = await agent.call('execute', { command: 'true', side_effects: ['NONE'] });
  const { port } = parseUrl(shell.terminal_url);
  const started = Date.now();
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(Array.from({ length: 30 }, () => rawStatus(port,
      'GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n')));
  }
  const seconds = (Date.now() - started) / 1000;
  // One more, a second later, says how many were left out (an event: the log line).
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await rawStatus(port, 'GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n');
  await eventually(() => /earlier refusals not logged/.test(stderr), { what: 'the count of unlogged refusals' });
  const lines = stderr.split('\n').filter((line) => line.includes('web: refused'));
  assert.ok(lines.length <= 10 * (Math.ceil(seconds) + 2), `${lines.length} lines in ${seconds} s`);
});

// Opens a bash session; it ends with its server (each test closes its own).
async function openSession(call) {
  const r = await call('open', {});
  assert.equal(r.prompt_ready, true, JSON.stringify(r));
  return r.execution_id;
}

// Every path under `dir` (itself included) whose mode gives group or others anything.
function looseEntries(dir) {
  const loose = [];
  const visit = (p) => {
    const info = lstatSync(p);
    if (!info.isSymbolicLink() && (info.mode & 0o077) !== 0) loose.push(`${p} ${(info.mode & 0o777).toString(8)}`);
    if (info.isDirectory()) for (const name of readdirSync(p)) visit(path.join(p, name));
  };
  visit(dir);
  return loose;
}

test('under umask 000 the state directory and everything in it stay private', async (t) => {
  const stateDir = path.join(tempDirForRun('agentty-umask-'), 'state');
  const agent = await startWrapped('umask 000', { stateDir });
  t.after(() => agent.client.close());
  const session = await openSession(agent.call);  // STATE_DIR/sessions/<nonce>/bashrc
  await agent.call('execute', { session, command: 'echo in-session', side_effects: ['NONE'] });
  await agent.call('execute', { script: 'echo from-script\nsleep 60', side_effects: ['NONE'], yield_ms: 0 });
  await agent.call('execute', { command: 'seq 1 300000', side_effects: ['NONE'] });  // a spool file
  assert.deepEqual(looseEntries(stateDir), []);
  // A program the server runs still gets the umask it was started with.
  const umask = await agent.call('execute', { command: 'umask', side_effects: ['NONE'] });
  assert.equal(umask.output.trim(), '0000');
});

test('a web-url file left with loose permissions is replaced by a private one', async (t) => {
  const stateDir = tempDirForRun('agentty-e2e-');
  writeFileSync(path.join(stateDir, 'web-url'), 'old\n', { mode: 0o644 });
  chmodSync(path.join(stateDir, 'web-url'), 0o644);
  const agent = await startAgentty({ stateDir, env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => agent.client.close());
  assert.equal(statSync(path.join(stateDir, 'web-url')).mode & 0o777, 0o600);
});

test('executed programs do not inherit the web secret from the environment', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => agent.client.close());
  const direct = await agent.call('execute', { command: 'env', side_effects: ['NONE'] });
  assert.equal(direct.exit_code, 0);
  assert.doesNotMatch(direct.output, new RegExp(TOKEN));
  const session = await openSession(agent.call);
  const inSession = await agent.call('execute', { session, command: 'env | grep -c AGENTTY_WEB_TOKEN', side_effects: ['NONE'] });
  assert.equal(inSession.output.trim(), '0');
  // An explicit env overlay still reaches the program (agentty tests under agentty).
  const given = await agent.call('execute', { command: 'printenv AGENTTY_WEB_TOKEN', side_effects: ['NONE'], env: { AGENTTY_WEB_TOKEN: 'given' } });
  assert.equal(given.output.trim(), 'given');
});

test('command rules: ctrl-o and ctrl-x ctrl-e run the typed line as Enter does, and are checked', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_DENY_COMMAND_REGEX: 'forbidden' } });
  t.after(() => agent.client.close());
  const session = await openSession(agent.call);
  const refused = (r) => {
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.match(r.error, /nothing was written/);
    assert.equal(r.refused_line, 'echo forbidden-ran');
  };
  refused(await agent.call('write', { execution_id: session, input: 'echo forbidden-ran\x0f' }));
  assert.equal((await agent.call('write', { execution_id: session, input: 'echo forbidden-ran' })).ok, true);
  refused(await agent.call('write', { execution_id: session, keys: ['ctrl-o'] }));
  refused(await agent.call('write', { execution_id: session, keys: ['ctrl-x', 'ctrl-e'] }));
  assert.equal((await agent.call('write', { execution_id: session, keys: ['ctrl-c'] })).ok, true);
  const after = await agent.call('execute', { session, command: 'echo checked', side_effects: ['NONE'] });
  assert.equal(after.output, 'checked\n');
  const all = await agent.call('read', { execution_id: session, since_seq: 1 });
  assert.doesNotMatch(all.output, /^forbidden-ran/m);
});

test('an audit log that cannot be written is reported once, clearly, and tool calls go on', async (t) => {
  const before = statSync('/dev/full').mode;
  // Only if it changed: a user other than root may not chmod it, even to its mode.
  t.after(() => statSync('/dev/full').mode !== before && chmodSync('/dev/full', before & 0o7777));
  const agent = await startWrapped('', { env: { AGENTTY_AUDIT_LOG: '/dev/full' } });
  t.after(() => agent.client.close());
  for (let i = 0; i < 3; i++) {
    const r = await agent.call('execute', { command: 'echo still-works', side_effects: ['NONE'] });
    assert.equal(r.output, 'still-works\n');
  }
  const errors = agent.stderr().split('\n').filter((line) => line.includes('audit log /dev/full'));
  assert.equal(errors.length, 1, agent.stderr());
  assert.match(errors[0], /No space left on device.*not being recorded.*free space/);
  // A device is written as it is: its mode is everyone's.
  assert.equal(statSync('/dev/full').mode, before);
});

test('agentty attach URL#token=...: other users do not find the secret in its command line', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => agent.client.close());
  const shell = await agent.call('execute', { command: 'cat', side_effects: ['NONE'], yield_ms: 0 });
  const tmux = new Tmux();
  t.after(() => tmux.kill());
  tmux.run('new-session', '-d', '-s', 'main', '-x', '100', '-y', '30', `exec '${agenttyBin}' attach '${shell.terminal_url}'`);
  await eventually(() => tmux.capture('main').includes('Ctrl-] t: take over'), { what: 'attach to show the terminal' });
  const pid = tmux.run('display-message', '-p', '-t', 'main', '#{pane_pid}').trim();
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  assert.match(cmdline, /attach/);
  assert.doesNotMatch(cmdline, new RegExp(TOKEN));
  assert.match(cmdline, /#token=\*{64}/);
});
