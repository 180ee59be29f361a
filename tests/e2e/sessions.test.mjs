// End-to-end: shell sessions (open / execute(session=) / close) with the
// official MCP SDK client against the real binary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serverForFile, startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { endsWithin } from './lib/proc-stats.mjs';

const home = tempDirForRun('agentty-sessions-home-');
const promptLog = path.join(home, 'prompt-command.log');
// An exotic prompt: colours, two lines, \w, and a PROMPT_COMMAND of its own.
writeFileSync(path.join(home, '.bashrc'), [
  'PS1=\'\\[\\e[1;32m\\]\\u@\\h\\[\\e[0m\\] \\[\\e[34m\\]\\w\\[\\e[0m\\] $(echo "[$?]")\\n\\[\\e[35m\\]λ\\[\\e[0m\\] \'',
  `PROMPT_COMMAND='echo ran >> ${promptLog}'`,
  'HISTCONTROL=ignoreboth',
  '',
].join('\n'));

const server = serverForFile({ env: { HOME: home } });
const call = server.call;
const run = (session, command, extra = {}) =>
  call('execute', { session, command, side_effects: ['NONE'], ...extra });

async function open(args = {}) {
  const r = await call('open', args);
  assert.equal(r.isError, false, r.error || r.message);
  assert.equal(r.prompt_ready, true, JSON.stringify(r));
  return r.execution_id;
}

test('exit codes 0, 1, 127 and 130 after ctrl-c', async () => {
  const id = await open();
  let r = await run(id, 'echo hello');
  assert.equal(r.status, 'completed');
  assert.equal(r.exit_code, 0);
  assert.equal(r.output, 'hello\n');
  assert.equal(r.boundaries, 'exact');
  r = await run(id, 'false');
  assert.equal(r.exit_code, 1);
  assert.equal(r.output, '');
  r = await run(id, 'no-such-command-xyz');
  assert.equal(r.exit_code, 127);
  assert.match(r.output, /no-such-command-xyz: command not found/);
  r = await run(id, 'echo sleeping; sleep 100', { yield_ms: 200 });
  assert.equal(r.status, 'backgrounded');
  // 200 ms may pass before a loaded machine's shell has even read the line:
  // command_running is true once it started the command, which then prints.
  const started = await call('wait', { execution_id: id, pattern: '^sleeping$', since_seq: 1, timeout_ms: 10000 });
  assert.equal(started.wait_result, 'matched', JSON.stringify(started));
  assert.equal(started.command_running, true);
  const busy = await run(id, 'echo nope');
  assert.equal(busy.isError, true);
  assert.match(busy.error, /still running/);
  await call('write', { execution_id: id, keys: ['ctrl-c'] });
  const w = await call('wait', { execution_id: id, until: 'exit', timeout_ms: 10000 });
  assert.equal(w.wait_result, 'exited');
  assert.equal(w.exit_code, 130);
  assert.equal(w.status, 'running');  // the shell stays open
  r = await run(id, 'echo after');
  assert.equal(r.output, 'after\n');
  await call('close', { execution_id: id });
});

// The answer execute(session=) gives when the command ends in time, the
// wait gives when it ends later: its output, then its exit code, the next
// prompt (two lines here) left for the next command (it answered as output
// before: "two\n[0]\nλ ").
test('wait(until="exit") for a session command answers the rest of its output, not the next prompt', async () => {
  const id = await open();
  const r = await run(id, 'echo one; sleep 0.5; echo two; (exit 3)', { yield_ms: 0 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  const one = await call('wait', { execution_id: id, pattern: '^one$', timeout_ms: 10000 });
  assert.equal(one.wait_result, 'matched', JSON.stringify(one));
  const w = await call('wait', { execution_id: id, until: 'exit', timeout_ms: 10000 });
  assert.equal(w.wait_result, 'exited', JSON.stringify(w));
  assert.equal(w.exit_code, 3);
  assert.equal(w.output, one.output.endsWith('two\n') ? '' : 'two\n', JSON.stringify({ one, w }));
  // The prompt is still there to read, after the command's output.
  const prompt = await call('read', { execution_id: id, since_seq: w.next_seq });
  assert.match(prompt.output, / \[3\]\nλ $/, JSON.stringify(prompt));
  assert.equal((await run(id, 'echo after')).output, 'after\n');
  await call('close', { execution_id: id });
});

test('cd and export persist; multi-line commands and heredocs', async () => {
  const dir = tempDirForRun('agentty-cd-');
  const id = await open();
  await run(id, `cd ${dir}`);
  await run(id, 'export AGENTTY_X=42');
  let r = await run(id, 'pwd; echo $AGENTTY_X');
  assert.equal(r.output, `${dir}\n42\n`);
  // ps says where the shell is now, besides where it was opened.
  const listed = (await call('ps', {})).executions.find((e) => e.execution_id === id);
  assert.equal(listed.shell_cwd, dir);
  assert.notEqual(listed.cwd, dir);
  r = await run(id, 'for i in 1 2 3; do\n  echo n$i\ndone\necho end');
  assert.equal(r.output, 'n1\nn2\nn3\nend\n');
  assert.equal(r.exit_code, 0);
  r = await run(id, "cat <<'EOF'\nline $one\n  two\nEOF\n(exit 4)");
  assert.equal(r.output, 'line $one\n  two\n');
  assert.equal(r.exit_code, 4);
  await call('close', { execution_id: id });
});

test('a command whose output does not fit shows its start and its last lines', async () => {
  const id = await open();
  const r = await run(id, 'seq 1 100000; echo finished-here; (exit 3)');
  assert.equal(r.exit_code, 3);
  assert.equal(r.capped, true);
  assert.ok(r.output.startsWith('1\n2\n'));
  assert.ok(r.output_tail.endsWith('100000\nfinished-here\n'), r.output_tail.slice(-40));
  assert.ok(r.output_tail_seq > r.next_seq);
  const rest = await call('read', { execution_id: id, max_output_bytes: 1048576 });
  assert.equal(rest.start_seq, r.next_seq);
  assert.match(rest.output, /100000\nfinished-here\n/);
  await call('close', { execution_id: id });
});

test('a command that reads stdin is answered with write; the cursor does not repeat output', async () => {
  const id = await open();
  // It returns as soon as read waits (not after a fixed 300 ms, when a loaded
  // machine's shell may not have started the command yet).
  let r = await run(id, 'read x; echo got:$x', { yield_ms: 30000 });
  assert.equal(r.status, 'backgrounded');
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const wr = await call('write', { execution_id: id, input: 'hello', newline: true });
  assert.equal(wr.ok, true);
  const w = await call('wait', { execution_id: id, until: 'exit', timeout_ms: 10000 });
  assert.equal(w.exit_code, 0);
  const seen = wr.output + w.output;
  assert.match(seen, /got:hello/);
  r = await run(id, 'echo next');
  assert.equal(r.output, 'next\n');
  const again = await call('read', { execution_id: id });
  assert.doesNotMatch(again.output, /next\n/);
  await call('close', { execution_id: id });
});

test('exotic PS1 and a user PROMPT_COMMAND: boundaries stay exact, the user hook still runs, no marks leak', async () => {
  const id = await open();
  const before = existsSync(promptLog) ? readFileSync(promptLog, 'utf8').split('\n').length : 0;
  let r = await run(id, 'echo one; (exit 3)');
  assert.equal(r.output, 'one\n');
  assert.equal(r.exit_code, 3);
  r = await run(id, 'printf "no newline"');
  assert.equal(r.output, 'no newline');
  const after = readFileSync(promptLog, 'utf8').split('\n').length;
  assert.ok(after >= before + 2, 'the user PROMPT_COMMAND ran for every prompt');
  const screen = await call('screen', { execution_id: id });
  const text = screen.lines.join('\n');
  assert.match(text, /λ/);
  assert.doesNotMatch(text, /133;/);
  const all = await call('read', { execution_id: id, since_seq: 1 });
  assert.doesNotMatch(all.output, /133;/);
  assert.match(all.output, /\[3\]/, 'PS1 still sees the command status');
  await call('close', { execution_id: id });
});

test('1000 sequential commands keep exact exit codes', async () => {
  const id = await open();
  // Correctness only: how fast is for bench/session_overhead.sh (a bound
  // here failed at 62 s on a loaded machine).
  for (let i = 0; i < 1000; i++) {
    const r = await run(id, `echo $((${i}*2)); (exit ${i % 3})`);
    if (r.exit_code !== i % 3 || r.output !== `${i * 2}\n`) {
      assert.fail(`call ${i}: exit ${r.exit_code} output ${JSON.stringify(r.output)}`);
    }
  }
  await call('close', { execution_id: id });
});

test('zsh and sh sessions', async () => {
  const zsh = await open({ shell: 'zsh' });
  let r = await run(zsh, 'echo z; (exit 5)');
  assert.equal(r.output, 'z\n');
  assert.equal(r.exit_code, 5);
  r = await run(zsh, 'for i in a b; do\necho $i\ndone');
  assert.equal(r.output, 'a\nb\n');
  await call('close', { execution_id: zsh });
  const sh = await open({ shell: 'sh' });
  r = await run(sh, 'echo s; false');
  assert.equal(r.output, 's\n');
  assert.equal(r.exit_code, 1);
  assert.equal(r.boundaries, 'heuristic');  // dash has no hooks: the output starts after the echoed line
  r = await run(sh, 'echo a\necho b');
  assert.equal(r.output, 'a\nb\n');
  await call('close', { execution_id: sh });
});

test('rearm re-installs the hook in a nested bash; flush clears the line', async () => {
  const id = await open();
  // It returns once the inner shell waits at its prompt (after a fixed 500 ms
  // a loaded machine's inner shell was not there yet, and the next execute
  // was refused as a command still running).
  let r = await run(id, 'bash --norc', { yield_ms: 30000 });
  assert.equal(r.status, 'backgrounded');
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const heur = await run(id, 'echo inner');
  assert.equal(heur.boundaries, 'heuristic');
  assert.match(heur.output, /inner/);
  const armed = await call('write', { execution_id: id, action: 'rearm' });
  assert.equal(armed.armed, true, JSON.stringify(armed));
  // The hook line (~1.4 KB) is erased from the screen and left out of the
  // answer, as for open(host); so is a second rearm's.
  const again = await call('write', { execution_id: id, action: 'rearm' });
  assert.equal(again.armed, true, JSON.stringify(again));
  for (const answer of [armed, again]) assert.doesNotMatch(answer.output, /__agentty/);
  const screen = await call('screen', { execution_id: id });
  assert.doesNotMatch(screen.lines.join('\n'), /__agentty/);
  r = await run(id, 'echo nested; (exit 6)');
  assert.equal(r.output, 'nested\n');
  assert.equal(r.exit_code, 6);
  // Leaving the nested shell: the outer shell's D carries its status. Up to
  // the default yield_ms (30 s): 5 s could run out on a loaded machine
  // before the outer shell printed its prompt.
  r = await run(id, 'exit 7');
  assert.equal(r.exit_code, 7);
  await call('write', { execution_id: id, input: 'partial line' });
  const f = await call('write', { execution_id: id, action: 'flush' });
  assert.equal(f.ok, true);
  r = await run(id, 'echo clean');
  assert.equal(r.output, 'clean\n');
  await call('close', { execution_id: id });
});

// A venv's activate exports PS1, and with it the hook's prompt marks (not
// its PS0 and PROMPT_COMMAND). A bash started then drew a marked prompt and
// printed no C or D mark for its lines: session 50's agent got "The shell
// has not started the command: it waits for the rest of the line" and every
// later execute(session=) was refused, flush and wait did not help. Now the
// nested shell is typed into as any other (heuristic, rearm offered); after
// `exec bash` (the session's own shell, same pid) the answer and the refusal
// say the hook is gone and rearm puts it back.
test('an exported PS1 in a nested bash or after exec bash: lines are answered and rearm restores exact boundaries', async () => {
  const id = await open();
  assert.equal((await run(id, 'export PS1')).exit_code, 0);
  let r = await run(id, 'bash --norc', { yield_ms: 30000 });
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  r = await run(id, 'echo in-nested; false');
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.boundaries, 'heuristic');
  assert.match(r.output, /^in-nested$/m);
  r = await run(id, 'exit 5');
  assert.equal(r.exit_code, 5, JSON.stringify(r));
  assert.equal(r.boundaries, 'exact');

  r = await run(id, 'exec bash --norc');
  assert.equal(r.status, 'completed', JSON.stringify(r));
  r = await run(id, 'echo after-exec', { yield_ms: 30000 });
  assert.match(r.output, /^after-exec$/m, JSON.stringify(r));
  assert.match(r.message, /its hook is gone .*write\(action="rearm"\) puts the hook back/, JSON.stringify(r));
  const refused = await run(id, 'echo refused');
  assert.equal(refused.isError, true, JSON.stringify(refused));
  assert.match(refused.error, /not started with marks.*write\(action="rearm"\)/, refused.error);
  const armed = await call('write', { execution_id: id, action: 'rearm' });
  assert.equal(armed.armed, true, JSON.stringify(armed));
  r = await run(id, 'echo exact; (exit 3)');
  assert.equal(r.output, 'exact\n');
  assert.equal(r.exit_code, 3);
  await call('close', { execution_id: id });
});

test('rearm at a two-line prompt: the prompt shows once, on the screen and in the text', async () => {
  const id = await open();
  const before = await call('read', { execution_id: id, tail_lines: 1 });
  let r = await run(id, "PS1='upper-line\\n\\$ ' bash --norc", { yield_ms: 30000 });
  assert.equal(r.status, 'backgrounded');
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));  // at its prompt, ready for rearm
  const armed = await call('write', { execution_id: id, action: 'rearm' });
  assert.equal(armed.armed, true, JSON.stringify(armed));
  r = await run(id, 'echo nested');
  assert.equal(r.output, 'nested\n');
  const text = (await call('read', { execution_id: id, since_seq: before.next_seq })).output;
  const screen = (await call('screen', { execution_id: id })).lines.join('\n');
  for (const shown of [text, screen]) {
    assert.doesNotMatch(shown, /__agentty/);
    assert.equal(shown.match(/^upper-line$/gm)?.length, 2, shown);  // before and after echo nested
  }
  await call('close', { execution_id: id });
});

test('rearm in a zsh started inside a bash session installs zsh\'s hook; leaving it returns to bash', async () => {
  const id = await open();
  let r = await run(id, 'zsh -f', { yield_ms: 30000 });
  assert.equal(r.status, 'backgrounded');
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));  // at its prompt, ready for rearm
  const armed = await call('write', { execution_id: id, action: 'rearm' });
  assert.equal(armed.armed, true, JSON.stringify(armed));
  assert.doesNotMatch(armed.output, /__agentty|bad substitution/);
  r = await run(id, 'echo "in $ZSH_NAME"; (exit 4)');
  assert.equal(r.boundaries, 'exact');
  assert.equal(r.output, 'in zsh\n');
  assert.equal(r.exit_code, 4);
  r = await run(id, 'exit 5');  // the default yield_ms (30 s), as above
  assert.equal(r.exit_code, 5);
  r = await run(id, 'echo "back in ${BASH_VERSION%%.*}"');
  assert.equal(r.output, 'back in 5\n');
  await call('close', { execution_id: id });
});

test('close is idempotent and refuses commands', async () => {
  const id = await open();
  const c1 = await call('close', { execution_id: id });
  assert.equal(c1.closed, true);
  const c2 = await call('close', { execution_id: id });
  assert.equal(c2.closed, true);
  assert.equal(c2.isError, false);
  assert.match(c2.message, /already ended/);
  const r = await run(id, 'echo x');
  assert.equal(r.isError, true);
  const plain = await call('execute', { command: 'true', side_effects: ['NONE'] });
  const notSession = await call('close', { execution_id: plain.execution_id });
  assert.equal(notSession.isError, true);
});

test("agentty's exit ends a session's background jobs, a shell that ignores the hang-up included", async () => {
  const agent = await startAgentty({ env: { HOME: home } });
  const started = [];
  for (const ignoresHangup of [false, true]) {
    const r = await agent.call('open', {});
    assert.equal(r.prompt_ready, true, JSON.stringify(r));
    const job = await agent.call('execute', {
      session: r.execution_id,
      command: `${ignoresHangup ? 'trap "" HUP; ' : ''}sleep 600 & echo "job=$!"`,
      side_effects: ['NONE'],
    });
    const pid = Number(/job=(\d+)/.exec(job.output)?.[1]);
    assert.ok(pid > 0, job.output);
    started.push(pid);
  }
  await agent.client.close();
  for (const pid of started) assert.equal(await endsWithin(pid, 20000), true, `job ${pid} outlived agentty`);
});
