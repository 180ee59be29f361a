// End-to-end: an agent that needs sudo on an SSH host (audit 25). Audit 24
// made local password prompts fast and their answers right; on a host the
// terminal's modes were never asked, so the same prompts took the 2 s
// guess, a password typed with write was answered after the bare line
// break, and the recording kept the password. Run as root, the file makes a
// user with a password and a sudoers entry (lib/sudo-account.mjs), starts a
// real OpenSSH sshd on 127.0.0.1 (lib/sshd.mjs) and logs in as that user
// from an agentty of its own; as anyone else it cannot, and skips.
//
// What it proves, on the host: the prompts (sudo, su) are seen as waiting
// for input after 500 ms, not 2 s, and the answer says why in words that fit
// a host; a password typed with write is answered with sudo's verdict and
// never appears in output, screen, recording or audit log; wrong passwords,
// ctrl-c, stop and close leave nothing running on the host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { startAgentty, tempDirForRun, WAIT_MS } from './lib/mcp-client.mjs';
import { sshClientEnv, sshdSkip, startSshd } from './lib/sshd.mjs';
import {
  answerWrongPasswordsThrice, assertNowhere, assertPasswdIgnoresCtrlC, passwordAccount, sudoSkip,
  sudoText,
} from './lib/sudo-account.mjs';

const skip = sudoSkip || sshdSkip();
const brief = (x) => JSON.stringify({ ...x, raw: undefined });

let sshd;
let agent;
let user;
let host;
before(async () => {
  if (skip) return;
  user = passwordAccount('agentty-audit25-home-');
  sshd = await startSshd();
  agent = await startAgentty({ env: sshClientEnv(sshd, tempDirForRun('agentty-audit25-client-')) });
  host = `${user.name}@127.0.0.1:${sshd.port}`;
});
after(async () => {
  await agent?.client.close();
  await sshd?.stop();
});

// What runs on the host as the account, besides its sshd (the connection
// agentty keeps): a login shell or sudo left behind shows here.
function leftOnHost() {
  let listed = '';
  try {
    listed = execFileSync('pgrep', ['-a', '-U', String(user.uid)]).toString();
  } catch {
    // pgrep exits 1 when nothing matched
  }
  return listed.split('\n').filter((line) => line && !/^\d+ sshd/.test(line));
}

// The host's processes end after their terminal hangs up, a moment after
// the channel closed; no event here says when.
async function assertNothingLeftOnHost() {
  const deadline = Date.now() + 10000;
  while (leftOnHost().length > 0 && Date.now() < deadline) await setTimeout(100);
  assert.deepEqual(leftOnHost(), [], 'nothing of the account runs on the host');
}

async function execute(command, extra = {}) {
  const started = Date.now();
  const r = await agent.call('execute', { host, command, side_effects: ['NONE'], yield_ms: WAIT_MS, ...extra });
  return { ...r, took: Date.now() - started };
}

// The guess's words for a password prompt on a host: 500 ms, and the cause
// is the prompt's owner (root), not a host that cannot tell.
function assertHiddenLineGuess(r) {
  assert.match(r.message, /read a line without echoing it, as at a password prompt, and has printed nothing for 500 ms/, brief(r));
  assert.doesNotMatch(r.message, /not Linux|no \/proc or awk|probe failed/, `the host can tell; sudo is root's: ${brief(r)}`);
  assert.match(r.message, /another user/, brief(r));
}

// sudo is root's program: the login user may not read its /proc/PID/syscall
// or wchan, so the host's probe cannot tell, and the guess decides. It took
// 2 s (the terminal's modes were not asked), and write(password, newline)
// answered after the line break sudo prints for Enter, before the verdict.
test('remote sudo: the prompt is seen after 500 ms, write answers with sudo\'s verdict, the password is nowhere', { skip }, async (t) => {
  const r = await execute('sudo -k; sudo id -u');
  t.after(() => agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  t.diagnostic(`execute answered at the prompt in ${r.took} ms`);
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.match(r.output, new RegExp(`\\[sudo\\] password for ${user.name}: $`));
  assertHiddenLineGuess(r);
  assert.match(r.message, /sudo remembers a password for the terminal it was typed in .* in one session \(open with the same host, then execute\(session=\)\)/, brief(r));
  const started = Date.now();
  const w = await agent.call('write', { execution_id: r.execution_id, input: user.password, newline: true, yield_ms: WAIT_MS });
  t.diagnostic(`write answered in ${Date.now() - started} ms`);
  assert.equal(w.ok, true, brief(w));
  assert.equal(sudoText(w.output), '\n0\n', `answered once sudo had run id: ${brief(w)}`);
  const end = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(end.exit_code, 0, brief(end));
  await assertNowhere(agent, r.execution_id, user.password);
  const cast = readFileSync(path.join(agent.stateDir, 'recordings', `${r.execution_id}.cast`), 'utf8');
  assert.match(cast, /"i", "\[hidden input\]"/, 'the recording says something was typed, not what');
});

// The host says whether its terminal echoes a moment after each quiet
// spell; a password typed at once after its prompt came before that answer
// and was recorded as typed.
test('a password typed right after a remote prompt, before the host said it hides input, is not recorded', { skip }, async (t) => {
  const secret = `typed-early-${process.pid}`;
  const r = await execute("read -s -p 'Secret: ' x; echo; echo got ${#x}", { yield_ms: 0 });
  t.after(() => agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  const prompt = await agent.call('wait', { execution_id: r.execution_id, until: 'match', pattern: 'Secret: ', since_seq: 1, timeout_ms: WAIT_MS });
  assert.equal(prompt.wait_result, 'matched', brief(prompt));
  const w = await agent.call('write', { execution_id: r.execution_id, input: secret, newline: true, yield_ms: WAIT_MS });
  assert.equal(w.ok, true, brief(w));
  const end = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(end.exit_code, 0, brief(end));
  const all = await agent.call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.match(all.output, new RegExp(`got ${secret.length}`), 'the program read the whole answer');
  const cast = readFileSync(path.join(agent.stateDir, 'recordings', `${r.execution_id}.cast`), 'utf8');
  assert.ok(!cast.includes(secret), `the recording keeps no trace of the answer: ${cast}`);
  assert.match(cast, /"i", "\[hidden input\]"/);
});

test('remote sudo, wrong passwords: each write answers with the verdict; the third ends it; nothing is left', { skip }, async () => {
  const r = await execute('sudo -k; sudo true; echo rc=$?');
  assert.equal(r.waiting_for_input, true, brief(r));
  await answerWrongPasswordsThrice(agent, r.execution_id, user);
  await assertNowhere(agent, r.execution_id, 'wrong-');
  await assertNothingLeftOnHost();
});

test('remote sudo, su and passwd: ctrl-c at the prompt ends them (passwd\'s new password: said so), stop too; nothing is left on the host', { skip }, async () => {
  for (const command of ['sudo -k; sudo true', `su - ${user.name} -c true`]) {
    const r = await execute(command);
    assert.equal(r.waiting_for_input, true, `${command}: ${brief(r)}`);
    assertHiddenLineGuess(r);
    await agent.call('write', { execution_id: r.execution_id, keys: ['ctrl-c'] });
    const end = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
    assert.equal(end.wait_result, 'exited', `${command}: ${brief(end)}`);
    assert.notEqual(end.exit_code, 0, command);
  }
  const r = await execute('sudo -k; sudo true');
  assert.equal(r.waiting_for_input, true, brief(r));
  const stopped = await agent.call('stop', { execution_id: r.execution_id });
  assert.equal(stopped.status, 'stopped', brief(stopped));
  // passwd ignores SIGINT once it asks for the new password, and the
  // answer says so on a host too.
  const changing = await execute('passwd');
  assertHiddenLineGuess(changing);
  await assertPasswdIgnoresCtrlC(agent, changing, user);
  await assertNothingLeftOnHost();
});

// In a session on the host: su's password answered with write comes back
// with what the command printed, the session takes the next command, and
// sudo asks once, as the execute answer says.
test('remote session: su\'s answer is the command\'s output, sudo asks once, close leaves nothing', { skip }, async () => {
  const opened = await agent.call('open', { host });
  assert.equal(opened.prompt_ready, true, brief(opened));
  const session = opened.execution_id;
  const run = (command) => agent.call('execute', { session, command, side_effects: ['NONE'], yield_ms: WAIT_MS });
  const answer = (input) => agent.call('write', { execution_id: session, input, newline: true, yield_ms: WAIT_MS });
  const r = await run(`su - ${user.name} -c 'echo as-$(id -un)'`);
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.match(r.output, /Password: $/);
  assertHiddenLineGuess(r);
  assert.match(r.message, /It asks for a password .* or handoff to a person\./, brief(r));
  assert.doesNotMatch(r.message, /rearm/, `no nested-shell advice at a password prompt: ${brief(r)}`);
  const w = await answer(user.password);
  assert.match(w.output, new RegExp(`^\\nas-${user.name}\\n`), brief(w));
  const done = await agent.call('wait', { execution_id: session, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(done.command_exit_code, 0, brief(done));
  const next = await run('echo next');
  assert.equal(next.output, 'next\n', brief(next));
  const asked = await run('sudo -k; sudo -v');
  assert.equal(asked.waiting_for_input, true, brief(asked));
  await answer(user.password);
  const validated = await agent.call('wait', { execution_id: session, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(validated.command_exit_code, 0, brief(validated));
  const again = await run('sudo -n id -u');
  assert.equal(sudoText(again.output), '0\n', brief(again));
  // Left at a prompt, then closed.
  const left = await run('sudo -k; sudo true');
  assert.equal(left.waiting_for_input, true, brief(left));
  const closed = await agent.call('close', { execution_id: session });
  assert.equal(closed.isError, false, brief(closed));
  await assertNowhere(agent, session, user.password);
  await assertNothingLeftOnHost();
});

// sudo -S reads the password from its standard input; plain sudo reads the
// terminal whatever stdin holds, and the answer says so on a host too.
test('remote stdin: sudo -S takes the password from it; plain sudo asks on the terminal and the answer says so', { skip }, async () => {
  const piped = await execute('sudo -k; sudo -S id -u', { stdin: `${user.password}\n` });
  assert.equal(piped.exit_code, 0, brief(piped));
  assert.equal(sudoText(piped.output), `[sudo] password for ${user.name}: 0\n`);
  const asked = await execute('sudo -k; sudo id -u', { stdin: `${user.password}\n` });
  assert.equal(asked.waiting_for_input, true, brief(asked));
  assert.match(asked.message, /a password prompt \(sudo, su, ssh\) reads the terminal: answer it with write, or have the program read stdin \(sudo -S\)/, brief(asked));
  const stopped = await agent.call('stop', { execution_id: asked.execution_id });
  assert.equal(stopped.status, 'stopped', brief(stopped));
  await assertNowhere(agent, piped.execution_id, user.password);
  await assertNothingLeftOnHost();
});
