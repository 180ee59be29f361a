// End-to-end: a new user who believes the docs. What `agentty serve` (make
// run) prints must work when copied, every option of `agentty mcp --help`
// must refuse a value it cannot use at start-up (naming the option), and a
// tool's answer must be what its description and outputSchema promise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { agenttyBin, openSession, startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { httpGet } from './lib/web-helpers.mjs';

const scratch = tempDirForRun('agentty-audit9-');

// Starts `agentty serve ARGS` and resolves with its start-up text once complete.
function startServe(t, args, env = {}) {
  const child = spawn(agenttyBin, ['serve', '--web-listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, AGENTTY_LOG_LEVEL: 'warn', ...env },
  });
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Stop with Ctrl-C')) resolve({ child, output });
    });
    child.on('exit', (code) => reject(new Error(`agentty serve exited (${code}): ${output}`)));
  });
}

test("serve's MCP client snippet starts a server its dashboard lists, with --state-dir too", async (t) => {
  const stateDir = mkdtempSync(path.join(scratch, 'state dir "quoted" '));
  // A default state dir elsewhere: a snippet without --state-dir lands there.
  const home = mkdtempSync(path.join(scratch, 'xdg-'));
  const env = { XDG_STATE_HOME: home };
  const serve = await startServe(t, ['--state-dir', stateDir], env);
  const line = serve.output.split('\n').find((l) => l.includes('mcpServers'));
  const snippet = JSON.parse(line.trim());  // copy-pasteable JSON, whatever the path holds
  const { command, args } = snippet.mcpServers.agentty;
  assert.equal(command, agenttyBin);
  assert.deepEqual(args, ['mcp', '--state-dir', stateDir]);

  const client = new Client({ name: 'audit9', version: '1' });
  await client.connect(new StdioClientTransport({
    command, args: [...args, '--web-listen', '127.0.0.1:0'],
    env: { ...process.env, ...env, AGENTTY_LOG_LEVEL: 'warn' }, stderr: 'pipe',
  }));
  t.after(() => client.close());
  const dashboard = serve.output.match(/http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]+/)[0];
  const url = new URL(dashboard);
  const listed = await httpGet(`${url.origin}/api/servers`, { 'X-Agentty-Token': url.hash.slice('#token='.length) });
  const kinds = JSON.parse(listed.body).servers.map((s) => s.kind).sort();
  assert.deepEqual(kinds, ['mcp', 'serve']);
});

test("serve's snippet for the default state directory is the plain one the README shows", async (t) => {
  const home = mkdtempSync(path.join(scratch, 'xdg-'));
  const serve = await startServe(t, [], { XDG_STATE_HOME: home });
  assert.ok(
    serve.output.includes(`{"mcpServers": {"agentty": {"command": "${agenttyBin}", "args": ["mcp"]}}}`),
    serve.output);
  assert.ok(serve.output.includes(`claude mcp add agentty -- ${agenttyBin} mcp\n`), serve.output);
});

function startup(args, env = {}) {
  return spawnSync(agenttyBin, args, {
    env: { ...process.env, ...env }, input: '', encoding: 'utf8', timeout: 20000,
  });
}

test('serve with --no-web (or AGENTTY_NO_WEB) is refused instead of running silently with nothing to serve', () => {
  const stateDir = mkdtempSync(path.join(scratch, 'noweb-'));
  for (const [args, env] of [[['--no-web'], {}], [[], { AGENTTY_NO_WEB: '1' }]]) {
    const r = startup(['serve', '--state-dir', stateDir, ...args], env);
    assert.equal(r.signal, null, 'serve kept running with nothing to do');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /--no-web/);
    assert.match(r.stderr, /agentty mcp/);
  }
});

test('every mcp option refuses a value it cannot use at start-up, naming the option', () => {
  const stateDir = mkdtempSync(path.join(scratch, 'options-'));
  const refused = [
    [['--log-level', 'verbose'], /--log-level/],
    [['--default-timeout-ms', '-1'], /--default-timeout-ms/],
    [['--default-timeout-ms', '999999999999'], /--default-timeout-ms/],
    [['--retention-ms', '-5'], /--retention-ms/],
    [['--max-retained', '-1'], /--max-retained/],
    [['--default-cwd', path.join(scratch, 'missing')], /--default-cwd/],
    [['--shell', path.join(scratch, 'no-such-shell')], /--shell/],
    [['--shell', 'no-such-shell-in-path'], /--shell/],
    [['--default-output-bytes', '100000', '--max-output-bytes', '2000'], /--default-output-bytes 100000 is above --max-output-bytes 2000/],
  ];
  for (const [args, message] of refused) {
    const r = startup(['mcp', '--state-dir', stateDir, '--no-web', ...args]);
    assert.notEqual(r.status, 0, `${args.join(' ')} was accepted: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  const env = startup(['mcp', '--state-dir', stateDir, '--no-web'], { AGENTTY_LOG_LEVEL: 'loud' });
  assert.notEqual(env.status, 0);
  assert.match(env.stderr, /--log-level/);
  const acceptNew = startup(['mcp', '--state-dir', stateDir, '--no-web'], { AGENTTY_SSH_ACCEPT_NEW: 'sure' });
  assert.notEqual(acceptNew.status, 0);
  assert.match(acceptNew.stderr, /AGENTTY_SSH_ACCEPT_NEW='sure': use 1/);
  for (const value of ['1', 'true', '0', 'false', '']) {
    const r = startup(['mcp', '--state-dir', stateDir, '--no-web'], { AGENTTY_SSH_ACCEPT_NEW: value });
    assert.equal(r.status, 0, `AGENTTY_SSH_ACCEPT_NEW=${value}: ${r.stderr}`);
  }
  // A missing ssh config read as empty left every alias "cannot resolve".
  const missingConfig = path.join(scratch, 'no-such-ssh-config');
  const sshConfig = startup(['mcp', '--state-dir', stateDir, '--no-web'], { AGENTTY_SSH_CONFIG: missingConfig });
  assert.notEqual(sshConfig.status, 0);
  assert.match(sshConfig.stderr, new RegExp(`AGENTTY_SSH_CONFIG='${missingConfig}': No such file`));
  const emptyConfig = path.join(scratch, 'empty-ssh-config');
  writeFileSync(emptyConfig, '');
  for (const value of [emptyConfig, '', '~/no-such-config-left-to-libssh']) {
    const r = startup(['mcp', '--state-dir', stateDir, '--no-web'], { AGENTTY_SSH_CONFIG: value });
    assert.equal(r.status, 0, `AGENTTY_SSH_CONFIG=${value}: ${r.stderr}`);
  }
  // What the help lists still starts.
  for (const args of [['--log-level', 'off'], ['--shell', 'sh'], ['--default-cwd', scratch],
    ['--default-timeout-ms', '0'], ['--retention-ms', '0'], ['--max-retained', '0']]) {
    const r = startup(['mcp', '--state-dir', stateDir, '--no-web', ...args]);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  }
});

test('write action=rearm at a ready prompt answers once the shell is back at it, so execute(session=) works next', async (t) => {
  const agent = await startAgentty();
  const { tools } = await agent.client.listTools();  // the SDK then checks answers against outputSchema
  const write = tools.find((tool) => tool.name === 'write');
  assert.equal(write.outputSchema.properties.armed?.type, 'boolean');
  const session = await openSession(agent.call, t);
  t.after(() => agent.client.close());  // after the session's close (hooks run in order)
  const rearmed = await agent.call('write', { execution_id: session, action: 'rearm' });
  assert.equal(rearmed.isError, false, rearmed.error);
  assert.equal(rearmed.armed, true);
  assert.equal(rearmed.prompt_ready, true, JSON.stringify(rearmed));
  const next = await agent.call('execute', { session, command: 'echo after-rearm', side_effects: ['NONE'] });
  assert.equal(next.isError, false, next.error);
  assert.equal(next.output, 'after-rearm\n');
});

test("a clamped yield_ms hint names wait to wait longer, never calling execute again (which would run it twice)", async (t) => {
  const agent = await startAgentty();
  t.after(() => agent.client.close());
  const ended = await agent.call('execute', { command: 'true', side_effects: ['NONE'], yield_ms: 60000 });
  assert.equal(ended.status, 'completed');
  assert.match(ended.hint, /yield_ms 60000 is above the cap of 55000 ms/);
  assert.doesNotMatch(ended.hint, /call again|wait longer/);
  // A program that reads its terminal answers at once, still running (closing
  // the client ends it).
  const running = await agent.call('execute', { command: 'read line', side_effects: ['NONE'], yield_ms: 60000 });
  assert.equal(running.status, 'backgrounded', JSON.stringify(running));
  assert.doesNotMatch(running.hint, /call again/);
  assert.ok(running.hint.includes(`call wait with execution_id="${running.execution_id}"`), running.hint);
  const waited = await agent.call('wait', { execution_id: running.execution_id, timeout_ms: 200 });
  assert.equal(waited.isError, false, waited.error);
  assert.equal(waited.wait_result, 'deadline_reached');
});

test("execute's description states the server's default yield_ms, as --default-yield-ms set it", async (t) => {
  for (const [args, text] of [[[], '(default 30 s)'], [['--default-yield-ms', '2500'], '(default 2500 ms)']]) {
    const agent = await startAgentty({ args });
    t.after(() => agent.client.close());
    const { tools } = await agent.client.listTools();
    const execute = tools.find((tool) => tool.name === 'execute');
    assert.ok(execute.description.includes(`If it ends within \`yield_ms\` ${text}`), execute.description.slice(0, 300));
    const yieldDefault = args.length ? args[1] : '30000';
    assert.match(execute.inputSchema.properties.yield_ms.description, new RegExp(`\\(default ${yieldDefault}\\)`));
  }
});

test('input_pending_bytes is described as the lower bound it is: the terminal buffer took some of the input', async (t) => {
  const agent = await startAgentty();
  t.after(() => agent.client.close());
  const { tools } = await agent.client.listTools();
  const write = tools.find((tool) => tool.name === 'write');
  assert.match(write.outputSchema.properties.input_pending_bytes.description, /a lower bound/);
  // Not canonical mode: there a full line's excess is discarded (accepted)
  // as fast as the tty's worker runs, so on a loaded machine all of it could
  // be taken. Without -icanon the terminal stops taking input once full.
  const asleep = await agent.call('execute', { command: 'stty -icanon -echo; echo ready; sleep 60', side_effects: ['NONE'], yield_ms: 0 });
  // since_seq 1: yield_ms 0 may still answer with "ready" (the program ran
  // first on a loaded machine), which moves the cursor past it.
  const ready = await agent.call('wait', { execution_id: asleep.execution_id, pattern: 'ready', since_seq: 1, timeout_ms: 30000 });
  assert.equal(ready.wait_result, 'matched', JSON.stringify(ready));
  const typed = await agent.call('write', { execution_id: asleep.execution_id, input: 'x'.repeat(70000), yield_ms: 0 });
  assert.equal(typed.isError, false, typed.error);
  assert.ok(typed.input_pending_bytes > 0 && typed.input_pending_bytes < 70000, String(typed.input_pending_bytes));
});

test('a key write cannot name says how to send it, and that way works', async (t) => {
  const agent = await startAgentty();
  t.after(() => agent.client.close());
  const shown = await agent.call('execute', { command: 'cat -v', side_effects: ['NONE'], yield_ms: 0 });
  const refused = await agent.call('write', { execution_id: shown.execution_id, keys: ['alt-x'] });
  assert.equal(refused.isError, true);
  assert.match(refused.error, /^keys\[0\]: "alt-x" is not one of the allowed values: /);
  assert.ok(refused.error.includes('input="\\u001bx" for alt-x'), refused.error);
  const typed = await agent.call('write', { execution_id: shown.execution_id, input: '\u001bx', newline: true });
  assert.equal(typed.isError, false, typed.error);
  assert.match(typed.output, /\^\[x\n/);
});
