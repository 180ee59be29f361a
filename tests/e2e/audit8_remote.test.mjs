// End-to-end regression tests for executions and sessions on an SSH host,
// found by driving agentty as an operator and an agent would, through the
// official MCP SDK client against a real OpenSSH sshd on 127.0.0.1
// (tests/e2e/lib/sshd.mjs), logged in as the user running the tests like the
// other SSH tests; where a root login behaves differently, and for login
// shells of other accounts, a throwaway account (those tests need root).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { startSshd, sshdSkip, rootOnly, loginUser, createPasswordUser, sshClientEnv } from './lib/sshd.mjs';

const skip = sshdSkip();
const skipUnlessRoot = skip || rootOnly;
const home = tempDirForRun('agentty-audit8-home-');  // no ~/.ssh keys or config

let sshd;
let agent;
let user;  // a throwaway account (not root), with a home of its own; root only
let userHome;

before(async () => {
  if (skip) return;
  sshd = await startSshd();
  if (!rootOnly) {
    userHome = tempDirForRun('agentty-audit8-user-');
    user = createPasswordUser({ home: userHome });
  }
  agent = await startAgentty({ env: sshClientEnv(sshd, home) });
});

after(async () => {
  await agent?.client.close();
  await sshd?.stop();
  user?.remove();
});

const run = (command, extra = {}) =>
  agent.call('execute', { host: sshd.host, command, side_effects: ['NONE'], ...extra });

// Starts `command` on the host in the background; SIGKILLed after the test.
async function background(t, command, extra = {}) {
  const r = await run(command, { yield_ms: 0, ...extra });
  assert.equal(r.isError, false, JSON.stringify(r));
  t.after(() => agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  return r.execution_id;
}

// On a host there is no /proc: waiting_for_input was "no output for 1 s",
// so a silent remote `sleep` (or a build between two lines) read as waiting
// for input in read, ps, screen and wait(until=input), while execute's early
// answer already used the better guess (stopped mid-line, quiet for 2 s).
test('a quiet remote program at the start of a line is not waiting for input', { skip }, async (t) => {
  const id = await background(t, 'echo started; sleep 600');
  await agent.call('wait', { execution_id: id, pattern: 'started', timeout_ms: 20000 });
  const w = await agent.call('wait', { execution_id: id, until: 'input', timeout_ms: 3500 });
  assert.equal(w.wait_result, 'deadline_reached', JSON.stringify({ ...w, raw: undefined }));
  assert.equal(w.waiting_for_input, false);
  const r = await agent.call('read', { execution_id: id });
  assert.equal(r.waiting_for_input, false);
  const s = await agent.call('screen', { execution_id: id });
  assert.equal(s.waiting_for_input, false, JSON.stringify({ ...s, raw: undefined }));
  const listed = (await agent.call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(listed.waiting_for_input, false);
});

test('a remote prompt left mid-line is waiting for input everywhere, seen on the host', { skip }, async (t) => {
  const id = await background(t, 'printf "name? "; read -r name; echo "hello $name"');
  const w = await agent.call('wait', { execution_id: id, until: 'input', timeout_ms: 20000 });
  assert.equal(w.wait_result, 'waiting_for_input', JSON.stringify({ ...w, raw: undefined }));
  // The host's /proc showed it reading: no guess to warn about.
  assert.equal(w.message, undefined, JSON.stringify({ ...w, raw: undefined }));
  assert.equal((await agent.call('read', { execution_id: id })).waiting_for_input, true);
  const listed = (await agent.call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(listed.waiting_for_input, true);
  const answer = await agent.call('write', { execution_id: id, input: 'remote\n' });
  assert.equal(answer.ok, true);
  await agent.call('wait', { execution_id: id, until: 'exit', timeout_ms: 20000 });
  const all = await agent.call('read', { execution_id: id, since_seq: 1 });
  assert.match(all.output, /hello remote/);
});

// stdin on a host travels in the command line (printf '%b' DATA | (CMD)):
// the data's lines and the subshell's own line came before the command, so
// the shell's messages named the wrong line ("line 4: no-such-cmd") where
// the same command run locally, or by `ssh host CMD`, says line 1.
test('execute(host, stdin): the shell\'s messages name the command\'s own line numbers', { skip }, async () => {
  let r = await run('no-such-cmd-8a', { stdin: 'a\nb\n' });
  assert.equal(r.exit_code, 127, JSON.stringify(r));
  assert.match(r.output, /line 1: no-such-cmd-8a: command not found/);
  r = await run('cat\nno-such-cmd-8a\necho "at $LINENO"', { stdin: 'one\ntwo\nthree\n' });
  assert.equal(r.output.replace(/\r/g, ''), 'one\ntwo\nthree\nbash: line 2: no-such-cmd-8a: command not found\nat 3\n');
});

// OpenSSH refuses signal requests on a root login ("session signalling
// requires privilege separation", and sshd keeps none after a root login):
// stop(SIGTERM) sent one, nothing happened, and the stop waited out the
// whole force_after_ms before its hang-up ended the program, without a word.
test('stop(SIGTERM) on a root login: the hang-up comes at once, and the answer says why', { skip: skipUnlessRoot }, async (t) => {
  const id = await background(t, 'trap "echo got-TERM" TERM; echo ready; while :; do sleep 0.2; done');
  await agent.call('wait', { execution_id: id, pattern: 'ready', timeout_ms: 20000 });
  const startedAt = Date.now();
  const s = await agent.call('stop', { execution_id: id, signal: 'SIGTERM', force_after_ms: 40000 });
  assert.ok(Date.now() - startedAt < 20000, `stop took ${Date.now() - startedAt} ms`);
  assert.equal(s.status, 'stopped', JSON.stringify({ ...s, raw: undefined }));
  assert.equal(s.stopped, true);
  assert.equal(s.signal, 'SIGHUP');
  assert.match(s.message, /SIGTERM cannot reach the program/);
  assert.match(s.message, /root login/);
  assert.match(s.message, /privilege separation/);
});

// SIGINT has a key: the remote terminal sends it to its foreground job, as
// when a person presses ctrl-c at ssh, so the graceful stage works on root.
test('stop(SIGINT) on a root login is ctrl-c through the remote terminal', { skip: skipUnlessRoot }, async (t) => {
  const id = await background(t, 'trap "echo got-INT; exit 4" INT; echo ready; while :; do sleep 0.2; done');
  await agent.call('wait', { execution_id: id, pattern: 'ready', timeout_ms: 20000 });
  const startedAt = Date.now();
  const s = await agent.call('stop', { execution_id: id, signal: 'SIGINT', force_after_ms: 40000 });
  assert.ok(Date.now() - startedAt < 20000, `stop took ${Date.now() - startedAt} ms`);
  assert.equal(s.status, 'stopped', JSON.stringify({ ...s, raw: undefined }));
  assert.equal(s.exit_code, 4);
  assert.match(s.message, /ctrl-c/);
  const r = await agent.call('read', { execution_id: id, since_seq: 1 });
  assert.match(r.output, /got-INT/);
});

// Another account's login keeps privilege separation: signals arrive as sent.
// Not root: the tests' own login is such an account.
test('stop(SIGTERM) on a non-root login reaches the program', { skip }, async (t) => {
  const host = `${user?.name ?? loginUser}@127.0.0.1:${sshd.port}`;
  const r = await agent.call('execute', {
    host, command: 'trap "echo got-TERM; exit 3" TERM; echo ready; while :; do sleep 0.2; done',
    side_effects: ['NONE'], yield_ms: 0,
  });
  assert.equal(r.isError, false, JSON.stringify(r));
  t.after(() => agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  await agent.call('wait', { execution_id: r.execution_id, pattern: 'ready', timeout_ms: 20000 });
  const s = await agent.call('stop', { execution_id: r.execution_id, signal: 'SIGTERM', force_after_ms: 40000 });
  assert.equal(s.status, 'stopped', JSON.stringify({ ...s, raw: undefined }));
  assert.equal(s.exit_code, 3);
  assert.equal(s.message, undefined);
});

// libssh takes input into the channel's window at once and sshd holds what
// the remote terminal does not take, so write's input_pending_bytes read 0
// over SSH even for a program that read nothing.
test('write on a host says how much input the remote program has not read', { skip }, async (t) => {
  const id = await background(t, 'stty raw -echo; echo ready; sleep 600');
  await agent.call('wait', { execution_id: id, pattern: 'ready', timeout_ms: 20000 });
  const first = await agent.call('write', { execution_id: id, input: 'y'.repeat(1 << 20), yield_ms: 0 });
  assert.equal(first.ok, true, first.error);
  assert.ok(first.input_pending_bytes > 512 * 1024, JSON.stringify({ ...first, raw: undefined }));
  assert.match(first.message, /has not read \d+ bytes of the input typed so far/);
  // A program that reads its input leaves nothing pending once it has.
  const reader = await background(t, 'stty raw -echo; echo ready; cat > /dev/null');
  await agent.call('wait', { execution_id: reader, pattern: 'ready', timeout_ms: 20000 });
  let w = await agent.call('write', { execution_id: reader, input: 'z'.repeat(1 << 20), yield_ms: 0 });
  assert.equal(w.ok, true);
  for (let i = 0; i < 100 && w.input_pending_bytes !== undefined; ++i)
    w = await agent.call('write', { execution_id: reader, input: 'z', yield_ms: 100 });
  assert.equal(w.input_pending_bytes, undefined, JSON.stringify({ ...w, raw: undefined }));
});

// open(host) types agentty's prompt hook into the login shell: its long line
// (hundreds of characters, rows of the screen) stayed on the screen, in the
// terminal page and in the agent's output, where a person who logged in with
// ssh sees only what the login printed and a prompt.
test('open(host): the typed prompt hook is not shown; what the login printed is', { skip: skipUnlessRoot }, async (t) => {
  writeFileSync(path.join(userHome, '.bash_profile'), 'echo "welcome-8a from the profile"\nPS1="prompt-8a\\$ "\n');
  const o = await agent.call('open', { host: `${user.name}@127.0.0.1:${sshd.port}`, cols: 80, rows: 24 });
  assert.equal(o.prompt_ready, true, JSON.stringify({ ...o, raw: undefined }));
  assert.equal(o.shell, 'bash');
  t.after(() => agent.call('close', { execution_id: o.execution_id }));
  assert.doesNotMatch(o.output, /__agentty/, o.output);
  assert.match(o.output, /welcome-8a from the profile/);
  let s = await agent.call('screen', { execution_id: o.execution_id });
  let text = s.lines.join('\n');
  assert.doesNotMatch(text, /__agentty/, text);
  assert.match(text, /welcome-8a from the profile/);
  assert.equal(text.match(/prompt-8a\$/g)?.length, 1, text);
  assert.equal(s.lines[s.cursor.row], 'prompt-8a$', text);
  const all = await agent.call('read', { execution_id: o.execution_id, since_seq: 1 });
  assert.doesNotMatch(all.output, /__agentty/, all.output);
  assert.match(all.output, /welcome-8a from the profile/);
  // The session works as usual afterwards.
  const r = await agent.call('execute', { session: o.execution_id, command: 'echo "in $PWD"', side_effects: ['NONE'] });
  assert.equal(r.output, `in ${userHome}\n`, JSON.stringify({ ...r, raw: undefined }));
  s = await agent.call('screen', { execution_id: o.execution_id });
  text = s.lines.join('\n');
  assert.match(text, /welcome-8a from the profile\nprompt-8a\$ echo "in \$PWD"\nin \//, text);
});

// The hook typed into the login shell is bash's or zsh's, whichever reads
// it: a zsh account gets a session with exact boundaries, and neither the
// answers nor the screen show the hook.
test('open(host) on a zsh login shell: exact boundaries, exit codes, no hook text', { skip: skipUnlessRoot }, async (t) => {
  const zshHome = tempDirForRun('agentty-audit8-zsh-');
  // A two-line prompt (and a .zshrc at all: no new-user wizard).
  writeFileSync(path.join(zshHome, '.zshrc'), "PS1=$'%n@zsh-host\\n%# '\n");
  const zshUser = createPasswordUser({ home: zshHome, shell: '/usr/bin/zsh', suffix: 'z' });
  t.after(() => zshUser.remove());
  const o = await agent.call('open', { host: `${zshUser.name}@127.0.0.1:${sshd.port}`, cwd: '/tmp', env: { GREETING: 'hi there' } });
  t.after(() => agent.call('close', { execution_id: o.execution_id }));
  assert.equal(o.prompt_ready, true, JSON.stringify({ ...o, raw: undefined }));
  assert.equal(o.shell, 'zsh');
  const r = await agent.call('execute', { session: o.execution_id, command: 'echo "$ZSH_NAME $PWD $GREETING"; (exit 3)', side_effects: ['NONE'] });
  assert.equal(r.boundaries, 'exact', JSON.stringify({ ...r, raw: undefined }));
  assert.equal(r.output, 'zsh /tmp hi there\n');
  assert.equal(r.exit_code, 3);
  const all = await agent.call('read', { execution_id: o.execution_id, since_seq: 1 });
  const screen = await agent.call('screen', { execution_id: o.execution_id });
  // The prompt's first line, once per prompt: the hook erased the old one.
  for (const text of [all.output, screen.lines.join('\n')]) {
    assert.doesNotMatch(text, /__agentty|133;/);
    assert.equal(text.match(/@zsh-host$/gm)?.length, 2, text);
  }
  assert.match(screen.lines.join('\n'), /@zsh-host\n% echo/);
  // ps knows where the remote shell is: its hook reports it at each prompt.
  const listed = () => agent.call('ps', {}).then((p) => p.executions.find((e) => e.execution_id === o.execution_id));
  assert.equal((await listed()).shell_cwd, '/tmp');
  await agent.call('execute', { session: o.execution_id, command: 'cd /usr/share', side_effects: ['NONE'] });
  assert.equal((await listed()).shell_cwd, '/usr/share');
});

// open(host) typed a bash/zsh hook into the account's login shell; an sh
// (dash) account refused it as a syntax error, open waited 10 s for a prompt
// that never came and every execute(session=) was refused. sh gets marks in
// its PS1 instead (as a local sh session does): the session works, its
// boundaries heuristic, its exit codes exact, env and cwd set.
test('open(host) on an sh login shell: a working session, env and cwd, no hook text', { skip: skipUnlessRoot }, async (t) => {
  const shUser = createPasswordUser({ home: tempDirForRun('agentty-audit8-sh-'), shell: '/bin/sh', suffix: 's' });
  t.after(() => shUser.remove());
  const o = await agent.call('open', { host: `${shUser.name}@127.0.0.1:${sshd.port}`, cwd: '/usr', env: { GREETING: 'hi there' } });
  t.after(() => agent.call('close', { execution_id: o.execution_id }));
  assert.equal(o.prompt_ready, true, JSON.stringify({ ...o, raw: undefined }));
  assert.equal(o.shell, 'sh');
  assert.equal(o.message, undefined, o.message);
  assert.doesNotMatch(o.output, /Syntax error|__agentty|133;/, o.output);
  let r = await agent.call('execute', { session: o.execution_id, command: 'echo "$PWD $GREETING"; (exit 3)', side_effects: ['NONE'] });
  assert.equal(r.output, '/usr hi there\n', JSON.stringify({ ...r, raw: undefined }));
  assert.equal(r.exit_code, 3);
  assert.equal(r.boundaries, 'heuristic');  // sh has no hooks, as locally
  r = await agent.call('execute', { session: o.execution_id, command: 'echo a\necho b', side_effects: ['NONE'] });
  assert.equal(r.output, 'a\nb\n', JSON.stringify({ ...r, raw: undefined }));
  assert.equal(r.exit_code, 0);
  const screen = await agent.call('screen', { execution_id: o.execution_id });
  assert.doesNotMatch(screen.lines.join('\n'), /__agentty|133;|Syntax error/, screen.lines.join('\n'));
});
