// End-to-end: operator policy, redaction, limits, audit log, recordings and
// explore, with the official MCP SDK client against the real binary. Each
// group starts its own server with the AGENTTY_* variables it needs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, existsSync, readFileSync, readdirSync, statSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { startAgentty, agenttyBin, tempDirForRun } from './lib/mcp-client.mjs';

const scratch = tempDirForRun('agentty-policy-');
const work = path.join(scratch, 'work');
const outside = path.join(scratch, 'outside');
mkdirSync(path.join(work, 'a'), { recursive: true });
mkdirSync(path.join(scratch, 'work-evil'));  // similar-prefix sibling of the root
mkdirSync(outside);
symlinkSync(outside, path.join(work, 'escape'));  // inside the root, pointing out of it
after(() => rmSync(scratch, { recursive: true, force: true }));

// A server whose every tool call is counted by name, to compare with the audit log.
async function server(t, env = {}, args = []) {
  const agent = await startAgentty({ env, args });
  const counts = {};
  const call = async (name, callArgs) => {
    counts[name] = (counts[name] || 0) + 1;
    return agent.call(name, callArgs);
  };
  t.after(async () => {
    await agent.client.close();
    rmSync(agent.stateDir, { recursive: true, force: true });
  });
  return { ...agent, call, counts };
}

function auditRecords(stateDir) {
  return readFileSync(path.join(stateDir, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

const refused = (r) => {
  assert.equal(r.isError, true, JSON.stringify(r));
  assert.equal(r.status, 'failed_to_start');
  return r.error;
};

// Start-up: a bad setting fails at once, naming the variable.
function startupError(env) {
  const r = spawnSync(agenttyBin, ['mcp', '--state-dir', scratch, '--no-web'], {
    env: { ...process.env, ...env }, input: '', encoding: 'utf8', timeout: 20000,
  });
  assert.notEqual(r.status, 0);
  return r.stderr;
}

test('start-up refuses unknown side effects, invalid regexes and bad limits, naming the variable', () => {
  assert.match(startupError({ AGENTTY_BLOCKED_SIDE_EFFECTS: 'DELETES_FILES,BOGUS_ONE' }),
    /AGENTTY_BLOCKED_SIDE_EFFECTS: unknown side effect 'BOGUS_ONE'/);
  assert.match(startupError({ AGENTTY_DENY_COMMAND_REGEX: 'rm (' }), /AGENTTY_DENY_COMMAND_REGEX is not a valid PCRE2 pattern/);
  assert.match(startupError({ AGENTTY_ALLOW_COMMAND_REGEX: '[a' }), /AGENTTY_ALLOW_COMMAND_REGEX is not a valid PCRE2 pattern/);
  assert.match(startupError({ AGENTTY_REDACT_ENV_REGEX: '(?<' }), /AGENTTY_REDACT_ENV_REGEX/);
  assert.match(startupError({ AGENTTY_MAX_TOTAL_SPOOL_BYTES: 'lots' }), /AGENTTY_MAX_TOTAL_SPOOL_BYTES='lots'/);
  assert.match(startupError({ AGENTTY_MAX_RECORDINGS: '0' }), /AGENTTY_MAX_RECORDINGS='0'/);
});

test('side effects: blocked categories are all named with a safer step, nothing runs; "," clears the list', async (t) => {
  const s = await server(t);
  const marker = path.join(scratch, 'side-effect-marker');
  const r = await s.call('execute', {
    command: `touch ${marker}`, cwd: work,
    side_effects: ['MODIFIES_WORKSPACE_FILES', 'RUNS_INLINE_CODE', 'KILLS_AGENT_PROCESS'],
  });
  const error = refused(r);
  assert.match(error, /KILLS_AGENT_PROCESS, RUNS_INLINE_CODE|RUNS_INLINE_CODE, KILLS_AGENT_PROCESS/);
  assert.match(error, /Nothing was run/);
  assert.match(error, /- RUNS_INLINE_CODE: Write the code to a reviewable file/);
  assert.match(error, /- KILLS_AGENT_PROCESS: Find the exact process id/);
  assert.doesNotMatch(error, /MODIFIES_WORKSPACE_FILES:/);
  assert.match(error, /AGENTTY_BLOCKED_SIDE_EFFECTS/);
  assert.equal(existsSync(marker), false);
  assert.match((await s.call('execute', { command: 'true', side_effects: ['NONE', 'OTHER'] })).error, /NONE is exclusive/);
  assert.match((await s.call('execute', { command: 'true', side_effects: ['DELETES_FILE'] })).error, /side_effects/);
  assert.match((await s.call('execute', { command: 'true' })).error, /side_effects/);

  const open = await server(t, { AGENTTY_BLOCKED_SIDE_EFFECTS: ',' });
  const ok = await open.call('execute', { command: 'echo inline-ok', cwd: work, side_effects: ['RUNS_INLINE_CODE'] });
  assert.equal(ok.output, 'inline-ok\n');
});

test('cwd roots: descendants run; similar-prefix sibling, .., symlink escape and an omitted cwd outside are refused', async (t) => {
  const s = await server(t, { AGENTTY_ALLOWED_CWDS: work });
  const run = (cwd) => s.call('execute', { command: 'pwd -P', side_effects: ['NONE'], ...(cwd ? { cwd } : {}) });
  assert.equal((await run(work)).output, `${work}\n`);
  assert.equal((await run(path.join(work, 'a'))).output, `${path.join(work, 'a')}\n`);
  // Strings, not path.join: the `..` must reach the server unresolved. realpath
  // follows escape first, so escape/.. is the scratch directory.
  for (const cwd of [path.join(scratch, 'work-evil'), `${work}/../outside`, path.join(work, 'escape'),
    `${work}/escape/../work-evil`, `${work}/a/../../outside`, '/']) {
    const error = refused(await run(cwd));
    assert.match(error, /outside the allowed directories/, cwd);
    assert.match(error, /AGENTTY_ALLOWED_CWDS/);
  }
  assert.match(refused(await run(path.join(work, 'escape'))), new RegExp(`resolved to '${outside}'`));
  // The test runner's directory is not under the root: omitting cwd is no way around it.
  assert.match(refused(await run()), /omitted: the server's working directory/);
  // A session's cwd is checked the same way.
  assert.match(refused(await s.call('open', { cwd: path.join(work, 'escape') })), /outside the allowed directories/);
  const session = await s.call('open', { cwd: path.join(work, 'a') });
  assert.equal(session.prompt_ready, true, JSON.stringify(session));
  await s.call('close', { execution_id: session.execution_id });
});

test('command rules: the deny regex covers command, argv, script and commands typed into a session; the allow regex admits only matches', async (t) => {
  const s = await server(t, { AGENTTY_DENY_COMMAND_REGEX: String.raw`\brm\s+-rf\b` });
  const victim = path.join(work, 'victim');
  mkdirSync(victim, { recursive: true });
  const attempts = [
    { command: `rm -rf ${victim}` },
    { argv: ['rm', '-rf', victim] },
    { script: `echo first\nrm -rf ${victim}\n` },
  ];
  for (const attempt of attempts) {
    const error = refused(await s.call('execute', { ...attempt, cwd: work, side_effects: ['DELETES_FILES'] }));
    assert.match(error, /deny pattern AGENTTY_DENY_COMMAND_REGEX/);
  }
  const session = await s.call('open', { cwd: work });
  const typed = await s.call('execute', { session: session.execution_id, command: `rm -rf ${victim}`, side_effects: ['DELETES_FILES'] });
  assert.match(refused(typed), /AGENTTY_DENY_COMMAND_REGEX/);
  assert.equal(existsSync(victim), true);
  await s.call('close', { execution_id: session.execution_id });

  const allow = await server(t, { AGENTTY_ALLOW_COMMAND_REGEX: '^(echo|printf) ' });
  assert.equal((await allow.call('execute', { command: 'echo allowed', cwd: work, side_effects: ['NONE'] })).output, 'allowed\n');
  assert.match(refused(await allow.call('execute', { command: 'ls', cwd: work, side_effects: ['NONE'] })),
    /does not match the allow pattern AGENTTY_ALLOW_COMMAND_REGEX/);
  // open checks the shell it starts against the allow list too.
  assert.match(refused(await allow.call('open', { cwd: work })), /AGENTTY_ALLOW_COMMAND_REGEX/);
});

test('refusal order: side effects, then cwd, then command rules, then limits', async (t) => {
  const s = await server(t, {
    AGENTTY_ALLOWED_CWDS: work,
    AGENTTY_DENY_COMMAND_REGEX: 'forbidden',
    AGENTTY_MAX_EXECUTIONS: '1',
  });
  const sleeper = await s.call('execute', { command: 'sleep 60', cwd: work, side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(sleeper.status, 'backgrounded');
  const call = { command: 'echo forbidden', cwd: outside, side_effects: ['RUNS_INLINE_CODE'] };
  assert.match(refused(await s.call('execute', call)), /side_effects declares RUNS_INLINE_CODE/);
  call.side_effects = ['NONE'];
  assert.match(refused(await s.call('execute', call)), /outside the allowed directories/);
  call.cwd = work;
  assert.match(refused(await s.call('execute', call)), /deny pattern AGENTTY_DENY_COMMAND_REGEX/);
  call.command = 'echo fine';
  const limit = refused(await s.call('execute', call));
  assert.match(limit, /1 execution is running and the limit is 1/);
  assert.match(limit, /AGENTTY_MAX_EXECUTIONS/);
  assert.match(refused(await s.call('open', { cwd: work })), /AGENTTY_MAX_EXECUTIONS/);
  await s.call('stop', { execution_id: sleeper.execution_id, signal: 'SIGKILL' });
  await s.call('wait', { execution_id: sleeper.execution_id, until: 'exit', timeout_ms: 20000 });
  assert.equal((await s.call('execute', call)).output, 'fine\n');
});

test('limits: sessions, and total spool (oldest ended dropped first, then refusal naming the variable)', async (t) => {
  const s = await server(t, { AGENTTY_MAX_SESSIONS: '1', AGENTTY_MAX_TOTAL_SPOOL_BYTES: '1M' });
  const one = await s.call('open', { cwd: work });
  assert.equal(one.prompt_ready, true);
  const two = refused(await s.call('open', { cwd: work }));
  assert.match(two, /1 session is open and the limit is 1/);
  assert.match(two, /AGENTTY_MAX_SESSIONS/);
  await s.call('close', { execution_id: one.execution_id });

  // 1.2 MB from an ended execution: the next start drops it to make room.
  const big = await s.call('execute', { command: 'head -c 1200000 /dev/zero | tr "\\0" x', cwd: work, side_effects: ['NONE'], max_output_bytes: 100 });
  assert.equal(big.status, 'completed');
  const next = await s.call('execute', { command: 'echo next', cwd: work, side_effects: ['NONE'] });
  assert.equal(next.output, 'next\n');
  assert.match((await s.call('read', { execution_id: big.execution_id })).error,
    /was removed \d+ s ago to keep the output of all executions under AGENTTY_MAX_TOTAL_SPOOL_BYTES/);

  // A running execution holding 1.2 MB: new executions are refused until it ends.
  const live = await s.call('execute', {
    command: 'head -c 1200000 /dev/zero | tr "\\0" y; echo; echo HELD; exec sleep 60',
    cwd: work, side_effects: ['NONE'], yield_ms: 0, max_output_bytes: 100,
  });
  const held = await s.call('wait', { execution_id: live.execution_id, until: 'match', pattern: 'HELD', timeout_ms: 30000 });
  assert.equal(held.wait_result, 'matched');
  const error = refused(await s.call('execute', { command: 'echo more', cwd: work, side_effects: ['NONE'] }));
  assert.match(error, /AGENTTY_MAX_TOTAL_SPOOL_BYTES/);
  assert.match(error, /`stop`/);
  assert.match(error, /`cleanup`/);
  assert.match(refused(await s.call('open', { cwd: work })), /AGENTTY_MAX_TOTAL_SPOOL_BYTES/);
  await s.call('stop', { execution_id: live.execution_id });
  await s.call('wait', { execution_id: live.execution_id, until: 'exit', timeout_ms: 20000 });
  assert.equal((await s.call('execute', { command: 'echo more', cwd: work, side_effects: ['NONE'] })).output, 'more\n');
});

test('redaction: snapshot and env-overlay secrets printed in pieces never come back whole, in pages, screen, explore, audit or recording; every call is audited', async (t) => {
  const secret = `tok-${randomBytes(14).toString('hex')}`;        // 32 chars, from the server's environment
  const overlay = `ovl-${randomBytes(14).toString('hex')}`;       // passed in execute's env
  const stored = `npm-${randomBytes(14).toString('hex')}`;        // overlay of one execution, printed by another
  const s = await server(t, { AGENTTY_REDACT_ENV_REGEX: '(?i)(token|password|secret)$', API_TOKEN: secret });
  const pieces = (value) => [value.slice(0, 16), value.slice(16)];
  const forbidden = [secret, overlay, stored, ...pieces(secret), ...pieces(overlay), ...pieces(stored)];
  const assertClean = (text, where) => {
    for (const piece of forbidden) assert.ok(!text.includes(piece), `${where} contains ${piece}`);
  };

  // A running execution started before the overlay is registered picks it up.
  const cat = await s.call('execute', { command: 'cat', cwd: work, side_effects: ['NONE'], yield_ms: 0 });

  // Each secret printed as two separate writes, 150 times, between fillers of
  // varying length, so some occurrences straddle PTY reads and pages.
  const script = [
    'for i in $(seq 1 150); do',
    '  printf "%0$((i * 131))d" 0',
    '  printf %s "${API_TOKEN:0:16}"; printf "%s\\n" "${API_TOKEN:16}"',
    '  printf %s "${DEPLOY_PASSWORD:0:16}"; printf "%s\\n" "${DEPLOY_PASSWORD:16}"',
    'done',
    `printf "%s\\n" "$NPM_TOKEN" > ${path.join(work, 'stored.txt')}`,
  ].join('\n');
  const run = await s.call('execute', {
    script, cwd: work, side_effects: ['MODIFIES_WORKSPACE_FILES'],
    env: { DEPLOY_PASSWORD: overlay, NPM_TOKEN: stored }, max_output_bytes: 1000,
  });
  assert.equal(run.status, 'completed', JSON.stringify(run));
  assertClean(run.output, 'execute output');

  for (const format of ['raw', 'text']) {
    let all = '';
    let seq = 1;
    for (;;) {
      const page = await s.call('read', { execution_id: run.execution_id, since_seq: seq, max_output_bytes: 4096, format });
      assertClean(page.output, `${format} page at ${seq}`);
      all += page.output;
      if (page.next_seq >= page.latest_seq) break;
      seq = page.next_seq;
    }
    assertClean(all, `all ${format} pages`);
    assert.equal(all.split('[REDACTED:API_TOKEN]').length - 1, 150, format);
    assert.equal(all.split('[REDACTED:DEPLOY_PASSWORD]').length - 1, 150, format);
    if (format === 'raw') {
      // Tiny pages across the first occurrence.
      const at = all.indexOf('[REDACTED:API_TOKEN]') + 1;
      let tiny = '';
      for (let q = at - 20; q < at + 60;) {
        const page = await s.call('read', { execution_id: run.execution_id, since_seq: q, max_output_bytes: 7, format });
        assertClean(page.output, 'tiny page');
        tiny += page.output;
        q = page.next_seq;
      }
      assert.ok(tiny.includes('[REDACTED:API_TOKEN]'), tiny);
    }
  }
  assertClean(JSON.stringify(await s.call('screen', { execution_id: run.execution_id })), 'screen');
  const grep = await s.call('explore', { execution_id: run.execution_id, op: 'grep', pattern: pieces(secret)[0] });
  assert.deepEqual(grep.matches, []);
  const grepMarker = await s.call('explore', { execution_id: run.execution_id, op: 'grep', pattern: 'REDACTED:DEPLOY_PASSWORD', limit: 3 });
  assert.equal(grepMarker.matches.length, 3);
  assertClean(JSON.stringify(grepMarker), 'explore grep');
  assertClean(JSON.stringify(await s.call('explore', { execution_id: run.execution_id, op: 'read', line_offset: -20 })), 'explore read');

  // Another execution, without the overlay, prints the stored value: masked too.
  const other = await s.call('execute', { command: 'cat stored.txt', cwd: work, side_effects: ['NONE'] });
  assert.equal(other.output, '[REDACTED:NPM_TOKEN]\n');
  // Typed into the execution that started first: its echo and cat's copy are masked.
  const typed = await s.call('write', { execution_id: cat.execution_id, input: `x${overlay}y`, newline: true, yield_ms: 2000 });
  assertClean(typed.output, 'write output');
  const waited = await s.call('wait', { execution_id: cat.execution_id, until: 'match', pattern: 'y\\r?\\n.*y', since_seq: 1, timeout_ms: 10000 });
  assertClean(JSON.stringify(waited), 'wait');
  assert.match(waited.output, /x\[REDACTED:DEPLOY_PASSWORD\]y/);
  await s.call('write', { execution_id: cat.execution_id, eof: true });
  await s.call('wait', { execution_id: cat.execution_id, until: 'exit', timeout_ms: 10000 });
  // A command line with a literal secret is masked in the audit record.
  const literal = await s.call('execute', { command: `printf %s '${secret}' | wc -c`, cwd: work, side_effects: ['NONE'] });
  assert.equal(literal.output.trim(), '32');

  const recordings = path.join(s.stateDir, 'recordings');
  for (const id of [run.execution_id, cat.execution_id, other.execution_id]) {
    const cast = readFileSync(path.join(recordings, `${id}.cast`), 'utf8');
    assertClean(cast, `recording ${id}`);
  }
  assert.ok(readFileSync(path.join(recordings, `${run.execution_id}.cast`), 'utf8').includes('[REDACTED:API_TOKEN]'));
  assert.match(readFileSync(path.join(recordings, `${cat.execution_id}.cast`), 'utf8'), /"i",\s*"x\[REDACTED:DEPLOY_PASSWORD\]y/);

  const auditText = readFileSync(path.join(s.stateDir, 'audit.jsonl'), 'utf8');
  assertClean(auditText, 'audit log');
  const records = auditRecords(s.stateDir);
  assert.ok(records.some((r) => r.tool === 'execute' && r.command === "printf %s '[REDACTED:API_TOKEN]' | wc -c"));
  // One record per tool call made here, by tool name.
  const audited = {};
  for (const r of records) if (r.kind === 'tool') audited[r.tool] = (audited[r.tool] || 0) + 1;
  assert.deepEqual(audited, s.counts);
  for (const r of records) assert.match(r.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const exec = records.find((r) => r.tool === 'execute' && r.execution_id === run.execution_id);
  assert.deepEqual(exec.side_effects, ['MODIFIES_WORKSPACE_FILES']);
  assert.equal(exec.status, 'completed');
  assert.equal(exec.exit_code, 0);
});

test('a recording played back by asciinema cat equals the output', async (t) => {
  const s = await server(t);
  const r = await s.call('execute', {
    command: "printf 'alpha\\n\\033[1;31mred\\033[0m beta\\n'; printf 'caf\\303\\251 \\342\\234\\223\\n'; seq 1 2000",
    cwd: work, side_effects: ['NONE'],
  });
  assert.equal(r.status, 'completed');
  const raw = await s.call('read', { execution_id: r.execution_id, since_seq: 1, format: 'raw', max_output_bytes: 1 << 20 });
  assert.equal(raw.capped, false);
  const cast = path.join(s.stateDir, 'recordings', `${r.execution_id}.cast`);
  // asciinema 2.2 `cat` opens /dev/tty: give it one with script(1), and its
  // stdout a file so the bytes do not pass through that terminal.
  const out = path.join(s.stateDir, 'played.txt');
  const played = spawnSync('script', ['-qec', `asciinema cat '${cast}' > '${out}'`, '/dev/null'], {
    stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 30000,
  });
  assert.equal(played.status, 0, played.stderr + played.stdout);
  const text = readFileSync(out, 'utf8');
  assert.equal(text, raw.output);
  assert.ok(text.includes('café ✓\r\n'));
});

test('recordings are bounded by AGENTTY_MAX_RECORDINGS and AGENTTY_MAX_RECORDING_BYTES, oldest first', async (t) => {
  const s = await server(t, { AGENTTY_MAX_RECORDINGS: '3', AGENTTY_MAX_RECORDING_BYTES: '200K' });
  const dir = path.join(s.stateDir, 'recordings');
  const ids = [];
  for (let i = 0; i < 6; i++) {
    ids.push((await s.call('execute', { command: `echo run-${i}`, cwd: work, side_effects: ['NONE'] })).execution_id);
  }
  assert.deepEqual(readdirSync(dir).sort(), ids.slice(3).map((id) => `${id}.cast`).sort());
  // One recording is cut at the byte budget; the next start makes room for itself.
  const big = await s.call('execute', { command: 'seq 1 200000', cwd: work, side_effects: ['NONE'], max_output_bytes: 100 });
  const bigSize = statSync(path.join(dir, `${big.execution_id}.cast`)).size;
  assert.ok(bigSize <= 200 * 1024 + 512, `recording of ${bigSize} bytes`);
  await s.call('execute', { command: 'echo after', cwd: work, side_effects: ['NONE'] });
  const total = readdirSync(dir).reduce((sum, f) => sum + statSync(path.join(dir, f)).size, 0);
  assert.ok(readdirSync(dir).length <= 3);
  assert.ok(total <= 200 * 1024 + 512, `recordings hold ${total} bytes`);
});

test('explore on a 100 MB spool: results capped with a hint, response size bounded, fast enough', async (t) => {
  const s = await server(t, { AGENTTY_MAX_SPOOL_BYTES: '256M', AGENTTY_MAX_RECORDING_BYTES: '1M' });
  const lines = 4000000;  // "line N lorem ipsum\r\n": ~26 bytes each, ~104 MB
  const r = await s.call('execute', {
    command: `seq -f 'line %.0f lorem ipsum' 1 ${lines}`, cwd: work, side_effects: ['NONE'],
    yield_ms: 55000, timeout_ms: 600000, max_output_bytes: 100,
  });
  if (r.status !== 'completed') {
    const w = await s.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 55000 });
    assert.equal(w.wait_result, 'exited');
  }
  const id = r.execution_id;
  const cursor = await s.call('read', { execution_id: id, max_output_bytes: 100 });
  const timed = async (args) => {
    const started = Date.now();
    const result = await s.call('explore', { execution_id: id, ...args });
    return { result, ms: Date.now() - started, bytes: JSON.stringify(result.raw).length };
  };
  const stat = await timed({ op: 'stat' });
  assert.equal(stat.result.line_count, lines);
  assert.ok(stat.result.raw_bytes >= 100e6, `raw_bytes ${stat.result.raw_bytes}`);
  assert.equal(stat.result.evicted, false);

  const many = await timed({ op: 'grep', pattern: 'lorem', before: 2, after: 2, limit: 50 });
  assert.equal(many.result.matches.length, 50);
  assert.equal(many.result.capped, true);
  assert.match(many.result.hint, /start_line=\d+/);
  assert.ok(many.bytes < 64 * 1024, `grep response of ${many.bytes} bytes`);

  const bounded = await timed({ op: 'grep', pattern: 'lorem', after: 100, limit: 10000, max_bytes: 4096 });
  assert.equal(bounded.result.capped, true);
  assert.ok(bounded.bytes < 4096 * 4 + 8192, `byte-capped grep response of ${bounded.bytes} bytes`);

  const rare = await timed({ op: 'grep', pattern: `^line ${lines - 1} ` });
  assert.equal(rare.result.matches.length, 1);
  assert.equal(rare.result.matches[0].line, lines - 1);
  assert.ok(rare.ms < 30000, `full grep took ${rare.ms} ms`);
  t.diagnostic(`stat ${stat.ms} ms, grep capped ${many.ms} ms, full-scan grep ${rare.ms} ms`);

  const tail = await timed({ op: 'read', line_offset: -2, limit: 10 });
  assert.deepEqual(tail.result.lines.map((l) => l.text), [`line ${lines - 1} lorem ipsum`, `line ${lines} lorem ipsum`]);
  const capped = await timed({ op: 'read', line_offset: 1000, limit: 10000, max_bytes: 2048 });
  assert.equal(capped.result.capped, true);
  assert.ok(capped.bytes < 2048 * 4 + 4096, `read response of ${capped.bytes} bytes`);
  // explore never moves the cursor: the next cursorless read continues where the last one ended.
  const next = await s.call('read', { execution_id: id, max_output_bytes: 100 });
  assert.equal(next.start_seq, cursor.next_seq);
});

test('command rules for write: lines submitted at a shell prompt or to a nested shell are checked; answers to programs are not', async (t) => {
  const s = await server(t, { AGENTTY_DENY_COMMAND_REGEX: String.raw`\brm\s+-rf\b` });
  const victim = path.join(work, 'write-victim');
  mkdirSync(victim, { recursive: true });
  const session = await s.call('open', { cwd: work });
  assert.equal(session.prompt_ready, true);
  const id = session.execution_id;
  const refusedWrite = (r, line) => {
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.ok, false);
    assert.match(r.error, /nothing was written/);
    assert.match(r.error, /deny pattern AGENTTY_DENY_COMMAND_REGEX/);
    assert.equal(r.refused_line, line);
  };
  // newline:true, CR/LF inside input, and Enter pressed in a later write.
  refusedWrite(await s.call('write', { execution_id: id, input: `rm -rf ${victim}`, newline: true }), `rm -rf ${victim}`);
  refusedWrite(await s.call('write', { execution_id: id, input: `echo one\nrm -rf ${victim}\n` }), `rm -rf ${victim}`);
  // A bracketed paste runs its lines at the next Enter: a line ended inside
  // the paste is checked at once, the open last one at Enter.
  refusedWrite(await s.call('write', { execution_id: id, input: `rm -rf ${victim}\necho two`, paste: true }), `rm -rf ${victim}`);
  const pasted = await s.call('write', { execution_id: id, input: `echo one\nrm -rf ${victim}`, paste: true });
  assert.equal(pasted.bracketed_paste, true, JSON.stringify(pasted));
  refusedWrite(await s.call('write', { execution_id: id, keys: ['enter'] }), `rm -rf ${victim}`);
  assert.equal((await s.call('write', { execution_id: id, keys: ['ctrl-c'] })).ok, true);
  assert.equal((await s.call('write', { execution_id: id, input: `rm -rf ${victim}` })).ok, true);
  refusedWrite(await s.call('write', { execution_id: id, keys: ['enter'] }), `rm -rf ${victim}`);
  assert.equal((await s.call('write', { execution_id: id, keys: ['ctrl-u'] })).ok, true);
  // A line continued with a backslash is checked joined, as bash runs it.
  assert.equal((await s.call('write', { execution_id: id, input: 'rm -r\\', newline: true })).ok, true);
  refusedWrite(await s.call('write', { execution_id: id, input: `f ${victim}`, newline: true }), `rm -rf ${victim}`);
  assert.equal((await s.call('write', { execution_id: id, keys: ['ctrl-c'] })).ok, true);
  assert.equal(existsSync(victim), true);
  const fine = await s.call('write', { execution_id: id, input: 'echo typed-ok', newline: true });
  assert.equal(fine.ok, true, JSON.stringify(fine));
  assert.equal((await s.call('wait', { execution_id: id, until: 'match', pattern: '^typed-ok', since_seq: 1, timeout_ms: 10000 })).wait_result, 'matched');

  // A `read` prompt (the shell's own builtin, while a command runs) takes it as an answer.
  await s.call('write', { execution_id: id, input: 'read -p "answer? " v; echo "got <$v>"', newline: true });
  // At the start of a line: the prompt read prints, not the echo of the line
  // typed (matched at once, the answer would go to the shell before it ran
  // the line, and be checked as a command).
  assert.equal((await s.call('wait', { execution_id: id, until: 'match', pattern: '^answer\\? ', since_seq: 1, timeout_ms: 10000 })).wait_result, 'matched');
  assert.equal((await s.call('write', { execution_id: id, input: `rm -rf ${victim}`, newline: true })).ok, true);
  assert.equal((await s.call('wait', { execution_id: id, until: 'match', pattern: 'got <rm -rf', since_seq: 1, timeout_ms: 10000 })).wait_result, 'matched');
  // So does a python REPL.
  await s.call('write', { execution_id: id, input: 'python3 -q', newline: true });
  assert.equal((await s.call('wait', { execution_id: id, until: 'match', pattern: '>>> ', since_seq: 1, timeout_ms: 10000 })).wait_result, 'matched');
  const py = await s.call('write', { execution_id: id, input: `"rm -rf " + "repl"`, newline: true });
  assert.equal(py.ok, true, JSON.stringify(py));
  assert.equal((await s.call('wait', { execution_id: id, until: 'match', pattern: "'rm -rf repl'", since_seq: 1, timeout_ms: 10000 })).wait_result, 'matched');
  await s.call('write', { execution_id: id, eof: true });
  // write's reply settles 150 ms after python's newline; a loaded machine's
  // python can still be exiting then, and execute would find it running.
  const exited = await s.call('wait', { execution_id: id, until: 'exit', timeout_ms: 10000 });
  assert.equal(exited.wait_result, 'exited', JSON.stringify(exited));
  const back = await s.call('execute', { session: id, command: 'echo back', side_effects: ['NONE'] });
  assert.equal(back.output, 'back\n', JSON.stringify(back));
  // A nested interactive shell (no prompt marks) reads commands: checked.
  await s.call('write', { execution_id: id, input: 'bash --norc', newline: true });
  assert.equal((await s.call('wait', { execution_id: id, until: 'match', pattern: 'bash-[0-9.]+[$#] $', since_seq: 1, timeout_ms: 10000 })).wait_result, 'matched');
  refusedWrite(await s.call('write', { execution_id: id, input: `rm -rf ${victim}`, newline: true }), `rm -rf ${victim}`);
  await s.call('write', { execution_id: id, input: 'exit', newline: true });
  assert.equal(existsSync(victim), true);
  await s.call('close', { execution_id: id });

  // The refusals are audited like other refusals.
  const writes = auditRecords(s.stateDir).filter((r) => r.tool === 'write' && r.error);
  assert.equal(writes.length, 7);
  for (const r of writes) assert.match(r.error, /Input refused by policy; nothing was written/);

  // An allow list: commands must match it, answers need not.
  const allow = await server(t, { AGENTTY_ALLOW_COMMAND_REGEX: String.raw`^(\S*bash\b|echo |read )` });
  const open = await allow.call('open', { cwd: work });
  assert.equal(open.prompt_ready, true, JSON.stringify(open));
  const notAllowed = await allow.call('write', { execution_id: open.execution_id, input: 'ls', newline: true });
  assert.match(notAllowed.error, /does not match the allow pattern AGENTTY_ALLOW_COMMAND_REGEX/);
  await allow.call('write', { execution_id: open.execution_id, input: 'read -p "name? " n; echo "hi $n"', newline: true });
  assert.equal((await allow.call('wait', { execution_id: open.execution_id, until: 'match', pattern: '^name\\? ', since_seq: 1, timeout_ms: 10000 })).wait_result, 'matched');
  assert.equal((await allow.call('write', { execution_id: open.execution_id, input: 'anything at all', newline: true })).ok, true);
  assert.equal((await allow.call('wait', { execution_id: open.execution_id, until: 'match', pattern: 'hi anything at all', since_seq: 1, timeout_ms: 10000 })).wait_result, 'matched');
  await allow.call('close', { execution_id: open.execution_id });
});

test('total spool budget while output flows: the writers keep running, their spools stop growing, reads say so', async (t) => {
  const s = await server(t, { AGENTTY_MAX_TOTAL_SPOOL_BYTES: '256K' });
  const print = 'seq 1 400000; echo last-line';  // ~3 MB each
  const first = await s.call('execute', { command: print, cwd: work, side_effects: ['NONE'], yield_ms: 0, max_output_bytes: 100 });
  const second = await s.call('execute', { command: print, cwd: work, side_effects: ['NONE'], yield_ms: 0, max_output_bytes: 100 });
  for (const run of [first, second]) {
    const done = await s.call('wait', { execution_id: run.execution_id, until: 'exit', timeout_ms: 50000, max_output_bytes: 100 });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.exit_code, 0);
    const all = await s.call('read', { execution_id: run.execution_id, since_seq: 1, max_output_bytes: 1000 });
    assert.equal(all.evicted, true);
    assert.match(all.spool_limited, /AGENTTY_MAX_TOTAL_SPOOL_BYTES/);
    assert.match(all.hint, /total budget/);
    // What is left is the newest part: the frozen spool or, if larger, the 1 MiB RAM ring.
    assert.ok(all.latest_seq - all.start_seq <= 1.3e6, JSON.stringify([all.start_seq, all.latest_seq]));
    // The size it states is what it can hold (at least the RAM ring), not a count that grows.
    const stated = Number(all.spool_limited.match(/keeps only its newest (\d+) bytes/)[1]);
    assert.ok(stated >= 1 << 20 && all.latest_seq - all.start_seq <= stated, all.spool_limited);
    assert.equal((await s.call('read', { execution_id: run.execution_id, tail_lines: 2 })).output, '400000\nlast-line\n');
  }
  const ps = await s.call('ps', { include_completed: true });
  assert.equal(ps.executions.length, 2);
  // A new start drops the ended records to make room.
  const more = await s.call('execute', { command: 'echo more', cwd: work, side_effects: ['NONE'] });
  assert.equal(more.output, 'more\n');  // ended records are dropped to make room
});

test('redaction: a secret split by escape sequences (colours, titles, grep --color) never shows whole in any text the agent gets', async (t) => {
  const secret = `tok-${randomBytes(14).toString('hex')}`;
  const s = await server(t, { AGENTTY_REDACT_ENV_REGEX: '(?i)token$', API_TOKEN: secret });
  const stripEscapes = (raw) => raw.replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]/g, '');
  const script = [
    'printf "a %s\\033[1m%s\\033[0m b\\n" "${API_TOKEN:0:10}" "${API_TOKEN:10}"',
    'printf "c %s\\033]0;title\\007%s\\033[31m%s d\\n" "${API_TOKEN:0:3}" "${API_TOKEN:3:20}" "${API_TOKEN:23}"',
    'echo "$API_TOKEN" | grep --color=always "${API_TOKEN:0:6}"',
    // Many occurrences split at every position, so some straddle PTY reads and pages.
    'for i in $(seq 1 31); do printf "%0$((i * 97))d %s\\033[7m%s\\033[m\\n" 0 "${API_TOKEN:0:$i}" "${API_TOKEN:$i}"; done',
  ].join('\n');
  const run = await s.call('execute', { script, cwd: work, side_effects: ['NONE'], max_output_bytes: 100000 });
  assert.equal(run.status, 'completed', JSON.stringify(run));
  assert.ok(!run.output.includes(secret), run.output);
  assert.match(run.output, /^a \[REDACTED:API_TOKEN\] b$/m);
  assert.match(run.output, /^c \[REDACTED:API_TOKEN\] d$/m);
  assert.equal(run.output.split('[REDACTED:API_TOKEN]').length - 1, 34, run.output);
  for (const format of ['text', 'raw']) {
    for (const size of [4096, 61]) {
      let all = '';
      let seq = 1;
      for (;;) {
        const page = await s.call('read', { execution_id: run.execution_id, since_seq: seq, max_output_bytes: size, format });
        all += page.output;
        if (page.next_seq >= page.latest_seq) break;
        seq = page.next_seq;
      }
      const shown = format === 'raw' ? stripEscapes(all) : all;
      assert.ok(!shown.includes(secret), `${format} pages of ${size}`);
      assert.equal(shown.split('[REDACTED:API_TOKEN]').length - 1, 34, `${format} pages of ${size}`);
    }
  }
  assert.ok(!JSON.stringify(await s.call('screen', { execution_id: run.execution_id, scrollback_lines: 100 })).includes(secret));
  const cast = readFileSync(path.join(s.stateDir, 'recordings', `${run.execution_id}.cast`), 'utf8');
  const events = cast.split('\n').slice(1).filter((l) => l.startsWith('[')).map((l) => JSON.parse(l));
  const played = stripEscapes(events.filter((e) => e[1] === 'o').map((e) => e[2]).join(''));
  assert.ok(played.includes('[REDACTED:API_TOKEN]') && !played.includes(secret));
});
