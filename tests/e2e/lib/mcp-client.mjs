// Starts the built agentty as an MCP server over stdio with the official SDK
// client, in its own temp state dir and with no web port clash.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findProgram } from './programs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// Its real path, as agentty prints its own (the connect instructions name
// it): AGENTTY_BIN=../../build/agentty is the same binary.
const givenBin = path.resolve(process.env.AGENTTY_BIN || path.join(here, '../../../build/agentty'));
export const agenttyBin = existsSync(givenBin) ? realpathSync(givenBin) : givenBin;

// A temp dir (a server's state dir) removed when this test file's process
// exits; otherwise every server leaves its spools, recordings and scripts.
const runDirs = [];
process.on('exit', () => {
  for (const dir of runDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // left behind: a test made something in it we may not remove
    }
  }
});
export function tempDirForRun(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  runDirs.push(dir);
  return dir;
}

// `stateDir`: share one with another server (default: a fresh temp dir).
// `runAs`: a command that runs agentty's as another user (['setpriv', ...]);
// `cwd`: where it starts (default: this process's); `bin`: which agentty.
// `capabilities`: what the client declares (e.g. { elicitation: { url: {} } }).
export async function startAgentty({ env = {}, args = [], stateDir, runAs = [], cwd, bin = agenttyBin, capabilities } = {}) {
  stateDir ??= tempDirForRun('agentty-e2e-');
  const argv = [...runAs, bin, 'mcp', '--state-dir', stateDir, '--web-listen', '127.0.0.1:0', ...args];
  const transport = new StdioClientTransport({
    command: argv[0],
    args: argv.slice(1),
    env: { ...process.env, AGENTTY_LOG_LEVEL: 'warn', ...env },
    cwd,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'agentty-e2e', version: '1.0.0' }, capabilities && { capabilities });
  // Its stderr is always read: a pipe nobody reads blocks the server once
  // full. The newest part is kept, to say why a server went away.
  let stderr = '';
  transport.stderr?.on('data', (data) => {
    stderr += data;
    if (stderr.length > kStderrKept) stderr = stderr.slice(-kStderrKept / 2);
  });
  await client.connect(transport);
  let exit;
  transport._process?.on('exit', (code, signal) => { exit = { code, signal }; });
  const call = async (name, args, options) => {
    let result;
    try {
      result = await client.callTool({ name, arguments: args }, undefined, options);
    } catch (error) {
      if (!exit) throw error;
      throw new Error(`${error.message}: the agentty server exited (${JSON.stringify(exit)}); ` +
        `the end of its stderr: ${stderr.slice(-2000) || '(empty)'}`, { cause: error });
    }
    return { ...result.structuredContent, isError: !!result.isError, raw: result };
  };
  // Starts a command (side_effects NONE unless given), checks it started, and
  // kills it after the test `t` whatever happens.
  const startCommand = async (t, args) => {
    const r = await call('execute', { side_effects: ['NONE'], ...args });
    assert.equal(r.isError, false, r.error);
    t.after(() => call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
    return r;
  };
  return { client, transport, call, startCommand, stateDir, stderr: () => stderr };
}

const kStderrKept = 4 << 20;

// An agentty whose stderr is collected; closed after the test `t`.
export async function agenttyWithStderr(t, options) {
  const agent = await startAgentty(options);
  t.after(() => agent.client.close().catch(() => {}));
  const run = (args) => agent.call('execute', { side_effects: ['NONE'], ...args });
  return { ...agent, run };
}

// One server for a whole test file: started before its tests, closed after.
// `server.agent` is what startAgentty returns; `server.call` calls a tool.
export function serverForFile(options) {
  const server = { agent: undefined, call: (name, args) => server.agent.call(name, args) };
  before(async () => {
    server.agent = await startAgentty(options);
  });
  after(async () => {
    await server.agent?.client.close();
  });
  return server;
}

// Opens a shell session through `call` (a server's tool caller), checks its
// prompt is ready, and closes it after the test `t`; returns its id.
export async function openSession(call, t) {
  const r = await call('open', {});
  assert.equal(r.isError, false, r.error || r.message);
  assert.equal(r.prompt_ready, true, JSON.stringify(r));
  t.after(() => call('close', { execution_id: r.execution_id }));
  return r.execution_id;
}

// Generous: the suite runs on a loaded 2-core machine.
export const WAIT_MS = 30000;

// A runner of commands in a session for `call` (a server's tool caller):
// execute(session=) up to WAIT_MS, checked to have answered without error.
export function sessionRunner(call) {
  return async (session, command, extra = {}) => {
    const r = await call('execute', { session, command, side_effects: ['NONE'], yield_ms: WAIT_MS, ...extra });
    assert.equal(r.isError, false, r.error);
    return r;
  };
}

// A waiter for `call` (a server's tool caller): wait(until) on an execution,
// up to WAIT_MS, checked to have answered without error.
export function waiterFor(call) {
  return async (id, until, extra = {}) => {
    const w = await call('wait', { execution_id: id, until, timeout_ms: WAIT_MS, ...extra });
    assert.equal(w.isError, false, w.error);
    return w;
  };
}

// ctrl-c to the program running in `id`, and what it printed until it waits
// for input again (its prompt): the write's reply, and a wait's if the
// reply came before the prompt.
export async function interruptToPrompt(call, id) {
  const stopped = await call('write', { execution_id: id, keys: ['ctrl-c'] });
  assert.equal(stopped.isError, false, stopped.error);
  if (stopped.waiting_for_input) return stopped.output;
  const rest = await waiterFor(call)(id, 'input');
  assert.equal(rest.waiting_for_input, true, JSON.stringify(rest));
  return stopped.output + rest.output;
}

// Whether `program` is on this machine's PATH (for tests that need an optional one).
export function installed(program) {
  return findProgram(program) !== undefined;
}

// The whole text of an execution's output, paged with since_seq from the
// start in 1 MiB pages (out-of-band: the cursor does not move).
export async function readWholeText(call, executionId) {
  let text = '';
  for (let since = 1; ;) {
    const page = await call('read', { execution_id: executionId, since_seq: since, max_output_bytes: 1 << 20 });
    assert.equal(page.isError, false, page.error);
    text += page.output;
    if (page.next_seq >= page.latest_seq) return text;
    since = page.next_seq;
  }
}

// Asserts that `text` holds the numbered frames 1..count, each on a line of
// its own, all there and in order (a flood's output read back).
export function assertFramesInOrder(text, count) {
  const numbers = text.split('\n').filter((line) => /^\d+$/.test(line)).map(Number);
  assert.equal(numbers.length, count, `${numbers.length} frames read back`);
  assert.ok(numbers.every((n, i) => n === i + 1), 'frames out of order');
}

// An answer as JSON for an assertion's message, without the SDK's copy of
// it (raw) and the terminal_url that carries the web secret.
export function brief(r) {
  const { raw, terminal_url: url, ...rest } = r;
  return JSON.stringify(rest);
}
