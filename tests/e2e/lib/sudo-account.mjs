// A user with a password and a sudoers entry, for tests of password prompts
// (sudo, su, passwd), which root never gets: made once per test file as root
// (useradd, chpasswd, /etc/sudoers.d) and removed after it, even when a test
// fails; and the checks those tests share (the password is nowhere, no
// prompt is left running). Callers skip unless root (`sudoSkip`).
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isRoot } from './as-user.mjs';
import { tempDirForRun, WAIT_MS } from './mcp-client.mjs';
import { createPasswordUser } from './sshd.mjs';

export const sudoSkip = !isRoot && 'needs root: makes a user with a password and a sudoers entry for it';

// sudo warns on stderr when this machine's name is not in /etc/hosts (a
// container or chroot may lack it); the warning is the machine's, not ours.
export const sudoText = (text) => text.replace(/^sudo: unable to resolve host .*\r?\n/gm, '');

const setUserId = (file) => existsSync(file) && (statSync(file).mode & 0o4000) !== 0;

// The account ({name, password, uid, gid, home}), made on first use. `prefix`
// names its home directory.
let account;
let sudoersFile;
export function passwordAccount(prefix) {
  if (account) return account;
  assert.ok(setUserId('/usr/bin/sudo'), 'sudo is not installed set-user-ID: run scripts/install-deps');
  assert.ok(setUserId('/usr/bin/su'), 'su is not installed set-user-ID (util-linux)');
  removeStaleSudoers();
  const home = tempDirForRun(prefix);
  account = createPasswordUser({ home, suffix: 's' });
  account.uid = Number(execFileSync('id', ['-u', account.name]).toString().trim());
  account.gid = Number(execFileSync('id', ['-g', account.name]).toString().trim());
  account.home = home;
  chownSync(home, account.uid, account.gid);
  sudoersFile = `/etc/sudoers.d/agentty-e2e-${account.name}`;
  writeFileSync(sudoersFile, `${account.name} ALL=(ALL) ALL\n`, { mode: 0o440 });
  return account;
}
after(() => {
  if (sudoersFile) rmSync(sudoersFile, { force: true });
  if (account) {
    account.remove();
    rmSync(`/run/sudo/ts/${account.name}`, { force: true });  // sudo's cached password
  }
});

// Entries and cached passwords of earlier test processes that are gone
// (killed runs; their users go in createPasswordUser).
function removeStaleSudoers() {
  const stale = (name, prefix) => {
    const owner = new RegExp(`^${prefix}agtpw(\\d+)`).exec(name);
    return owner && !existsSync(`/proc/${owner[1]}`);
  };
  for (const name of readdirSync('/etc/sudoers.d')) {
    if (stale(name, 'agentty-e2e-')) rmSync(`/etc/sudoers.d/${name}`, { force: true });
  }
  const cached = '/run/sudo/ts';
  for (const name of existsSync(cached) ? readdirSync(cached) : []) {
    if (stale(name, '')) rmSync(path.join(cached, name), { force: true });
  }
}

// The secret appears nowhere the agent, the operator or a watcher can read.
export async function assertNowhere(agent, id, secret, viewer) {
  const raw = await agent.call('read', { execution_id: id, since_seq: 1, format: 'raw' });
  assert.ok(!raw.output.includes(secret), 'not in the raw output');
  const screen = await agent.call('screen', { execution_id: id, scrollback_lines: 100 });
  assert.ok(!JSON.stringify(screen.raw).includes(secret), 'not on the screen');
  const recordings = path.join(agent.stateDir, 'recordings');
  for (const file of readdirSync(recordings)) {
    assert.ok(!readFileSync(path.join(recordings, file), 'utf8').includes(secret), `not in ${file}`);
  }
  assert.ok(!readFileSync(path.join(agent.stateDir, 'audit.jsonl'), 'utf8').includes(secret), 'not in the audit log');
  if (viewer) assert.ok(!Buffer.concat(viewer.output).includes(secret), 'not in the web stream');
}

// No sudo, su or passwd of the account's is left (their real uid is the
// account's).
export function assertNoPromptLeft(user) {
  let left = '';
  try {
    left = execFileSync('pgrep', ['-a', '-U', String(user.uid), '-x', 'sudo|su|passwd']).toString();
  } catch {
    // pgrep exits 1 when nothing matched
  }
  assert.equal(left, '', 'no sudo, su or passwd left running');
}

// At sudo's prompt (`sudo -k; sudo true; echo rc=$?`): three wrong
// passwords, each write answered with sudo's verdict (not only the line
// break it prints for Enter), the third ending sudo.
export async function answerWrongPasswordsThrice(agent, id, user) {
  const brief = (x) => JSON.stringify({ ...x, raw: undefined });
  const prompt = `[sudo] password for ${user.name}: `;
  for (const attempt of ['wrong-1', 'wrong-2']) {
    const w = await agent.call('write', { execution_id: id, input: attempt, newline: true, yield_ms: WAIT_MS });
    assert.match(sudoText(w.output), /^\nSorry, try again\.\n/, `the verdict, not only the line break: ${brief(w)}`);
    const asked = await agent.call('wait', { execution_id: id, until: 'input', timeout_ms: WAIT_MS });
    assert.equal(asked.wait_result, 'waiting_for_input', brief(asked));
    assert.equal(sudoText(`${w.output}${asked.output}`), `\nSorry, try again.\n${prompt}`);
  }
  const last = await agent.call('write', { execution_id: id, input: 'wrong-3', newline: true, yield_ms: WAIT_MS });
  const end = await agent.call('wait', { execution_id: id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(end.wait_result, 'exited', brief(end));
  assert.equal(sudoText(`${last.output}${end.output}`), '\nsudo: 3 incorrect password attempts\nrc=1\n', brief(last));
}

// At passwd's prompt (`changing`: execute's answer): the current password
// leads to the new password's prompt, where passwd ignores SIGINT; a ctrl-c
// there changes nothing, for a person too, and the answer says so. Then
// stop ends it.
export async function assertPasswdIgnoresCtrlC(agent, changing, user) {
  const brief = (x) => JSON.stringify({ ...x, raw: undefined });
  const id = changing.execution_id;
  assert.match(changing.output, /Current password: $/, brief(changing));
  const asked = await agent.call('write', { execution_id: id, input: user.password, newline: true, yield_ms: WAIT_MS });
  assert.match(asked.output, /New password: $/, brief(asked));
  const ignored = await agent.call('write', { execution_id: id, keys: ['ctrl-c'], yield_ms: WAIT_MS });
  assert.equal(ignored.status, 'running', brief(ignored));
  assert.match(ignored.message ?? '', /ctrl-c changed nothing: .* ignores SIGINT here/, brief(ignored));
  const stopped = await agent.call('stop', { execution_id: id });
  assert.equal(stopped.status, 'stopped', brief(stopped));
}
