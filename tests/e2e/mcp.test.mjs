// End-to-end: the official MCP TypeScript SDK client against the real binary.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync, closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync, writeSync,
} from 'node:fs';
import path from 'node:path';
import { startAgentty, agenttyBin, tempDirForRun } from './lib/mcp-client.mjs';
import { eventually } from './lib/web-helpers.mjs';

let agent;
let tools;
before(async () => {
  agent = await startAgentty();
  tools = (await agent.client.listTools()).tools;
});
after(async () => {
  await agent?.client.close();
});

const ajv = new Ajv({ strict: false, allErrors: true });

function validateAgainstOutputSchema(toolName, structured) {
  const tool = tools.find((t) => t.name === toolName);
  const validate = ajv.compile(tool.outputSchema);
  assert.ok(validate(structured), `${toolName} structuredContent: ${ajv.errorsText(validate.errors)}`);
}

async function call(name, args, options) {
  const result = await agent.call(name, args, options);
  validateAgainstOutputSchema(name, result.raw.structuredContent);
  assert.equal(result.raw.content[0].type, 'text');
  assert.deepEqual(JSON.parse(result.raw.content[0].text), result.raw.structuredContent);
  return result;
}

test('tools/list: valid JSON Schemas, strict inputs, output schemas and annotations', () => {
  const names = tools.map((t) => t.name);
  for (const name of ['execute', 'read', 'write', 'wait', 'stop', 'ps', 'cleanup', 'screen']) assert.ok(names.includes(name), name);
  for (const tool of tools) {
    assert.ok(ajv.validateSchema(tool.inputSchema), `${tool.name} inputSchema`);
    assert.ok(ajv.validateSchema(tool.outputSchema), `${tool.name} outputSchema`);
    assert.equal(tool.inputSchema.type, 'object');
    assert.equal(tool.inputSchema.additionalProperties, false, `${tool.name} is strict`);
    assert.equal(tool.outputSchema.type, 'object');
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
      assert.equal(typeof tool.annotations[hint], 'boolean', `${tool.name} ${hint}`);
    }
    assert.ok(tool.description.length > 150, `${tool.name} has a real description`);
    for (const [prop, schema] of Object.entries(tool.inputSchema.properties)) {
      if (schema.type === 'integer') {
        assert.ok('minimum' in schema && 'maximum' in schema, `${tool.name}.${prop} is bounded`);
      }
    }
  }
});

test('initialize: the server instructions say which tool is for what, naming every tool', () => {
  const instructions = agent.client.getInstructions();
  assert.equal(typeof instructions, 'string');
  for (const tool of tools) assert.ok(instructions.includes('`' + tool.name + '`'), `instructions name \`${tool.name}\``);
});

test('a fast command answers inline with output and exit code', async () => {
  const r = await call('execute', { command: 'echo hello; exit 3', side_effects: ['NONE'] });
  assert.equal(r.status, 'completed');
  assert.equal(r.exit_code, 3);
  assert.equal(r.output, 'hello\n');
  assert.equal(r.isError, false);
  assert.match(r.execution_id, /\S+/);
});

test('argv runs without a shell and script is syntax-checked first', async () => {
  const a = await call('execute', { argv: ['printf', '%s|', 'a b', '$HOME'], side_effects: ['NONE'] });
  assert.equal(a.output, 'a b|$HOME|');
  const bad = await call('execute', { script: 'if true; then\necho x\n', side_effects: ['NONE'] });
  assert.equal(bad.isError, true);
  assert.equal(bad.status, 'failed_to_start');
  assert.match(bad.error, /syntax error/);
  const good = await call('execute', { script: 'for i in 1 2 3; do\n  echo n$i\ndone\n', side_effects: ['NONE'] });
  assert.equal(good.output, 'n1\nn2\nn3\n');
});

test('auto-yield: a long command backgrounds, wait returns its end', async () => {
  // The command ends only once the test has its answer (a gate file made
  // then): with `sleep 1` the answer raced the end by 0.8 s, which a loop
  // held up for that long on a loaded machine could lose.
  const gate = path.join(tempDirForRun('agentty-yield-'), 'gate');
  const r = await call('execute', {
    command: `echo start; while [ ! -e ${gate} ]; do sleep 0.05; done; echo done`, side_effects: ['NONE'], yield_ms: 200,
  });
  writeFileSync(gate, '');
  assert.equal(r.status, 'backgrounded');
  assert.equal(r.exit_code, null);
  const w = await call('wait', { execution_id: r.execution_id, until: 'exit' });
  assert.equal(w.wait_result, 'exited');
  assert.equal(w.status, 'completed');
  assert.equal(w.exit_code, 0);
  assert.equal(r.output + w.output, 'start\ndone\n');
});

test('cursorless polling returns each byte exactly once across many pages', async () => {
  const r = await call('execute', { command: 'seq 1 30000', side_effects: ['NONE'], max_output_bytes: 4000 });
  assert.equal(r.status, 'completed');
  assert.equal(r.capped, true);
  assert.match(r.hint, /read/);
  let text = r.output;
  let pages = 1;
  for (;;) {
    const p = await call('read', { execution_id: r.execution_id, max_output_bytes: 4000 });
    text += p.output;
    pages++;
    if (!p.capped) break;
  }
  assert.ok(pages > 10);
  const expected = Array.from({ length: 30000 }, (_, i) => `${i + 1}\n`).join('');
  assert.equal(text, expected);
  const again = await call('read', { execution_id: r.execution_id });
  assert.equal(again.output, '');
});

test('an ended command too long for one page shows its start and its last lines; the cursor stays after the start', async () => {
  const lines = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join('');
  const r = await call('execute', { command: 'seq 1 100000; echo "error: the end"; exit 2', side_effects: ['NONE'] });
  assert.equal(r.status, 'completed');
  assert.equal(r.capped, true);
  assert.ok(r.output.startsWith('1\n2\n3\n'));
  assert.ok(r.output_tail.endsWith('99999\n100000\nerror: the end\n'), r.output_tail.slice(-60));
  assert.match(r.output_tail, /^\d+\n/, 'the tail starts at a whole line');
  assert.ok(r.output.length + r.output_tail.length <= 20000, 'both fit max_output_bytes');
  assert.ok(r.output_tail_seq > r.next_seq);
  assert.match(r.hint, /output_tail/);
  // The cursor continues after the start: paging returns the middle, then the end again.
  const rest = await call('read', { execution_id: r.execution_id, max_output_bytes: 1048576 });
  assert.equal(rest.start_seq, r.next_seq);
  assert.equal(rest.output_tail, undefined, 'read pages, it does not preview');
  assert.equal(r.output + rest.output, lines(1, 100000) + 'error: the end\n');
  // wait on an ended execution shows the end the same way.
  const again = await call('wait', { execution_id: r.execution_id, since_seq: 1, timeout_ms: 1000 });
  assert.ok(again.output_tail.endsWith('error: the end\n'));
  // Still running: the end is not known yet, so no tail.
  const running = await call('execute', { command: 'seq 1 100000; sleep 30', side_effects: ['NONE'], yield_ms: 1500 });
  assert.equal(running.status, 'backgrounded');
  assert.equal(running.output_tail, undefined);
  await call('stop', { execution_id: running.execution_id, signal: 'SIGKILL' });
  // A small page still shows the end (up to half of it: 250 bytes here);
  // one too small to share (under 128 bytes) keeps all of it for the start.
  const small = await call('execute', { command: 'seq 1 1000', side_effects: ['NONE'], max_output_bytes: 500 });
  assert.equal(small.capped, true);
  assert.ok(small.output_tail.endsWith('999\n1000\n'), small.output_tail);
  assert.ok(small.output.length + small.output_tail.length <= 500);
  const tiny = await call('execute', { command: 'seq 1 1000', side_effects: ['NONE'], max_output_bytes: 100 });
  assert.equal(tiny.capped, true);
  assert.equal(tiny.output_tail, undefined);
});

test('since_seq and tail_lines are out-of-band', async () => {
  const r = await call('execute', { command: 'seq 1 100', side_effects: ['NONE'], max_output_bytes: 50 });
  const peek = await call('read', { execution_id: r.execution_id, tail_lines: 2 });
  assert.equal(peek.output, '99\n100\n');
  const from1 = await call('read', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 10 });
  assert.equal(from1.start_seq, 1);
  assert.ok(from1.output.startsWith('1\n2\n'));
  const next = await call('read', { execution_id: r.execution_id, max_output_bytes: 100000 });
  assert.equal(r.output + next.output, Array.from({ length: 100 }, (_, i) => `${i + 1}\n`).join(''));
});

test('evicted is reported past the spool cap with a hint', async () => {
  const small = await startAgentty({ env: { AGENTTY_MAX_SPOOL_BYTES: '65536' }, args: ['--ram-bytes', '16384'] });
  try {
    const r = await small.call('execute', { command: 'seq 1 100000', side_effects: ['NONE'], max_output_bytes: 1000 });
    const old = await small.call('read', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 1000 });
    assert.equal(old.evicted, true);
    assert.match(old.hint, /gone/);
    assert.ok(old.start_seq > 1);
  } finally {
    await small.client.close();
  }
});

test('write to cat and to python3 -i returns the reply', async () => {
  const cat = await call('execute', { command: 'cat', side_effects: ['NONE'], yield_ms: 100 });
  assert.equal(cat.status, 'backgrounded');
  // After 100 ms a loaded machine may not have started cat yet: the echo
  // would come at once and cat's copy only once it runs, after write's reply
  // had settled. Type once it reads.
  const reading = await call('wait', { execution_id: cat.execution_id, until: 'input', timeout_ms: 30000 });
  assert.equal(reading.wait_result, 'waiting_for_input', JSON.stringify(reading));
  const w = await call('write', { execution_id: cat.execution_id, input: 'ping', newline: true });
  assert.equal(w.ok, true);
  assert.match(w.output, /ping\n.*ping/s);
  const end = await call('write', { execution_id: cat.execution_id, eof: true });
  assert.equal(end.ok, true);
  const done = await call('wait', { execution_id: cat.execution_id });
  assert.equal(done.status, 'completed');

  const py = await call('execute', { argv: ['python3', '-i', '-q'], side_effects: ['NONE'], yield_ms: 300 });
  const prompt = await call('wait', { execution_id: py.execution_id, until: 'input', timeout_ms: 10000 });
  assert.equal(prompt.wait_result, 'waiting_for_input');
  const answer = await call('write', { execution_id: py.execution_id, input: '6*7', newline: true });
  assert.match(answer.output, /42/);
  await call('stop', { execution_id: py.execution_id });
});

test('stop and timeout_ms end the whole process group', async () => {
  const r = await call('execute', { command: 'sleep 300 & sleep 300; echo never', side_effects: ['NONE'], yield_ms: 100 });
  const pid = r.process_id;
  const s = await call('stop', { execution_id: r.execution_id, force_after_ms: 2000 });
  assert.equal(s.stopped, true);
  assert.equal(s.status, 'stopped');
  assert.throws(() => process.kill(-pid, 0), /ESRCH/);

  const t = await call('execute', { command: "trap '' TERM; sleep 300", side_effects: ['NONE'], timeout_ms: 300, yield_ms: 20000 });
  assert.equal(t.status, 'timed_out');
  assert.throws(() => process.kill(-t.process_id, 0), /ESRCH/);
});

test('a script is checked off the event loop: other calls are answered meanwhile, and a cancelled check is killed', async (t) => {
  // A bash whose `-n` waits for a gate (a FIFO): the check takes as long as the test says.
  const dir = tempDirForRun('agentty-slow-check-');
  const gate = path.join(dir, 'gate');
  const pidFile = path.join(dir, 'checking.pid');
  execFileSync('mkfifo', [gate]);
  // Held open read-write for the whole test: the line written stays in the
  // FIFO until bash reads it, even when bash opens the gate after the write
  // (a FIFO whose last opener closes drops what it holds).
  const gateFd = openSync(gate, 'r+');
  t.after(() => closeSync(gateFd));
  const bash = path.join(dir, 'bash');
  writeFileSync(bash, `#!/bin/sh\nif [ "$1" = -n ]; then echo $$ > ${pidFile}; read line < ${gate}; fi\nexec /bin/bash "$@"\n`);
  chmodSync(bash, 0o755);
  const slow = await startAgentty({ env: { AGENTTY_SHELL: bash } });
  t.after(() => slow.client.close());
  let settled = false;
  const pending = slow.call('execute', { script: 'echo checked-ok', side_effects: ['NONE'] }).finally(() => { settled = true; });
  await eventually(() => existsSync(pidFile), { what: 'bash -n to start' });
  const openGate = () => writeSync(gateFd, 'go\n');
  let listed;
  let settledDuringPs;
  try {
    listed = await slow.call('ps', {}, { timeout: 5000 });
    settledDuringPs = settled;
  } finally {
    openGate();
  }
  assert.equal(listed.isError, false);
  assert.equal(settledDuringPs, false, 'ps was answered while the check still ran');
  const r = await pending;
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.output, 'checked-ok\n');
  // Cancelled while checking: the checking bash is killed, nothing runs.
  rmSync(pidFile);
  const controller = new AbortController();
  const cancelled = slow.client.callTool({ name: 'execute', arguments: { script: 'echo never', side_effects: ['NONE'] } },
    undefined, { signal: controller.signal });
  await eventually(() => existsSync(pidFile), { what: 'the second bash -n to start' });
  const pid = Number(readFileSync(pidFile, 'utf8'));
  controller.abort();
  await assert.rejects(cancelled);
  await eventually(() => { try { process.kill(pid, 0); return false; } catch { return true; } }, { what: 'the cancelled check to be killed' });
});

test('a cancelled wait returns at once and the process keeps running', async () => {
  const r = await call('execute', { command: 'sleep 30', side_effects: ['NONE'], yield_ms: 50 });
  const controller = new AbortController();
  const started = Date.now();
  const pending = agent.client.callTool({ name: 'wait', arguments: { execution_id: r.execution_id } }, undefined, { signal: controller.signal });
  setTimeout(() => controller.abort(), 200);
  await assert.rejects(pending);
  assert.ok(Date.now() - started < 5000);
  const ps = await call('ps', { status: 'running' });
  assert.ok(ps.executions.some((e) => e.execution_id === r.execution_id));
  await call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' });
});

test('progress notifications arrive during a long wait', async (t) => {
  // The program ends only when answered, and the answer is sent at the first
  // progress notification: the wait lasts until one came (with `sleep 2.5` a
  // wait that started over 1.5 s late on a loaded machine got none).
  const r = await agent.startCommand(t, { command: 'read x; echo got-$x', yield_ms: 0 });
  const progress = [];
  let answered;
  const w = await agent.client.callTool({ name: 'wait', arguments: { execution_id: r.execution_id, until: 'exit', timeout_ms: 20000 } }, undefined, {
    onprogress: (p) => {
      progress.push(p);
      answered ??= call('write', { execution_id: r.execution_id, input: 'y', newline: true });
    },
  });
  assert.ok(progress.length >= 1, 'at least one progress notification');
  assert.equal(w.structuredContent.wait_result, 'exited', JSON.stringify(w.structuredContent));
  await answered;
});

test('invalid arguments produce isError naming the argument', async () => {
  const cases = [
    [{ command: 'true' }, /side_effects: is required/],
    [{ command: 'true', side_effects: ['NOPE'] }, /side_effects\[0\].*not one of/],
    [{ command: 'true', side_effects: ['NONE'], yield_ms: -1 }, /yield_ms: must be at least 0/],
    [{ command: 'true', side_effects: ['NONE'], bogus: 1 }, /bogus: unknown argument/],
    [{ side_effects: ['NONE'] }, /command/],
    [{ command: 'true', argv: ['true'], side_effects: ['NONE'] }, /only one/],
    [{ command: 'true', side_effects: ['NONE', 'DELETES_FILES'] }, /NONE/],
    [{ command: 'true', side_effects: ['NONE'], cwd: '/definitely/not/here' }, /cwd/],
    [{ argv: ['no-such-program-xyz'], side_effects: ['NONE'] }, /no-such-program-xyz/],
  ];
  for (const [args, pattern] of cases) {
    const r = await call('execute', args);
    assert.equal(r.isError, true, JSON.stringify(args));
    assert.match(r.error, pattern);
  }
  const unknown = await call('read', { execution_id: '12345' });
  assert.equal(unknown.isError, true);
  assert.match(unknown.error, /unknown execution_id/);
  const badPattern = await call('wait', { execution_id: (await call('execute', { command: 'true', side_effects: ['NONE'] })).execution_id, until: 'match', pattern: '(' });
  assert.equal(badPattern.isError, true);
  assert.match(badPattern.error, /pattern: .*offset/);
});

test('wait until match finds a pattern split across reads', async () => {
  const r = await call('execute', { command: "sleep 0.3; printf 'Listen'; sleep 0.3; printf 'ing on port 80'; sleep 0.2; printf '80\\n'; sleep 30", side_effects: ['NONE'], yield_ms: 50 });
  const w = await call('wait', { execution_id: r.execution_id, until: 'match', pattern: 'Listening on port (\\d+)\\n' });
  assert.equal(w.wait_result, 'matched');
  assert.deepEqual(w.match.groups, ['8080']);
  await call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' });
});

test('ps lists executions and cleanup prunes ended ones', async () => {
  const r = await call('execute', { command: 'true', side_effects: ['NONE'], name: 'to-prune', purpose: 'test cleanup' });
  const ps = await call('ps', { limit: 1000 });
  const item = ps.executions.find((e) => e.execution_id === r.execution_id);
  assert.equal(item.name, 'to-prune');
  assert.equal(item.purpose, 'test cleanup');
  assert.equal(item.status, 'completed');
  const c = await call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  assert.ok(c.removed >= 1);
  const gone = await call('read', { execution_id: r.execution_id });
  assert.equal(gone.isError, true);
});

test('malformed JSON lines and unknown methods leave the server serving', async () => {
  const child = spawn(agenttyBin, ['mcp', '--state-dir', tempDirForRun('agentty-raw-'), '--no-web'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = [];
  let buffer = '';
  child.stdout.on('data', (d) => {
    buffer += d;
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, i)));
      buffer = buffer.slice(i + 1);
    }
  });
  const send = (s) => child.stdin.write(s + '\n');
  // Before initialize only ping is served: initialize first, as a client does.
  send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}');
  send('{not json');
  send('[1,2]');
  send('{"jsonrpc":"2.0","id":7,"method":"no/such"}');
  send('{"jsonrpc":"2.0","id":8}');
  send('x'.repeat(10 * 1024 * 1024));
  send('{"jsonrpc":"2.0","id":9,"method":"ping"}');
  const deadline = Date.now() + 20000;
  while (!lines.some((l) => l.id === 9) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  child.stdin.end();
  await new Promise((r) => child.on('exit', r));
  assert.equal(lines[0].id, 0);
  assert.equal(lines[1].error.code, -32700);
  assert.equal(lines[2].error.code, -32600);
  assert.equal(lines.find((l) => l.id === 7).error.code, -32601);
  assert.equal(lines.find((l) => l.id === 8).error.code, -32600);
  assert.ok(lines.some((l) => l.id === null && l.error.code === -32600 && /exceeds/.test(l.error.message)));
  assert.deepEqual(lines.find((l) => l.id === 9).result, {});
});

test('invalid UTF-8 in output is replaced, never a crash', async () => {
  const r = await call('execute', { command: "printf 'a\\xff\\xfeb\\n'", side_effects: ['NONE'] });
  assert.equal(r.output, 'a\uFFFD\uFFFDb\n');
  const raw = await call('execute', { command: "printf 'c\\xffd'", side_effects: ['NONE'], format: 'raw' });
  assert.equal(raw.status, 'completed');
});

// Resources: each execution's output and screen as text, for clients that
// let a person attach them (Claude Code's @ mentions).
test('resources: executions are listed; their output and screen read as text; unknown URIs are refused', async () => {
  const caps = agent.client.getServerCapabilities();
  assert.ok(caps.resources, JSON.stringify(caps));
  const r = await agent.call('execute', { command: 'printf "alpha\\nbeta\\n"; echo "sum=$((40+2))"', side_effects: ['NONE'] });
  assert.equal(r.status, 'completed');
  const uri = `agentty://executions/${r.execution_id}/output`;
  const listed = (await agent.client.listResources()).resources;
  const entry = listed.find((e) => e.uri === uri);
  assert.ok(entry, JSON.stringify(listed.slice(0, 3)));
  assert.equal(entry.mimeType, 'text/plain');
  assert.match(entry.title, /printf/);
  assert.equal(listed[0].uri, uri, 'newest first');
  const read = await agent.client.readResource({ uri });
  assert.deepEqual(read.contents, [{ uri, mimeType: 'text/plain', text: 'alpha\nbeta\nsum=42\n' }]);
  const screen = await agent.client.readResource({ uri: uri.replace(/output$/, 'screen') });
  assert.match(screen.contents[0].text, /^alpha\nbeta\nsum=42\n/);
  const templates = (await agent.client.listResourceTemplates()).resourceTemplates;
  assert.deepEqual(templates.map((t) => t.uriTemplate).sort(),
    ['agentty://executions/{execution_id}/output', 'agentty://executions/{execution_id}/screen']);
  for (const [bad, why] of [['agentty://executions/nope/output', /no execution nope/],
    [`agentty://executions/${r.execution_id}/stderr`, /output or screen/],
    ['file:///etc/passwd', /agentty:\/\/executions\//]]) {
    await assert.rejects(agent.client.readResource({ uri: bad }), (e) => e.code === -32002 && why.test(e.message));
  }
});

test('resources: an output longer than the response cap reads as its newest part, saying what is left out', async () => {
  const big = await startAgentty({ args: ['--max-output-bytes', '65536'] });
  try {
    const r = await big.call('execute', { command: 'seq 1 100000', side_effects: ['NONE'] });
    assert.equal(r.status, 'completed');
    const read = await big.client.readResource({ uri: `agentty://executions/${r.execution_id}/output` });
    const text = read.contents[0].text;
    assert.ok(text.length <= 65536 + 200, `${text.length} bytes`);
    assert.match(text, /^\[the first \d+ bytes are left out: read with execution_id="[0-9a-f]+" and since_seq=1/);
    assert.match(text, /\n99999\n100000\n$/);
  } finally {
    await big.client.close();
  }
});
