// End-to-end: an agent that needs sudo (audit 24). Real set-user-ID password
// prompts: sudo and su, asked of an agentty run by a user with a password
// (root is never asked). Run as root, the file makes that user (useradd,
// chpasswd) and a sudoers entry for it, runs agentty as the user, and
// removes both afterwards; as anyone else it cannot, and skips.
//
// What it proves: the prompt is seen as waiting for input without the 2 s
// guess (the terminal reads a line without echoing it); a password typed
// with write is answered in the same call (accepted: the command's output
// or exit; refused: "Sorry, try again." and the next prompt) and never
// appears in output, screen, recording, audit log or the web stream; three
// wrong passwords and ctrl-c end sudo cleanly, leaving no process; a person
// who types the password on the terminal page after a handoff hands back an
// execution whose answer holds no password; and the answers say what a
// person learns by trying (sudo's cached password belongs to the terminal;
// a password prompt does not read execute's stdin).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startAgenttyAs } from './lib/as-user.mjs';
import { WAIT_MS } from './lib/mcp-client.mjs';
import {
  answerWrongPasswordsThrice, assertNoPromptLeft, assertNowhere, assertPasswdIgnoresCtrlC,
  passwordAccount, sudoSkip as skip, sudoText,
} from './lib/sudo-account.mjs';
import { openTerminalSocket, takeOver, release } from './lib/terminal-viewer.mjs';

const brief = (x) => JSON.stringify({ ...x, raw: undefined });

async function agentAsAccount(t) {
  const user = passwordAccount('agentty-audit24-home-');
  const agent = await startAgenttyAs(t, {
    uid: user.uid, gid: user.gid, home: user.home, env: { USER: user.name, LOGNAME: user.name },
  });
  return { ...agent, user };
}

// execute(yield_ms=WAIT_MS) at sudo's prompt used to answer after the 2 s
// guess (su and sudo are root's processes, which agentty, not root, may not
// look at); their terminal reads a line without echoing it, and that is now
// enough after 0.5 s. write(password, newline) answered after the line break
// sudo prints for Enter, before the password was checked: status running,
// no word of whether it was taken, and in a session the next execute was
// refused ("a command is still running").
test('sudo asks, write answers it with the command\'s result, and the password is nowhere', { skip }, async (t) => {
  const agent = await agentAsAccount(t);
  const { user } = agent;
  const r = await agent.call('execute', { command: 'sudo -k; sudo id -u', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.match(r.output, new RegExp(`\\[sudo\\] password for ${user.name}: $`));
  assert.match(r.message, /read a line without echoing it, as at a password prompt, and has printed nothing for 500 ms/, brief(r));
  assert.match(r.message, /sudo remembers a password for the terminal it was typed in/, brief(r));
  const viewer = await openTerminalSocket(r.terminal_url);
  t.after(() => viewer.close());
  const w = await agent.call('write', { execution_id: r.execution_id, input: user.password, newline: true, yield_ms: WAIT_MS });
  assert.equal(w.ok, true, brief(w));
  assert.equal(sudoText(w.output), '\n0\n', `answered once sudo had run id: ${brief(w)}`);
  const end = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(end.exit_code, 0, brief(end));
  await assertNowhere(agent, r.execution_id, user.password, viewer);
  const cast = readFileSync(path.join(agent.stateDir, 'recordings', `${r.execution_id}.cast`), 'utf8');
  assert.match(cast, /"i", "\[hidden input\]"/, 'the recording says something was typed');
});

test('wrong passwords: each write answers with sudo\'s verdict; the third ends it; nothing is left', { skip }, async (t) => {
  const agent = await agentAsAccount(t);
  const { user } = agent;
  const r = await agent.call('execute', { command: 'sudo -k; sudo true; echo rc=$?', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(r.waiting_for_input, true, brief(r));
  await answerWrongPasswordsThrice(agent, r.execution_id, user);
  assertNoPromptLeft(user);
});

test('ctrl-c at sudo\'s and su\'s prompts ends them, at passwd\'s new password it is ignored and said so; nothing is left', { skip }, async (t) => {
  const agent = await agentAsAccount(t);
  for (const command of ['sudo -k; sudo true', `su - ${agent.user.name} -c true`]) {
    const r = await agent.call('execute', { command, side_effects: ['NONE'], yield_ms: WAIT_MS });
    assert.equal(r.waiting_for_input, true, brief(r));
    await agent.call('write', { execution_id: r.execution_id, keys: ['ctrl-c'] });
    const end = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
    assert.equal(end.wait_result, 'exited', `${command}: ${brief(end)}`);
    assert.notEqual(end.exit_code, 0, command);
  }
  // passwd ignores SIGINT once it asks for the new password: nothing
  // happens, for a person too, and the answer says so instead of nothing.
  const changing = await agent.call('execute', { command: 'passwd', side_effects: ['NONE'], yield_ms: WAIT_MS });
  await assertPasswdIgnoresCtrlC(agent, changing, agent.user);
  assertNoPromptLeft(agent.user);
});

// In a session: su's password answered with write comes back with what the
// command printed, and the session takes the next command at once.
test('su in a session: the answer to its password is the command\'s output', { skip }, async (t) => {
  const agent = await agentAsAccount(t);
  const { user } = agent;
  const opened = await agent.call('open', {});
  assert.equal(opened.prompt_ready, true, brief(opened));
  const session = opened.execution_id;
  const r = await agent.call('execute', { session, command: `su - ${user.name} -c 'echo as-$(id -un)'`, side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.match(r.output, /Password: $/);
  assert.match(r.message, /It asks for a password .* or handoff to a person\./, brief(r));
  assert.doesNotMatch(r.message, /rearm/, `no nested-shell advice at a password prompt: ${brief(r)}`);
  const w = await agent.call('write', { execution_id: session, input: user.password, newline: true, yield_ms: WAIT_MS });
  assert.match(w.output, new RegExp(`^\\nas-${user.name}\\n`), brief(w));
  const done = await agent.call('wait', { execution_id: session, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(done.command_exit_code, 0, brief(done));
  const next = await agent.call('execute', { session, command: 'echo next', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(next.output, 'next\n', brief(next));
  await assertNowhere(agent, session, user.password);
});

test('a person types the sudo password on the terminal page; the agent never gets it', { skip }, async (t) => {
  const agent = await agentAsAccount(t);
  const { user } = agent;
  const r = await agent.call('execute', { command: 'sudo -k; sudo id -u', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(r.waiting_for_input, true, brief(r));
  const handed = await agent.call('handoff', { execution_id: r.execution_id, reason: 'Enter the sudo password' });
  assert.equal(handed.requested, true, brief(handed));
  const viewer = await openTerminalSocket(handed.terminal_url);
  t.after(() => viewer.close());
  assert.equal((await takeOver(viewer)).type, 'state');
  const released = agent.call('wait', { execution_id: r.execution_id, until: 'released', timeout_ms: WAIT_MS });
  viewer.sendKeys(`${user.password}\r`);
  await release(viewer);
  const back = await released;
  assert.equal(back.wait_result, 'released', brief(back));
  assert.ok(!JSON.stringify(back.raw).includes(user.password), 'not in the answer');
  const end = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(end.exit_code, 0, brief(end));
  const all = await agent.call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.equal(sudoText(all.output), `[sudo] password for ${user.name}: \n0\n`);
  await assertNowhere(agent, r.execution_id, user.password, viewer);
});

// sudo -S reads the password from its standard input; plain sudo reads the
// terminal, whatever stdin holds, as it does for a person (`sudo cmd <file`).
test('stdin: sudo -S takes the password from it; plain sudo asks on the terminal and the answer says so', { skip }, async (t) => {
  const agent = await agentAsAccount(t);
  const { user } = agent;
  const tty = await agent.call('execute', { argv: ['tty'], side_effects: ['NONE'] });
  assert.match(tty.output, /^\/dev\/pts\/\d+\n$/, 'argv runs on a terminal too');
  const piped = await agent.call('execute', { command: 'sudo -k; sudo -S id -u', stdin: `${user.password}\n`, side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(piped.exit_code, 0, brief(piped));
  assert.equal(sudoText(piped.output), `[sudo] password for ${user.name}: 0\n`);
  const asked = await agent.call('execute', { command: 'sudo -k; sudo id -u', stdin: `${user.password}\n`, side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(asked.waiting_for_input, true, brief(asked));
  assert.match(asked.message, /a password prompt \(sudo, su, ssh\) reads the terminal: answer it with write, or have the program read stdin \(sudo -S\)/, brief(asked));
  await assertNowhere(agent, piped.execution_id, user.password);
});

// sudo's cached password (timestamp_type=tty) belongs to one terminal: a
// session keeps it from one command to the next.
test('in one session sudo asks once', { skip }, async (t) => {
  const agent = await agentAsAccount(t);
  const opened = await agent.call('open', {});
  const session = opened.execution_id;
  const r = await agent.call('execute', { session, command: 'sudo -k; sudo -v', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(r.waiting_for_input, true, brief(r));
  await agent.call('write', { execution_id: session, input: agent.user.password, newline: true, yield_ms: WAIT_MS });
  const done = await agent.call('wait', { execution_id: session, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(done.command_exit_code, 0, brief(done));
  const again = await agent.call('execute', { session, command: 'sudo -n id -u', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(again.exit_code, 0, brief(again));
  assert.equal(sudoText(again.output), '0\n');
});
