// End-to-end: an agent living in one local shell session for a working day
// (audit 10). Each answer is compared with what a person typing into the same
// shell in a terminal would see.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { serverForFile, tempDirForRun } from './lib/mcp-client.mjs';

const server = serverForFile();
// The sessions' HOME: no rc file of the machine's user (a pyenv PROMPT_COMMAND
// traced by set -x, a slow startup) takes part.
const home = tempDirForRun('agentty-audit10-home-');

// Opens a session (bash unless `shell`), checks its prompt, closes it after `t`.
async function openClean(t, shell = 'bash') {
  const opened = await server.call('open', { shell, env: { HOME: home } });
  assert.equal(opened.isError, false, opened.error);
  assert.equal(opened.prompt_ready, true, JSON.stringify(opened));
  t.after(() => server.call('close', { execution_id: opened.execution_id }));
  return opened.execution_id;
}

// execute(session=) with side_effects NONE, checked to have answered.
async function run(session, command, extra = {}) {
  const r = await server.call('execute', { session, command, side_effects: ['NONE'], ...extra });
  assert.equal(r.isError, false, r.error || JSON.stringify(r));
  return r;
}

function assertExact(r, output, exitCode) {
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.exit_code, exitCode, JSON.stringify(r));
  assert.equal(r.output, output, JSON.stringify(r));
  assert.equal(r.boundaries, 'exact', JSON.stringify(r));
  assert.equal(r.prompt_ready, true, JSON.stringify(r));
}

function hasZsh() {
  try {
    execFileSync('zsh', ['-c', 'true']);
    return true;
  } catch {
    return false;
  }
}

test('a user who assigns or unsets PROMPT_COMMAND still gets each command\'s exit code and output', async (t) => {
  const session = await openClean(t);
  // A person sees the prompt come back after each of these; the agent must
  // not be told the command waits for input.
  assertExact(await run(session, "PROMPT_COMMAND='echo user-hook'"), 'user-hook\n', 0);
  assertExact(await run(session, 'echo out; (exit 3)'), 'out\nuser-hook\n', 3);
  assertExact(await run(session, 'unset PROMPT_COMMAND'), '', 0);
  assertExact(await run(session, 'false'), '', 1);
  assertExact(await run(session, 'PROMPT_COMMAND='), '', 0);
  assertExact(await run(session, 'printf "no newline"'), 'no newline', 0);
  const ps = await server.call('ps', {});
  const row = ps.executions.find((e) => e.execution_id === session);
  assert.equal(row.running_command, null, JSON.stringify(row));
  assert.equal(row.prompt_ready, true, JSON.stringify(row));
  // rearm puts the hook back in PROMPT_COMMAND.
  const rearmed = await server.call('write', { execution_id: session, action: 'rearm' });
  assert.equal(rearmed.armed, true, JSON.stringify(rearmed));
  assertExact(await run(session, 'echo back; (exit 4)'), 'back\n', 4);
});

test('zsh: emptied precmd_functions keep exit codes exact; after PS1 goes too, rearm puts the zsh hook back', { skip: !hasZsh() }, async (t) => {
  const session = await openClean(t, 'zsh');
  assertExact(await run(session, 'precmd_functions=()'), '', 0);
  assertExact(await run(session, 'echo z; (exit 5)'), 'z\n', 5);
  await run(session, "PS1='%# '", { yield_ms: 2000 });  // no marks at all now
  const rearmed = await server.call('write', { execution_id: session, action: 'rearm' });
  assert.equal(rearmed.isError, false, rearmed.error);
  assert.equal(rearmed.armed, true, JSON.stringify(rearmed));
  assert.doesNotMatch(rearmed.output, /bad substitution|agentty/, rearmed.output);
  assertExact(await run(session, 'echo still; false'), 'still\n', 1);
});

test('sh: after PS1 lost its marks, rearm puts them back', async (t) => {
  const session = await openClean(t, 'sh');
  await run(session, "PS1='$ '", { yield_ms: 2000 });
  const rearmed = await server.call('write', { execution_id: session, action: 'rearm' });
  assert.equal(rearmed.armed, true, JSON.stringify(rearmed));
  const r = await run(session, 'echo s; (exit 6)');
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.exit_code, 6, JSON.stringify(r));
  assert.equal(r.output, 's\n', JSON.stringify(r));
  // At a marked prompt, rearm leaves one set of marks (not two).
  assert.equal((await server.call('write', { execution_id: session, action: 'rearm' })).armed, true);
  const twice = await run(session, 'echo t');
  assert.equal(twice.output, 't\n', JSON.stringify(twice));
});

test('rearm whose hook line fails (a readonly PROMPT_COMMAND) says armed: false, even with marks left in PS1', async (t) => {
  const session = await openClean(t);
  assertExact(await run(session, 'PROMPT_COMMAND=; readonly PROMPT_COMMAND'), '', 0);
  const rearmed = await server.call('write', { execution_id: session, action: 'rearm' });
  assert.equal(rearmed.isError, false, rearmed.error);
  assert.equal(rearmed.armed, false, JSON.stringify(rearmed));
  assert.match(rearmed.output, /readonly variable/, rearmed.output);
  assertExact(await run(session, 'echo marks; (exit 2)'), 'marks\n', 2);  // from the prompt's marks
});

test("set -x in a session traces the agent's commands, never agentty's prompt hook", async (t) => {
  const session = await openClean(t);
  assertExact(await run(session, 'set -x'), '', 0);
  // A person at a terminal sees their commands traced, nothing else.
  assertExact(await run(session, 'echo traced; false'), '+ echo traced\ntraced\n+ false\n', 1);
  assertExact(await run(session, 'set +x'), '+ set +x\n', 0);
  assertExact(await run(session, 'echo quiet'), 'quiet\n', 0);
});

test('zsh: setopt xtrace traces the commands, never the prompt hooks', { skip: !hasZsh() }, async (t) => {
  const session = await openClean(t, 'zsh');
  assertExact(await run(session, 'setopt xtrace'), '', 0);
  const traced = await run(session, 'echo traced; false');
  assert.equal(traced.exit_code, 1);
  assert.doesNotMatch(traced.output, /agentty|133;/, traced.output);
  assert.match(traced.output, /> echo traced\ntraced\n.*> false\n$/, traced.output);
});

test('a command that prints the expanded prompt (echo "${PS1@P}") is not taken for the prompt', async (t) => {
  const session = await openClean(t);
  const r = await run(session, 'echo "${PS1@P}"; sleep 0.2; echo more; (exit 2)');
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.exit_code, 2, JSON.stringify(r));
  assert.match(r.output, /\nmore\n$/, JSON.stringify(r));
  assertExact(await run(session, 'echo next'), 'next\n', 0);
});

test("a shell whose stdout goes to /dev/null (exec >/dev/null) still answers each command's exit code", async (t) => {
  const session = await openClean(t);
  // What a person sees: no output, the prompt (on stderr) after each command.
  assertExact(await run(session, 'exec 3>&1 >/dev/null'), '', 0);
  assertExact(await run(session, 'echo hidden; (exit 3)'), '', 3);
  assertExact(await run(session, 'echo shown >&3; false'), 'shown\n', 1);
  assertExact(await run(session, 'exec >&3 3>&-'), '', 0);
  assertExact(await run(session, 'echo back'), 'back\n', 0);
});

test("open's env names the user's startup files: ZDOTDIR for zsh, ENV for sh", async (t) => {
  const dir = tempDirForRun('agentty-audit10-rc-');
  writeFileSync(path.join(dir, '.zshrc'), 'alias from_zdotdir="echo zshrc loaded"\n');
  writeFileSync(path.join(dir, 'envrc'), 'alias from_env="echo envrc loaded"\n');
  const cases = [
    { shell: 'sh', env: { ENV: path.join(dir, 'envrc') }, command: 'from_env', output: 'envrc loaded\n' },
  ];
  if (hasZsh()) cases.push({ shell: 'zsh', env: { ZDOTDIR: dir }, command: 'from_zdotdir; echo $ZDOTDIR', output: `zshrc loaded\n${dir}\n` });
  for (const c of cases) {
    const opened = await server.call('open', { shell: c.shell, env: { HOME: home, ...c.env } });
    assert.equal(opened.prompt_ready, true, JSON.stringify(opened));
    t.after(() => server.call('close', { execution_id: opened.execution_id }));
    const r = await run(opened.execution_id, c.command);
    assert.equal(r.exit_code, 0, `${c.shell}: ${JSON.stringify(r)}`);
    assert.equal(r.output, c.output, `${c.shell}: ${JSON.stringify(r)}`);
  }
});
