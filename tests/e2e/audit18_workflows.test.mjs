// End-to-end regression tests for gaps found by an eighteenth audit: a
// working day of a coding agent (a C project with make and git, a Python venv
// in a session, a dev server, prompts and REPLs, pagers and editors, large
// outputs), judged by what the agent reads and whether each message names a
// next step that works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installed, openSession, serverForFile, sessionRunner, WAIT_MS } from './lib/mcp-client.mjs';
import { vim as vimProgram } from './lib/programs.mjs';

const server = serverForFile();
const call = server.call;

const run = sessionRunner(call);

// `su user -c CMD` (util-linux) runs CMD in a session of its own on the same
// terminal and waits for it: CMD's prompt (a password, a REPL such as
// `su postgres -c psql`) was never seen as waiting for input, so execute
// waited out its whole yield_ms and wait(until="input") never answered.
async function answersAPromptOutsideTheSession(t, command) {
  const started = Date.now();
  const r = await server.agent.startCommand(t, { command, yield_ms: WAIT_MS });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  assert.ok(Date.now() - started < WAIT_MS, 'returned at the prompt, not at yield_ms');
  assert.match(r.output, /Name: $/);
  const seen = await call('wait', { execution_id: r.execution_id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(seen.wait_result, 'waiting_for_input', JSON.stringify(seen));
  const answer = await call('write', { execution_id: r.execution_id, input: 'bob', newline: true });
  assert.equal(answer.isError, false, answer.error);
  const done = await call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(done.exit_code, 0, JSON.stringify(done));
  assert.match(answer.output + done.output, /hi bob\n/);
}

test('execute: a prompt read by a program in a session of its own (setsid -w) waits for input', async (t) => {
  await answersAPromptOutsideTheSession(t, `setsid -w bash -c 'read -p "Name: " n; echo "hi $n"'`);
});

test('execute: a prompt under su -c waits for input', {
  skip: (process.getuid() !== 0 && 'su to another account without its password: root only') || (!installed('su') && 'needs su'),
}, async (t) => {
  await answersAPromptOutsideTheSession(t, `su nobody -s /bin/bash -c 'read -p "Name: " n; echo "hi $n"'`);
});

test('execute(session=) refused by an open vim names keys that write accepts, and following it quits vim', async (t) => {
  // It said keys ["escape"], which write refuses (the key is "esc").
  const id = await openSession(call, t);
  const vim = await run(id, `${vimProgram} -u NONE -N`);
  assert.equal(vim.alt_screen, true, JSON.stringify(vim));
  const refused = await call('execute', { session: id, command: 'make test', side_effects: ['NONE'] });
  assert.equal(refused.isError, true, JSON.stringify(refused));
  const keys = JSON.parse(/keys (\[[^\]]*\])/.exec(refused.error)?.[1] ?? 'null');
  assert.ok(Array.isArray(keys), refused.error);
  const pressed = await call('write', { execution_id: id, keys });
  assert.equal(pressed.isError, false, pressed.error);
  const input = JSON.parse(/input ("[^"]*")/.exec(refused.error)?.[1] ?? 'null');
  assert.equal(input, ':q\r', refused.error);
  const quit = await call('write', { execution_id: id, input });
  assert.equal(quit.isError, false, quit.error);
  const w = await call('wait', { execution_id: id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'exited', JSON.stringify(w));
  const after = await run(id, 'echo back');
  assert.equal(after.output, 'back\n');
});

test('execute: a progress bar cleared with CR and spaces before a log line reads as the log line alone', async () => {
  // tqdm.write and hand-made bars clear the bar's line with "\r" and more
  // spaces than it was wide: a person sees "checkpoint saved"; the answer
  // held it followed by the spaces past the bar's end.
  const r = await call('execute', {
    command: String.raw`python3 -c 'import sys
for i in range(0, 101, 20):
    sys.stderr.write("\r%3d%%|%-10s|" % (i, "#" * (i // 10))); sys.stderr.flush()
    if i == 40:
        sys.stderr.write("\r" + " " * 30 + "\r"); print("checkpoint saved", flush=True)
sys.stderr.write("\n")'`,
    side_effects: ['NONE'], yield_ms: WAIT_MS,
  });
  assert.equal(r.exit_code, 0, JSON.stringify(r));
  assert.equal(r.output, 'checkpoint saved\n100%|##########|\n');
});

test('execute(session=) typed into a REPL whose line ends it answers the exit code, not the next prompt', async (t) => {
  // `exit()`/`sys.exit(3)` typed into python3 in a session: the answer held
  // the shell's prompt as output, said the exit code was unknown, and that
  // the program "waited for input", though the shell's marked prompt
  // carried python's status.
  const id = await openSession(call, t);
  const repl = await run(id, 'python3 -q');
  assert.equal(repl.waiting_for_input, true, JSON.stringify(repl));
  // The message names the program at its prompt, and leaves out the advice
  // for nested shells (rearm), which does not apply to a REPL.
  assert.match(repl.message, /foreground program, python3,/, repl.message);
  assert.doesNotMatch(repl.message, /rearm/, repl.message);
  const line = await run(id, 'print(6*7)');
  assert.equal(line.output, 'print(6*7)\n42\n>>> ');
  const ended = await run(id, 'import sys; sys.exit(3)');
  assert.equal(ended.status, 'completed', JSON.stringify(ended));
  assert.equal(ended.exit_code, 3, JSON.stringify(ended));
  assert.equal(ended.boundaries, 'exact');
  assert.equal(ended.output, 'import sys; sys.exit(3)\n');
  assert.match(ended.message, /python3 -q, exit code 3/);
  const next = await run(id, 'echo back');
  assert.equal(next.output, 'back\n');
  assert.equal(next.exit_code, 0);
});
