// End-to-end: agentty where the machine runs out of something (audit 34): a
// full disk under its recordings, no processes left to start (a pids
// cgroup), no file descriptors left (ulimit -n), its own working
// directory removed, an empty --state-dir. Each says what ran out and what
// to do, loses nothing it claims to keep, and the server serves again once
// the resource is back.
// (A full spool: audit20_lifecycle; the web server out of fds:
// audit12_security; shutdown by signals and EOF: audit7_hygiene.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, rmdirSync, unlinkSync, writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { agenttyBin, agenttyWithStderr, tempDirForRun } from './lib/mcp-client.mjs';
import { eventually, parseUrl } from './lib/web-helpers.mjs';

const isRoot = process.getuid?.() === 0;

// ---- a full disk under the recordings ----

function smallFilesystem(t, size) {
  const dir = tempDirForRun('agentty-full-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  t.after(() => {
    spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

// Fills `dir`'s filesystem up to its last `leaveKiB` KiB; returns the file.
let fillers = 0;
function fill(dir, leaveKiB = 0) {
  const file = path.join(dir, `filler${fillers++}`);
  const freeKiB = Number(execFileSync('df', ['-k', '--output=avail', dir], { encoding: 'utf8' }).split('\n')[1]);
  const count = Math.max(0, Math.floor((freeKiB - leaveKiB) / 4));
  spawnSync('dd', ['if=/dev/zero', `of=${file}`, 'bs=4k', `count=${leaveKiB ? count : 1e9}`], { stdio: 'ignore' });
  return file;
}

function castEvents(file) {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

// The recording stopped mid-event without a word: the file ended in half a
// JSON line, no marker, nothing logged, so a replay showed it as the whole
// session. Now the half line is cut away and a marker says why.
test('a recording the disk fills up ends on a whole event with a marker saying why, and the log says it', { skip: !isRoot && 'mounts a tmpfs: root only' }, async (t) => {
  const mount = smallFilesystem(t, '2m');
  const stateDir = path.join(mount, 'state');
  // The default 1 MiB RAM ring holds all the output: the recording alone writes.
  const agent = await agenttyWithStderr(t, { stateDir });
  assert.equal((await agent.run({ command: 'echo warm' })).status, 'completed');
  fill(mount, 256);
  const r = await agent.run({ command: 'seq 1 100000' });  // ~750 KB of asciicast
  assert.equal(r.status, 'completed', r.error);
  assert.equal(r.evicted, false, r.hint);
  const cast = path.join(stateDir, 'recordings', `${r.execution_id}.cast`);
  const events = castEvents(cast);  // throws on a line cut short
  const last = events.at(-1);
  assert.equal(last[1], 'm', JSON.stringify(last).slice(0, 200));
  assert.match(last[2], /^recording stopped: cannot write it \(.*No space left on device/);
  assert.match(agent.stderr(), new RegExp(`recording ${cast} stopped at \\d+ bytes: .*No space left on device.*Free space`));
  // The output itself was kept whole, in memory.
  const tail = await agent.call('read', { execution_id: r.execution_id, tail_lines: 1 });
  assert.equal(tail.output, '100000\n');
});

// Every execute on a full disk logged its own "no recording for" warning.
test('while recordings cannot be made, that is logged once, and again when they resume', { skip: !isRoot && 'mounts a tmpfs: root only' }, async (t) => {
  const mount = smallFilesystem(t, '1m');
  const agent = await agenttyWithStderr(t, { stateDir: path.join(mount, 'state') });
  assert.equal((await agent.run({ command: 'echo warm' })).status, 'completed');
  const filler = fill(mount);
  for (let i = 0; i < 4; i++) assert.equal((await agent.run({ command: `echo run${i}` })).output, `run${i}\n`);
  const warnings = agent.stderr().split('\n').filter((line) => /no recording for/.test(line));
  assert.equal(warnings.length, 1, agent.stderr());
  assert.match(warnings[0], /No space left on device.*later executions go unrecorded too/);
  unlinkSync(filler);
  const resumed = await agent.run({ command: 'echo back' });
  assert.match(agent.stderr(), new RegExp(`recordings resume with ${resumed.execution_id}; the 4 executions before it were not recorded`));
  assert.ok(existsSync(path.join(mount, 'state', 'recordings', `${resumed.execution_id}.cast`)));
});

// ---- no processes left ----

// A pids cgroup to put agentty in: cgroup v1's pids hierarchy, or v2 with
// the pids controller on. Undefined where neither can be made.
function pidsCgroup() {
  if (!isRoot) return undefined;
  for (const root of ['/sys/fs/cgroup/pids', '/sys/fs/cgroup']) {
    if (!existsSync(path.join(root, 'cgroup.procs'))) continue;
    if (root === '/sys/fs/cgroup' && !/\bpids\b/.test(readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8'))) continue;
    try {
      const dir = mkdtempSync(path.join(root, 'agentty-e2e-'));
      if (existsSync(path.join(dir, 'pids.max'))) return dir;
      rmdirSync(dir);
    } catch {
      // not writable here
    }
  }
  return undefined;
}

// Failures to fork said "cannot start agentty-supervisor: Resource
// temporarily unavailable (... `make build` builds it beside the agentty
// binary)": the fix it named was the wrong one.
test('out of processes, execute, script and open say the process limit was reached, and work again once it is raised', async (t) => {
  const cgroup = pidsCgroup();
  if (!cgroup) {
    t.skip('needs root and a pids cgroup (v1 pids hierarchy or v2 with pids in subtree_control)');
    return;
  }
  const limit = (value) => writeFileSync(path.join(cgroup, 'pids.max'), value);
  let agent;
  t.after(async () => {
    limit('max');
    await agent?.client.close().catch(() => {});
    // rmdir is refused while anything of agentty's is still in it.
    await eventually(() => readFileSync(path.join(cgroup, 'cgroup.procs'), 'utf8').trim() === '',
      { what: "agentty's processes to end" }).catch(() => {});
    rmdirSync(cgroup);
  });
  agent = await agenttyWithStderr(t, {
    runAs: ['sh', '-c', `echo $$ > ${cgroup}/cgroup.procs && exec "$0" "$@"`],
  });
  assert.equal((await agent.run({ command: 'echo warm' })).output, 'warm\n');
  limit('1');  // below what runs already: nothing new forks
  const processLimit = /limit on processes was reached \(ulimit -u.*pids\.max of agentty's cgroup\)/;
  // A spare supervisor made ahead may still start one command.
  let refused;
  for (let i = 0; i < 3 && !refused; i++) {
    const r = await agent.run({ command: 'echo one' });
    if (r.isError) refused = r;
  }
  assert.equal(refused?.status, 'failed_to_start', JSON.stringify(refused));
  assert.match(refused.error, processLimit);
  assert.doesNotMatch(refused.error, /make build/);
  const script = await agent.run({ script: 'echo two' });
  assert.equal(script.status, 'failed_to_start');
  assert.match(script.error, processLimit);
  const session = await agent.call('open', {});
  assert.equal(session.status, 'failed_to_start');
  assert.match(session.error, processLimit);
  limit('max');
  assert.equal((await agent.run({ command: 'echo three' })).output, 'three\n');
  assert.equal((await agent.run({ script: 'echo four' })).output, 'four\n');
});

// ---- no file descriptors left ----

// A PTY that could not be opened said "open pty slave: Bad file
// descriptor" (a dup of the -1 the open returned), and the spare maker,
// dropped for agentty's own lack of fds, was never used again.
test('out of file descriptors, execute and open say so and how to fix it, and work again once programs end', async (t) => {
  const agent = await agenttyWithStderr(t, {
    runAs: ['sh', '-c', 'ulimit -n 64 && exec "$0" "$@"'],
    env: { AGENTTY_MAX_EXECUTIONS: '200' },
  });
  // Programs that keep their terminal open: each holds fds in agentty.
  const running = [];
  t.after(() => Promise.all(running.map((id) => agent.call('stop', { execution_id: id, signal: 'SIGKILL' }))));
  let refused;
  for (let i = 0; i < 60 && !refused; i++) {
    const r = await agent.run({ command: 'sleep 600', yield_ms: 0 });
    if (r.isError) refused = r;
    else running.push(r.execution_id);
  }
  assert.ok(refused, `all ${running.length} executions started under ulimit -n 64`);
  const outOfFds = /Too many open files \(errno 24\); agentty has as many files open as its limit allows \(ulimit -n, now 64\): close sessions/;
  assert.equal(refused.status, 'failed_to_start');
  assert.match(refused.error, outOfFds);
  assert.doesNotMatch(refused.error, /Bad file descriptor/);
  const session = await agent.call('open', {});
  assert.equal(session.status, 'failed_to_start');
  assert.match(session.error, outOfFds);
  for (const id of running.splice(0)) {
    assert.equal((await agent.call('stop', { execution_id: id, signal: 'SIGKILL' })).isError, false);
  }
  const again = await agent.call('open', {});
  assert.equal(again.isError, false, again.error);
  assert.equal(again.prompt_ready, true);
  assert.doesNotMatch(agent.stderr(), /spare maker failed/);
});

// An ended record's spool is opened per read. Out of fds, explore cached an
// empty text (line_count 0, no match) and kept answering so once fds were
// back; read returned an empty page as if there were no output.
test('out of file descriptors, read and explore of a spooled output say they cannot read it, and read it all once fds are back', async (t) => {
  const agent = await agenttyWithStderr(t, {
    runAs: ['sh', '-c', 'ulimit -n 64 && exec "$0" "$@"'],
    args: ['--ram-bytes', '65536'],  // the output lives in its spool file
  });
  const big = await agent.run({ command: 'seq 1 100000' });
  assert.equal(big.status, 'completed', big.error);
  // Idle web connections take every fd left (the server then pauses accepting).
  const { port } = parseUrl(big.terminal_url);
  const sockets = [];
  t.after(() => sockets.forEach((s) => s.destroy()));
  await Promise.all(Array.from({ length: 80 }, () => new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => { socket.write('G'); resolve(); });
    socket.on('error', () => resolve());
    sockets.push(socket);
  })));
  await eventually(() => /Too many open files/.test(agent.stderr()), { timeout: 30000, what: 'agentty to run out of fds' });
  const outOfFds = /cannot read the spool file .*Too many open files \(errno 24\); agentty has as many files open as its limit allows/;
  const stat = await agent.call('explore', { execution_id: big.execution_id, op: 'stat' });
  assert.equal(stat.isError, true, JSON.stringify(stat));
  assert.match(stat.error, outOfFds);
  const grep = await agent.call('explore', { execution_id: big.execution_id, op: 'grep', pattern: '^77777$' });
  assert.equal(grep.isError, true, JSON.stringify(grep));
  const read = await agent.call('read', { execution_id: big.execution_id, since_seq: 1, max_output_bytes: 100 });
  assert.equal(read.output, '');
  assert.match(read.read_error ?? '', outOfFds, JSON.stringify(read));
  assert.equal(read.next_seq, 1);
  // A search that could not read is not a search that found nothing.
  const waited = await agent.call('wait', { execution_id: big.execution_id, pattern: '^99999$', since_seq: 1, timeout_ms: 1000 });
  assert.equal(waited.isError, true, JSON.stringify(waited));
  assert.match(waited.error, outOfFds);
  sockets.forEach((s) => s.destroy());
  const again = await eventually(async () => {
    const r = await agent.call('explore', { execution_id: big.execution_id, op: 'stat' });
    return r.isError ? null : r;
  }, { timeout: 30000, what: 'explore to read the spool again' });
  assert.equal(again.line_count, 100000);
  const found = await agent.call('explore', { execution_id: big.execution_id, op: 'grep', pattern: '^77777$' });
  assert.equal(found.matches[0]?.line, 77777, JSON.stringify(found));
  const head = await agent.call('read', { execution_id: big.execution_id, since_seq: 1, max_output_bytes: 9 });
  assert.equal(head.output, '1\n2\n3\n');
  const matched = await agent.call('wait', { execution_id: big.execution_id, pattern: '^99999$', since_seq: 1, timeout_ms: 1000 });
  assert.equal(matched.wait_result, 'matched', JSON.stringify(matched));
});

// ---- the server's own directory removed ----

test("with agentty's working directory removed, a call without cwd says so and how to go on", async (t) => {
  const dir = tempDirForRun('agentty-cwd-');
  const home = path.join(dir, 'project');
  mkdirSync(home);
  const agent = await agenttyWithStderr(t, { cwd: home });
  rmSync(home, { recursive: true });
  for (const args of [{ command: 'pwd' }, { command: 'pwd', cwd: 'sub' }]) {
    const r = await agent.run(args);
    assert.equal(r.status, 'failed_to_start');
    assert.match(r.error, new RegExp(`the server's working directory ${home} was removed after agentty started.*Pass an absolute cwd`));
    assert.doesNotMatch(r.error, /create it first/);
  }
  const session = await agent.call('open', {});
  assert.match(session.error, /was removed after agentty started/);
  assert.equal((await agent.run({ command: 'pwd', cwd: dir })).output, `${dir}\n`);
  assert.deepEqual(readdirSync(dir), []);
});

// std::filesystem::absolute("") threw out of main: agentty aborted (SIGABRT).
test('an empty --state-dir is refused naming the option, not a crash', () => {
  for (const command of ['mcp', 'serve']) {
    const run = spawnSync(agenttyBin, [command, '--no-web', '--state-dir', ''], { input: '', encoding: 'utf8', timeout: 20000 });
    assert.equal(run.signal, null, run.stderr);
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /--state-dir: must name a directory \(made if missing\); leave the option out for the default/);
  }
});
