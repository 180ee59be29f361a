// Audit 41: does what README.md, --help and the tool answers say hold?
// Each test checks one concrete claim a new user relies on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { agenttyWithStderr, startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { httpGet, parseUrl } from './lib/web-helpers.mjs';

// --help shows "(Env:AGENTTY_...)" beside each option: the variable is the
// fallback, and an MCP config's arguments say what that server is to use.
// mcp and serve shared their option storage, and CLI11 fills serve's from the
// environment too, so the variable beat mcp's own command line.
test('agentty mcp: an option on the command line wins over its AGENTTY_* variable', async (t) => {
  const stateDir = tempDirForRun('audit41-cli-');
  const elsewhere = tempDirForRun('audit41-env-');
  const agent = await agenttyWithStderr(t, {
    stateDir,
    args: ['--no-web', '--default-yield-ms', '20000'],
    env: { AGENTTY_DEFAULT_YIELD_MS: '1000', AGENTTY_STATE_DIR: elsewhere },
  });
  const r = await agent.run({ command: 'true' });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.yield_ms, 20000, JSON.stringify(r));
  // A script's file lives in STATE_DIR/scripts, as $0 (README, execute).
  const s = await agent.call('execute', { script: 'echo "$0"\n', side_effects: ['NONE'] });
  assert.equal(s.isError, false, s.error);
  assert.ok(s.output.trim().startsWith(path.join(stateDir, 'scripts') + '/'), s.output);
});

// The README's first session, as shown: a REPL returns at once waiting for
// input, naming the program; a line typed with newline answers with the
// echo, the result and the next prompt; eof ends it.
test("README's first session: python3 -q, write 6*7, then eof", async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const r = await agent.run({ command: 'python3 -q' });
  assert.equal(r.isError, false, r.error);
  // Not stopped after `t`: closing the client (after `t`) ends agentty and it.
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  assert.equal(r.output, '>>> ');
  assert.match(r.message, /the foreground program, python3, reads the terminal/);
  const w = await agent.call('write', { execution_id: r.execution_id, input: '6*7', newline: true, yield_ms: 20000 });
  assert.equal(w.isError, false, w.error);
  assert.equal(w.ok, true);
  assert.equal(w.output, '6*7\n42\n>>> ');
  assert.equal(w.waiting_for_input, true);
  let end = await agent.call('write', { execution_id: r.execution_id, eof: true, yield_ms: 20000 });
  assert.equal(end.isError, false, end.error);
  if (end.status !== 'completed') {
    end = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 30000 });
  }
  assert.equal(end.status, 'completed', JSON.stringify(end));
  assert.equal(end.exit_code, 0);
});

// README, write: "The echo of the typed text alone is not a reply: a line
// that computes before it prints is answered with its output". In a
// session bash follows the echo with ESC[?2004l and the hook's command mark,
// which show nothing and were taken for the reply.
test('write in a session: a line that computes before it prints is answered with its output, not the echo', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const opened = await agent.call('open', {});
  assert.equal(opened.prompt_ready, true, JSON.stringify(opened));
  const session = opened.execution_id;  // closed with agentty, after `t`
  const w = await agent.call('write', {
    execution_id: session, input: 'sleep 0.4; echo computed-$((6*7))', newline: true, yield_ms: 20000,
  });
  assert.equal(w.isError, false, w.error);
  assert.match(w.output, /^sleep 0\.4; echo computed-\$\(\(6\*7\)\)\ncomputed-42\n/, JSON.stringify(w.output));
});

// handoff under --no-web: there is no dashboard or terminal_url, so the
// answer must not send the agent (or the person) there.
test('handoff under --no-web says nobody can take over, not to give the person terminal_url', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const r = await agent.run({ command: 'cat', yield_ms: 0 });
  assert.equal(r.isError, false, r.error);
  // Not stopped after `t`: closing the client (after `t`) ends agentty and it.
  assert.equal(r.terminal_url, undefined);
  const h = await agent.call('handoff', { execution_id: r.execution_id, reason: 'type the password' });
  assert.equal(h.isError, false, h.error);
  assert.match(h.message, /nobody can take over/);
  assert.match(h.message, /--no-web/);
  assert.doesNotMatch(h.message, /Give the person terminal_url|take over from the dashboard/);
});

// README, Configuration: "an omitted cwd is the server's own and must be
// under AGENTTY_ALLOWED_CWDS too"; "symlinks and .. resolved".
test('AGENTTY_ALLOWED_CWDS: an omitted cwd is checked as the server\'s own, and .. is resolved', async (t) => {
  const root = tempDirForRun('audit41-root-');
  mkdirSync(path.join(root, 'sub'));
  const outside = tempDirForRun('audit41-outside-');
  const agent = await agenttyWithStderr(t, { args: ['--no-web'], cwd: outside, env: { AGENTTY_ALLOWED_CWDS: root } });
  const omitted = await agent.run({ command: 'true' });
  assert.equal(omitted.isError, true);
  assert.equal(omitted.status, 'failed_to_start');
  assert.match(omitted.error, /omitted: the server's working directory/);
  assert.ok(omitted.error.includes(outside), omitted.error);
  const up = await agent.run({ command: 'true', cwd: path.join(root, 'sub', '..', '..') });
  assert.equal(up.isError, true);
  assert.match(up.error, /outside the allowed directories/);
  const inside = await agent.run({ command: 'pwd', cwd: path.join(root, 'sub', '..') });
  assert.equal(inside.isError, false, inside.error);
  assert.equal(inside.output.trim(), root);
});

// README, Web terminal: the recordings API takes the secret in an
// X-Agentty-Token header or as Authorization: Bearer, not in the URL; a
// request naming another host:port is refused with 403 "refused by the
// Host check" (what an SSH tunnel to another local port meets).
test('recordings API: X-Agentty-Token or Bearer, never ?token=; a foreign Host gets 403 naming the Host check', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: 'b'.repeat(64) } });
  t.after(() => agent.client.close());
  const r = await agent.call('execute', { command: 'echo recorded', side_effects: ['NONE'] });
  assert.equal(r.isError, false, r.error);
  const { origin, port } = parseUrl(r.terminal_url);
  const secret = 'b'.repeat(64);
  const list = `${origin}/api/recordings`;
  for (const headers of [{ 'X-Agentty-Token': secret }, { Authorization: `Bearer ${secret}` }]) {
    const got = await httpGet(list, headers);
    assert.equal(got.status, 200, JSON.stringify(headers));
    assert.ok(JSON.parse(got.body).recordings.some((rec) => rec.id === r.execution_id), got.body);
  }
  assert.equal((await httpGet(`${list}?token=${secret}`)).status, 404);
  assert.equal((await httpGet(list)).status, 404);
  const tunnelled = await httpGet(list, { 'X-Agentty-Token': secret, Host: `127.0.0.1:${port + 1}` });
  assert.equal(tunnelled.status, 403);
  assert.match(tunnelled.body, /refused by the Host check/);
  // web-url: the dashboard URL, mode 0600 (README, Web terminal).
  assert.equal(statSync(path.join(agent.stateDir, 'web-url')).mode & 0o777, 0o600);
});

// README, Resources: "an output longer than --max-output-bytes reads as its
// newest part, starting with a line that says how much is left out and how
// to page it"; an unknown URI is -32002 naming why.
test('resources/read of a long output: its newest part, after a line saying what is left out', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web', '--max-output-bytes', '1024', '--default-output-bytes', '1000'] });
  const r = await agent.run({ command: 'seq 1 3000' });
  assert.equal(r.isError, false, r.error);
  const read = await agent.client.readResource({ uri: `agentty://executions/${r.execution_id}/output` });
  const text = read.contents[0].text;
  assert.match(text, /^\[the first \d+ bytes are left out: read with execution_id="[0-9a-f]+" and since_seq=1, or explore, for them\]\n/);
  assert.ok(text.endsWith('2999\n3000\n'), text.slice(-40));
  // Whole lines after the note: the cap does not leave "30" of "1830" first.
  const lines = text.split('\n').slice(1, -1).map(Number);
  assert.deepEqual(lines, lines.map((_, i) => 3000 - lines.length + 1 + i), text.slice(0, 200));
  assert.ok(Buffer.byteLength(text) <= 1024 + 200, String(Buffer.byteLength(text)));
  await assert.rejects(
    agent.client.readResource({ uri: 'agentty://executions/nope/output' }),
    (error) => error.code === -32002 && /no execution nope/.test(error.message),
  );
});
