// End-to-end regression tests from the thirty-first audit: an agent doing
// everyday developer work with real tools (an editor a command starts, a
// watcher it waits on), driven through the MCP SDK. Only programs that
// scripts/install-deps installs: procps (watch), vim-tiny, python3, sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openSession, serverForFile, tempDirForRun, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';
import { vim } from './lib/programs.mjs';

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);
const waitFor = waiterFor(call);
const dir = tempDirForRun('agentty-audit31-');

// watch redraws through curses, which sends only the cells that changed:
// "deploy status: done" over "deploy status: pending" reaches the output as
// a cursor move and "done". A wait for the line a person sees on the screen
// never matched the text view, and "call wait again" went on for ever.
test('wait(until=match) finds a line a full-screen watcher shows, though it redrew only part of it', async (t) => {
  const state = path.join(dir, 'deploy-state');
  writeFileSync(state, 'deploy status: pending\n');
  const r = await start(t, { argv: ['watch', '-t', '-n', '0.2', 'cat', state], yield_ms: 0, cols: 80, rows: 10 });
  // since_seq=1: the first drawing may have come in execute's own answer.
  const first = await waitFor(r.execution_id, 'match', { pattern: 'deploy status: pending', since_seq: 1 });
  assert.equal(first.wait_result, 'matched', JSON.stringify(first));

  writeFileSync(state, 'deploy status: done\n');
  const done = await waitFor(r.execution_id, 'match', { pattern: 'deploy status: done' });
  assert.equal(done.wait_result, 'matched', JSON.stringify(done));
  assert.equal(done.match.line, 'deploy status: done', JSON.stringify(done.match));
  assert.ok(['screen', 'text'].includes(done.match.source), JSON.stringify(done.match));
  const shown = await call('screen', { execution_id: r.execution_id });
  assert.equal(shown.alt_screen, true);
  assert.ok(shown.lines.includes('deploy status: done'), JSON.stringify(shown.lines));

  // Like a match in the text (only after the cursor), a row still shown
  // unchanged is not a new match: the next wait does not return at once.
  const again = await call('wait', { execution_id: r.execution_id, pattern: 'deploy status: done', timeout_ms: 1500 });
  assert.equal(again.wait_result, 'deadline_reached', JSON.stringify(again));
});

// `git commit` (no -m) runs the editor as its child, in its process group:
// the group's leader is git, the reader is the editor. The answer named git
// as the program reading, so the agent could take the prompt for git's own
// and type a message into vim's normal mode. sh -c stands in for git here.
test('an editor a command started is named as the program reading, not the command', async (t) => {
  const file = path.join(dir, 'COMMIT_EDITMSG');
  writeFileSync(file, '\n# Please enter the commit message\n');
  const r = await start(t, { argv: ['sh', '-c', '"$0" "$1"; echo editor-closed', vim, file], yield_ms: 30000 });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const editor = path.basename(vim).slice(0, 15);  // its comm
  assert.ok(
    r.message.includes(`${editor} (in the foreground process group of sh) reads the terminal`),
    r.message,
  );

  const quit = await call('write', { execution_id: r.execution_id, input: ':q!\n' });
  assert.equal(quit.isError, false, quit.error);
  const ended = await waitFor(r.execution_id, 'exit');
  assert.equal(ended.exit_code, 0, JSON.stringify(ended));
  assert.match(quit.output + ended.output, /editor-closed/);
});

// A program that is itself the reader keeps the plain wording.
test('a program that reads the terminal itself is named as the foreground program', async (t) => {
  const r = await start(t, { argv: ['python3', '-c', 'input("name? ")'], yield_ms: 30000 });
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  assert.match(r.message, /the foreground program, python3, reads the terminal/, r.message);
  assert.doesNotMatch(r.message, /process group of/);
});

// git log in a session runs less with LESS=FRX: a pager with no alt screen.
// The next execute(session=) was typed into it as less commands ("g", "i",
// "t"...) and answered "completed" with less's "No next tag (press RETURN)"
// as the output of `git status`. The pipeline's first command has ended,
// so the foreground group's leader is gone; less is what reads.
test('a pager left open in a session (no alt screen) refuses the next command and says how to quit it', async (t) => {
  const session = await openSession(call, t);
  const paged = await call('execute', {
    session, command: 'seq 1 300 | less -FRX', side_effects: ['NONE'], yield_ms: WAIT_MS,
  });
  assert.equal(paged.isError, false, paged.error);
  assert.equal(paged.status, 'backgrounded', JSON.stringify(paged));
  assert.equal(paged.waiting_for_input, true, JSON.stringify(paged));
  assert.match(paged.message, /It is a pager \(less\)/, paged.message);
  assert.match(paged.message, /input "q" quits it/, paged.message);

  const next = await call('execute', { session, command: 'echo typed-into-less', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(next.isError, true, JSON.stringify(next));
  assert.match(next.error, /a pager or editor \(less, run by seq 1 300 \| less -FRX\)/, next.error);
  assert.match(next.error, /nothing was typed/);
  const shown = await call('screen', { execution_id: session });
  assert.equal(shown.lines.at(-1), ':', JSON.stringify(shown.lines.slice(-3)));

  const quit = await call('write', { execution_id: session, input: 'q' });
  assert.equal(quit.isError, false, quit.error);
  const done = await waitFor(session, 'exit');
  assert.equal(done.exit_code, 0, JSON.stringify(done));
  const after = await call('execute', { session, command: 'echo back-at-prompt', side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(after.isError, false, after.error);
  assert.equal(after.exit_code, 0);
  assert.match(after.output, /^back-at-prompt$/m);
});
