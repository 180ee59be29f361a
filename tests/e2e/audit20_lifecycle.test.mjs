// End-to-end: agentty as an operator runs it for days (audit 20): many
// executions then cleanup leave its fds, threads, files and memory where they
// were; the state directory on a full filesystem, deleted while the server
// runs, or owned by someone else; the default state directory without HOME.
// (Shutdown by EOF and each signal: audit7_hygiene; files of a killed server:
// audit8_hygiene; umask: audit12_security.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { agenttyBin, agenttyWithStderr, tempDirForRun } from './lib/mcp-client.mjs';
import { eventually } from './lib/web-helpers.mjs';
import { holdsPtyMaster } from './lib/proc-stats.mjs';

const isRoot = process.getuid?.() === 0;

function listDir(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// ---- many executions ----

function footprint(agent) {
  const pid = agent.transport.pid;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const files = (sub) => listDir(path.join(agent.stateDir, sub)).length;
  return {
    fds: listDir(`/proc/${pid}/fd`).length,
    threads: Number(/Threads:\s+(\d+)/.exec(status)[1]),
    rssKiB: Number(/VmRSS:\s+(\d+)/.exec(status)[1]),
    spool: files('spool'),
    sessions: files('sessions'),
    scripts: files('scripts'),
    recordings: files('recordings'),
  };
}

// Small enough for CI, large enough that a leak of one fd, thread or file per
// kind of execution shows: every kind runs several times between the looks.
test('rounds of mixed executions, then cleanup: fds, threads and files return to the baseline, retention limits hold', async (t) => {
  const agent = await agenttyWithStderr(t, {
    env: { AGENTTY_MAX_RECORDINGS: '12' },
    args: ['--max-retained', '10'],
  });
  const round = async (i) => {
    const quick = await agent.run({ command: `echo round ${i}` });
    assert.equal(quick.status, 'completed', JSON.stringify(quick));
    const big = await agent.run({ command: 'seq 1 300000', max_output_bytes: 1000 });  // 2 MB: a spool file
    assert.equal(big.status, 'completed', JSON.stringify(big));
    const grep = await agent.call('explore', { execution_id: big.execution_id, op: 'grep', pattern: '^29999.$' });
    assert.equal(grep.matches.length, 10);  // and a text cache
    const timedOut = await agent.run({ command: 'sleep 100', timeout_ms: 100 });
    assert.equal(timedOut.status, 'timed_out', JSON.stringify(timedOut));
    const stopped = await agent.run({ command: 'sleep 100', yield_ms: 0 });
    await agent.call('stop', { execution_id: stopped.execution_id, signal: 'SIGKILL' });
    const script = await agent.run({ script: 'echo from a script' });
    assert.equal(script.output, 'from a script\n');
    const session = await agent.call('open', {});
    assert.equal(session.isError, false, session.error);
    await agent.run({ session: session.execution_id, command: 'sleep 300 &' });
    const inSession = await agent.run({ session: session.execution_id, command: 'seq 1 3' });
    assert.equal(inSession.output, '1\n2\n3\n');
    await agent.call('close', { execution_id: session.execution_id });
  };
  const settled = async () => {
    await eventually(async () => (await agent.call('ps', {})).live === 0, { what: 'every execution to end' });
    await agent.call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  };
  await round(0);
  await settled();
  await eventually(() => holdsPtyMaster(agent.transport.pid), { what: 'the spare terminal' });
  const baseline = footprint(agent);
  for (let i = 1; i <= 6; i++) {
    await round(i);
    // Pruned once they end, not only when the next execution starts.
    await eventually(async () => (await agent.call('ps', {})).executions.length <= 10,
      { what: '--max-retained 10 to hold' });
    assert.ok(footprint(agent).recordings <= 12, 'AGENTTY_MAX_RECORDINGS=12');
  }
  await settled();
  let after;
  await eventually(() => {
    after = footprint(agent);
    return after.fds === baseline.fds && after.threads === baseline.threads && after.spool === 0 &&
      after.sessions === 0 && after.scripts === 0;
  }, { what: 'the footprint to return to the baseline' }).catch(() => {
    assert.deepEqual(after, baseline);
  });
  // Memory may settle higher than after one round (allocator arenas), not by
  // what six rounds of 2 MB outputs held.
  assert.ok(after.rssKiB - baseline.rssKiB < 12 * 1024, `RSS ${baseline.rssKiB} -> ${after.rssKiB} KiB`);
});

// An operator's server idle overnight: records (and their spool files on
// disk) were pruned only when the next execution started.
test('ended records go when --retention-ms says, spool files too, though nothing new starts', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--retention-ms', '1500'] });
  const big = await agent.run({ command: 'seq 1 300000', max_output_bytes: 1000 });
  assert.equal(big.status, 'completed', big.error);
  await agent.run({ command: 'echo small' });
  assert.equal((await agent.call('ps', {})).executions.length, 2);
  assert.equal(listDir(path.join(agent.stateDir, 'spool')).length, 1);
  await eventually(async () => (await agent.call('ps', {})).executions.length === 0,
    { timeout: 10000, what: 'the records to be pruned' });
  assert.deepEqual(listDir(path.join(agent.stateDir, 'spool')), []);
  const gone = await agent.call('read', { execution_id: big.execution_id });
  assert.equal(gone.isError, true);
  assert.match(gone.error, /was removed \d+ s ago because it ended longer ago than the retention time \(--retention-ms\)/, gone.error);
});

// ---- the state directory under pressure ----

// A 2 MiB tmpfs (root only: mount), unmounted after the test `t`.
function smallFilesystem(t) {
  const dir = tempDirForRun('agentty-full-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', dir]);
  t.after(() => {
    spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

let fillers = 0;
function fill(dir) {
  spawnSync('dd', ['if=/dev/zero', `of=${path.join(dir, `filler${fillers++}`)}`, 'bs=4k'], { stdio: 'ignore' });
}

// --ram-bytes 64 KiB: output beyond that lives only in the spool file.
const smallRam = ['--ram-bytes', '65536'];

test('on a full filesystem, output that could not be spooled is reported lost with the cause and the fix, and the server goes on', { skip: !isRoot && 'mounts a tmpfs: root only' }, async (t) => {
  const mount = smallFilesystem(t);
  const agent = await agenttyWithStderr(t, { stateDir: path.join(mount, 'state'), args: smallRam });
  assert.equal((await agent.run({ command: 'echo warm' })).status, 'completed');
  fill(mount);
  const r = await agent.run({ command: 'seq 1 100000' });  // 589 KB
  assert.equal(r.status, 'completed', r.error);
  assert.equal(r.evicted, true);
  assert.match(r.spool_error ?? '', /No space left on device/, r.hint);
  assert.match(r.spool_error, /--state-dir/);
  assert.match(r.hint, /spool_error/);
  assert.doesNotMatch(r.hint, /past the spool cap|raise AGENTTY_MAX_SPOOL_BYTES/);
  const read = await agent.call('read', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 100 });
  assert.match(read.spool_error ?? '', /No space left on device/, read.hint);
  const stat = await agent.call('explore', { execution_id: r.execution_id, op: 'stat' });
  assert.match(stat.message, /No space left on device/);
  assert.doesNotMatch(stat.message, /only the newest AGENTTY_MAX_SPOOL_BYTES/);
  assert.match(agent.stderr(), /spool.*No space left on device/);
  fill(mount);  // what the failed spool held was given back
  const script = await agent.run({ script: 'echo hi' });
  assert.equal(script.isError, true);
  assert.match(script.error, /script file .*No space left on device.*--state-dir/);
  const session = await agent.call('open', {});
  assert.equal(session.isError, true);
  assert.match(session.error, /No space left on device.*--state-dir/);
  const still = await agent.run({ command: 'echo still serving' });
  assert.equal(still.output, 'still serving\n');
});

test('a state directory deleted while the server runs is made again: long output is still kept whole', async (t) => {
  const stateDir = path.join(tempDirForRun('agentty-gone-'), 'state');
  const agent = await agenttyWithStderr(t, { stateDir, args: smallRam });
  assert.equal((await agent.run({ command: 'echo warm' })).status, 'completed');
  rmSync(stateDir, { recursive: true, force: true });
  const r = await agent.run({ command: 'seq 1 100000' });
  assert.equal(r.status, 'completed', r.error);
  assert.equal(r.evicted, false, r.hint);
  assert.equal(r.spool_error, undefined);
  const head = await agent.call('read', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 9 });  // CR LF
  assert.equal(head.output, '1\n2\n3\n');
  assert.equal(statSync(path.join(stateDir, 'spool')).mode & 0o777, 0o700);
  const script = await agent.run({ script: 'echo script ran' });
  assert.equal(script.output, 'script ran\n');
});

// recordings/ and spool/ replaced by links to a file: warned about as "not
// a directory" at every execute, and then written through anyway. Now
// nothing goes through a link that does not lead to a directory of ours,
// the warning comes once, and a link to one of ours (recordings moved to
// a bigger disk) is followed without a word.
test('recordings and spool links that do not lead to a directory of ours are not written through; one that does is used', async (t) => {
  const root = tempDirForRun('agentty-links-');
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const stateDir = path.join(root, 'state');
  const victim = path.join(root, 'victim');
  writeFileSync(victim, 'mine\n', { mode: 0o644 });
  mkdirSync(stateDir, { mode: 0o700 });
  symlinkSync(victim, path.join(stateDir, 'recordings'));
  symlinkSync(victim, path.join(stateDir, 'spool'));
  const agent = await agenttyWithStderr(t, { stateDir, args: smallRam });
  for (let i = 0; i < 3; i++) assert.equal((await agent.run({ command: `echo run${i}` })).output, `run${i}\n`);
  const long = await agent.run({ command: 'seq 1 100000' });
  assert.equal(long.status, 'completed', long.error);
  assert.match(long.spool_error ?? '', /spool \(a symlink to .*victim\) is not a directory/, long.hint);
  assert.equal(readFileSync(victim, 'utf8'), 'mine\n');
  assert.equal(statSync(victim).mode & 0o777, 0o644);
  const warnings = agent.stderr().match(/recordings are off until this is fixed: .*recordings \(a symlink to .*victim\) is not a directory/g) ?? [];
  assert.equal(warnings.length, 1, agent.stderr());

  const moved = path.join(root, 'bigger-disk');
  mkdirSync(moved, { mode: 0o700 });
  const movedState = path.join(root, 'state2');
  mkdirSync(movedState, { mode: 0o700 });
  symlinkSync(moved, path.join(movedState, 'recordings'));
  const other = await agenttyWithStderr(t, { stateDir: movedState });
  const r = await other.run({ command: 'echo recorded' });
  assert.equal(r.output, 'recorded\n');
  assert.deepEqual(listDir(moved), [`${r.execution_id}.cast`]);
  assert.doesNotMatch(other.stderr(), /recordings/);
});

// A session command longer than what is kept: the answer used to claim the
// command's first byte as start_seq with evicted=false, and begin mid-line
// with the newest bytes, as if that were the whole output.
test('execute(session=) whose output start is gone says evicted, from where, and why', async (t) => {
  const agent = await agenttyWithStderr(t, { env: { AGENTTY_MAX_SPOOL_BYTES: '200K' }, args: smallRam });
  const session = await agent.call('open', {});
  assert.equal(session.isError, false, session.error);  // ends with the server
  const before = await agent.call('read', { execution_id: session.execution_id, tail_lines: 1 });
  const r = await agent.run({ session: session.execution_id, command: 'seq 1 100000', max_output_bytes: 1000000 });
  assert.equal(r.status, 'completed', r.error);
  assert.equal(r.evicted, true, r.hint);
  assert.ok(r.start_seq > before.latest_seq + 100000, `start_seq ${r.start_seq}`);
  assert.match(r.hint, /gone for good \(past the spool cap\).*AGENTTY_MAX_SPOOL_BYTES/);
  const first = r.output.split('\n')[1];
  const rest = await agent.call('read', { execution_id: session.execution_id, since_seq: r.start_seq, max_output_bytes: 64 });
  assert.equal(rest.output.split('\n')[1], first);
  assert.ok(r.output.endsWith('99999\n100000\n'), r.output.slice(-40));
});

// A link planted as STATE_DIR/audit.jsonl was written through (and the file
// it named made 0600): a ~/.bashrc of the user running agentty gained JSON lines.
test('an audit.jsonl planted in the state directory as a symbolic link is refused, not written through', (t) => {
  const stateDir = tempDirForRun('agentty-link-');
  const victim = path.join(stateDir, 'victim');
  writeFileSync(victim, 'mine\n', { mode: 0o644 });
  chmodSync(victim, 0o644);
  symlinkSync(victim, path.join(stateDir, 'audit.jsonl'));
  t.after(() => rmSync(stateDir, { recursive: true, force: true }));
  const run = spawnSync(agenttyBin, ['mcp', '--state-dir', stateDir, '--no-web'], { input: '', encoding: 'utf8' });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /audit\.jsonl.*symbolic link.*AGENTTY_AUDIT_LOG/);
  assert.equal(readFileSync(victim, 'utf8'), 'mine\n');
  assert.equal(statSync(victim).mode & 0o777, 0o644);
});

test('a read-only state directory stops start-up naming the file, the cause and the fix', { skip: !isRoot && 'mounts a tmpfs: root only' }, (t) => {
  const dir = tempDirForRun('agentty-ro-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', dir]);
  t.after(() => {
    spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  const run = spawnSync(agenttyBin, ['mcp', '--state-dir', dir, '--no-web'], { input: '', encoding: 'utf8' });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /audit\.jsonl.*Read-only file system.*--state-dir/);
});

// The same for a user other than root, who cannot mount: a directory it may
// not write (root writes whatever the mode says).
test('a state directory without write permission stops start-up naming the file, the cause and the fix', { skip: isRoot && 'root ignores the mode: the read-only mount above covers it' }, (t) => {
  const dir = tempDirForRun('agentty-unwritable-');
  chmodSync(dir, 0o555);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const run = spawnSync(agenttyBin, ['mcp', '--state-dir', dir, '--no-web'], { input: '', encoding: 'utf8' });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /audit\.jsonl.*Permission denied.*--state-dir/);
});

test('a state directory that belongs to another user is used with a warning naming it', { skip: !isRoot && 'chown: root only' }, async (t) => {
  const stateDir = tempDirForRun('agentty-theirs-');
  chownSync(stateDir, 65534, 65534);
  const agent = await agenttyWithStderr(t, { stateDir });
  assert.equal((await agent.run({ command: 'echo ok' })).output, 'ok\n');
  assert.match(agent.stderr(), new RegExp(`state dir ${stateDir} belongs to another user \\(uid 65534\\)`));
  assert.match(agent.stderr(), /choose another --state-dir/);
});

test('without HOME the default state directory is in the home from the password database, not a shared /tmp one', () => {
  const env = { ...process.env };
  delete env.HOME;
  delete env.XDG_STATE_HOME;
  delete env.AGENTTY_STATE_DIR;
  const help = spawnSync(agenttyBin, ['mcp', '--help'], { env, encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  const shown = /--state-dir TEXT=(\S+)/.exec(help.stdout)?.[1];
  assert.equal(shown, path.join(userInfo().homedir, '.local/state/agentty'));
});
