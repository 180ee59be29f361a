// End-to-end tests from the forty-sixth audit: an agent driving debuggers
// and REPLs (pdb, gdb, sqlite3, node) through the MCP SDK, started by
// execute and typed into an open session. scripts/install-deps installs gdb
// and sqlite3 for them (and g++, whose gcc gives `cc`); without them those
// tests skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { installed, openSession, serverForFile, sessionRunner, tempDirForRun, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);
const waitFor = waiterFor(call);
const runIn = sessionRunner(call);
const dir = tempDirForRun('agentty-a46-');

const noGdb = (!installed('gdb') || !installed('cc')) && 'needs gdb and cc (scripts/install-deps installs gdb and g++)';
const noSqlite = !installed('sqlite3') && 'needs sqlite3 (scripts/install-deps installs it)';
// No user .gdbinit, and no "Enable debuginfod?" question at start.
const gdbArgv = ['gdb', '-q', '-nx', '--args'];
const gdbEnv = { DEBUGINFOD_URLS: '' };

// Types a line and checks the write went through.
async function line(id, input, extra = {}) {
  const r = await call('write', { execution_id: id, input, newline: true, yield_ms: WAIT_MS, ...extra });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.ok, true, JSON.stringify(r));
  return r;
}

// The reply ends at the program's prompt, and the program reads the terminal.
function atPrompt(r, prompt) {
  assert.ok(r.output.endsWith(prompt), `ends with ${JSON.stringify(prompt)}: ${JSON.stringify(r)}`);
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
}

// Whether a process is gone (or only a zombie nobody has reaped yet).
function gone(pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
  } catch {
    return true;
  }
}

// stop and close answer once the program's group has ended; what they leave
// behind is looked at for up to 5 s, each 50 ms.
async function assertGone(pids) {
  for (let i = 0; i < 100 && !pids.every(gone); i++) await new Promise((done) => setTimeout(done, 50));
  assert.deepEqual(pids.filter((pid) => !gone(pid)), [], 'processes left behind');
}

const pdbScript = path.join(dir, 'steps.py');
writeFileSync(pdbScript, [
  'import os, sys, time',
  'def square(v):',
  '    w = v * v',
  '    return w',
  'def wait_for(flag):',
  '    while not os.path.exists(flag):',
  '        time.sleep(0.02)',
  'a = square(3)',
  'wait_for(sys.argv[1])',
  'print("a is", a)',
  '',
].join('\n'));

test('pdb: steps, prints, is busy while the program computes, and continues to the end', async (t) => {
  const flag = path.join(dir, 'pdb-flag');
  const r = await start(t, { argv: ['python3', '-m', 'pdb', pdbScript, flag], yield_ms: WAIT_MS });
  assert.match(r.output, /-> import os, sys, time\n\(Pdb\) $/, JSON.stringify(r));
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const id = r.execution_id;
  for (const step of ['n', 'n', 'n']) atPrompt(await line(id, step), '(Pdb) ');
  const entered = await line(id, 's');
  assert.match(entered.output, /--Call--\n.*square\(\)\n-> def square\(v\):\n\(Pdb\) $/, JSON.stringify(entered));
  atPrompt(await line(id, 'n'), '(Pdb) ');
  const printed = await line(id, 'p v');
  assert.equal(printed.output, 'p v\n3\n(Pdb) ', JSON.stringify(printed));
  const returned = await line(id, 'r');
  assert.match(returned.output, /--Return--\n.*square\(\)->9\n/, JSON.stringify(returned));
  atPrompt(returned, '(Pdb) ');
  atPrompt(await line(id, 'n'), '(Pdb) '); // back in the module, at wait_for(...)
  // `n` over wait_for: the program sleeps until the flag exists.
  const busy = await line(id, 'n', { yield_ms: 500 });
  assert.equal(busy.output, 'n\n', JSON.stringify(busy));
  assert.equal(busy.waiting_for_input, false, JSON.stringify(busy));
  assert.match(busy.message ?? '', /python3 is not reading its terminal now: it is busy/, busy.message);
  writeFileSync(flag, '');
  const next = await waitFor(id, 'input');
  assert.equal(next.wait_result, 'waiting_for_input', JSON.stringify(next));
  assert.match(next.output, /-> print\("a is", a\)\n\(Pdb\) $/, JSON.stringify(next));
  const ended = await line(id, 'c');
  assert.match(ended.output, /^c\na is 9\nThe program finished and will be restarted\n/, JSON.stringify(ended));
  atPrompt(ended, '(Pdb) ');
  const quit = await line(id, 'q');
  assert.equal(quit.status, 'completed', JSON.stringify(quit));
  assert.equal(quit.exit_code, 0, JSON.stringify(quit));
});

const crashScript = path.join(dir, 'crash.py');
writeFileSync(crashScript, [
  'def g(v):',
  '    breakpoint()',
  '    return 10 / v',
  'print("start")',
  'print(g(2))',
  'print(g(0))',
  '',
].join('\n'));

test('pdb: breakpoint() stops the script at (Pdb), and an exception enters post-mortem', async (t) => {
  const r = await start(t, { argv: ['python3', crashScript], yield_ms: WAIT_MS });
  assert.match(r.output, /^start\n> .*crash\.py\(3\)g\(\)\n-> return 10 \/ v\n\(Pdb\) $/, JSON.stringify(r));
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  assert.equal((await line(r.execution_id, 'p v')).output, 'p v\n2\n(Pdb) ');
  atPrompt(await line(r.execution_id, 'c'), '(Pdb) ');
  const crashed = await line(r.execution_id, 'c');
  assert.match(crashed.output, /ZeroDivisionError: division by zero\n$/, JSON.stringify(crashed));
  assert.equal(crashed.status, 'completed', JSON.stringify(crashed));
  assert.equal(crashed.exit_code, 1, JSON.stringify(crashed));

  const pm = await start(t, {
    argv: ['python3', '-m', 'pdb', '-c', 'continue', crashScript],
    env: { PYTHONBREAKPOINT: '0' },
    yield_ms: WAIT_MS,
  });
  assert.match(pm.output, /Uncaught exception\. Entering post mortem debugging\n[^]*-> return 10 \/ v\n\(Pdb\) $/, JSON.stringify(pm));
  assert.equal(pm.waiting_for_input, true, JSON.stringify(pm));
  assert.equal((await line(pm.execution_id, 'p v')).output, 'p v\n0\n(Pdb) ');
  // q ends post-mortem and pdb restarts the script; q again ends pdb.
  const restarted = await line(pm.execution_id, 'q');
  assert.match(restarted.output, /^q\nPost mortem debugger finished\. .* will be restarted\n/, JSON.stringify(restarted));
  atPrompt(restarted, '(Pdb) ');
  const quit = await line(pm.execution_id, 'q');
  assert.equal(quit.status, 'completed', JSON.stringify(quit));
});

// Prints its pid, then (with "slow") works a second before reaching square:
// gdb's `run` prints "Starting program:" at once and the breakpoint later.
const gdbProgram = path.join(dir, 'prog');
if (!noGdb) {
  writeFileSync(`${gdbProgram}.c`, [
    '#include <stdio.h>',
    '#include <string.h>',
    '#include <unistd.h>',
    'static int square(int v) { return v * v; }',
    'static int depth(int n) { return n == 0 ? square(7) : depth(n - 1) + 1; }',
    'int main(int argc, char **argv) {',
    '  printf("pid %d\\n", (int)getpid());',
    '  fflush(stdout);',
    '  if (argc > 1 && strcmp(argv[1], "slow") == 0) sleep(1);',
    '  int total = 0;',
    '  for (int i = 0; i < 3; i++) total += square(i);',
    '  printf("total %d\\n", total);',
    '  fflush(stdout);',
    '  if (argc > 1 && strcmp(argv[1], "spin") == 0)',
    '    for (volatile long k = 0;; k++) {',
    '    }',
    '  printf("depth %d\\n", depth(60));',
    '  return 0;',
    '}',
    '',
  ].join('\n'));
  execFileSync('cc', ['-g', '-O0', '-o', gdbProgram, `${gdbProgram}.c`]);
}
const inferiorPid = (text) => Number(/^pid (\d+)$/m.exec(text)?.[1]);

test('gdb: run answers with the breakpoint hit; bt, next, continue, a y/n question, paging, quit', { skip: noGdb }, async (t) => {
  const r = await start(t, { argv: [...gdbArgv, gdbProgram, 'slow'], env: gdbEnv, rows: 24, yield_ms: WAIT_MS });
  assert.match(r.output, /\(gdb\) $/, JSON.stringify(r));
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const id = r.execution_id;
  assert.match((await line(id, 'break square')).output, /^break square\nBreakpoint 1 at .*prog\.c, line 4\.\n\(gdb\) $/);
  // Before: the answer came at "Starting program: ..." (quiet while the
  // inferior worked), waiting_for_input false, and the breakpoint later.
  const run = await line(id, 'run');
  assert.match(run.output, /Starting program: [^]*\npid \d+\n[^]*Breakpoint 1, square \(v=0\) at .*prog\.c:4\n/, JSON.stringify(run));
  atPrompt(run, '(gdb) ');
  assert.equal(run.message, undefined, run.message);
  const pid = inferiorPid(run.output);
  const bt = await line(id, 'bt');
  assert.match(bt.output, /#0 +square \(v=0\) at .*prog\.c:4\n#1 .* in main \(/, JSON.stringify(bt));
  // next leaves square; it stops at the breakpoint if the loop calls it again.
  atPrompt(await line(id, 'next'), '(gdb) ');
  const next = await line(id, 'continue');
  assert.match(next.output, /^continue\nContinuing\.\n\nBreakpoint 1, square \(v=[12]\)/, JSON.stringify(next));
  atPrompt(next, '(gdb) ');
  atPrompt(await line(id, 'delete'), 'Delete all breakpoints? (y or n) ');
  atPrompt(await line(id, 'y'), '(gdb) ');
  atPrompt(await line(id, 'break depth if n == 0'), '(gdb) ');
  const deep = await line(id, 'continue');
  assert.match(deep.output, /Breakpoint 2, depth \(n=0\)/, JSON.stringify(deep));
  // 62 frames on a 24-row terminal: gdb pages.
  const paged = await line(id, 'bt');
  assert.match(paged.output, /--Type <RET> for more, q to quit, c to continue without paging--$/, JSON.stringify(paged));
  assert.equal(paged.waiting_for_input, true, JSON.stringify(paged));
  const screen = await call('screen', { execution_id: id });
  assert.match(screen.lines.filter((l) => l !== '').at(-1), /^--Type <RET> for more/, JSON.stringify(screen.lines));
  // c: the rest without paging (one RET shows one more page).
  const rest = await line(id, 'c');
  assert.match(rest.output, /#61 .* in main \(/, JSON.stringify(rest));
  atPrompt(rest, '(gdb) ');
  const quit = await line(id, 'quit');
  assert.match(quit.output, /Inferior 1 \[process \d+\] will be killed\.\n\nQuit anyway\? \(y or n\) $/, JSON.stringify(quit));
  assert.equal(quit.waiting_for_input, true, JSON.stringify(quit));
  const yes = await line(id, 'y');
  assert.equal(yes.status, 'completed', JSON.stringify(yes));
  assert.equal(yes.exit_code, 0, JSON.stringify(yes));
  await assertGone([pid]);
});

test('gdb: a running inferior reads as busy, ctrl-c returns to (gdb), and stop leaves no process', { skip: noGdb }, async (t) => {
  const r = await start(t, { argv: [...gdbArgv, gdbProgram, 'spin'], env: gdbEnv, yield_ms: WAIT_MS });
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const id = r.execution_id;
  const run = await line(id, 'run', { yield_ms: 3000 });
  assert.equal(run.waiting_for_input, false, JSON.stringify(run));
  assert.match(run.message ?? '', /The line's reply has begun, but no prompt followed within yield_ms: prog is not reading its terminal now/, run.message);
  const total = await waitFor(id, 'match', { pattern: '^total 5$', since_seq: 1 });
  assert.equal(total.wait_result, 'matched', JSON.stringify(total));
  const pid = inferiorPid(total.output);
  const interrupted = await call('write', { execution_id: id, keys: ['ctrl-c'], yield_ms: WAIT_MS });
  assert.equal(interrupted.isError, false, interrupted.error);
  // gdb may print after the ^C's quiet moment; its prompt ends the reply.
  let text = interrupted.output;
  let last = interrupted;
  if (!text.endsWith('(gdb) ')) {
    last = await waitFor(id, 'input');
    text += last.output;
  }
  assert.match(text, /Program received signal SIGINT, Interrupt\.\n[^]*\(gdb\) $/, text);
  assert.equal(last.waiting_for_input, true, JSON.stringify(last));
  const gdbPid = r.process_id;
  const stopped = await call('stop', { execution_id: id });
  assert.equal(stopped.stopped, true, JSON.stringify(stopped));
  await assertGone([pid, gdbPid]);
});

test('sqlite3: statements, a statement over lines, box tables on the screen, an error, .quit', { skip: noSqlite }, async (t) => {
  const r = await start(t, { argv: ['sqlite3', path.join(dir, 'a46.db')], yield_ms: WAIT_MS });
  assert.match(r.output, /sqlite> $/, JSON.stringify(r));
  assert.equal(r.waiting_for_input, true, JSON.stringify(r));
  const id = r.execution_id;
  atPrompt(await line(id, 'create table t(a int, b text);'), 'sqlite> ');
  atPrompt(await line(id, "insert into t values (1, 'one'), (2, 'two');"), 'sqlite> ');
  const first = await line(id, 'select a,');
  assert.equal(first.output, 'select a,\n   ...> ', JSON.stringify(first));
  assert.equal(first.waiting_for_input, true, JSON.stringify(first));
  const rows = await line(id, '  b from t order by a;');
  assert.equal(rows.output, '  b from t order by a;\n1|one\n2|two\nsqlite> ', JSON.stringify(rows));
  atPrompt(await line(id, '.mode box'), 'sqlite> ');
  atPrompt(await line(id, 'select * from t;'), 'sqlite> ');
  const screen = await call('screen', { execution_id: id });
  const box = screen.lines.slice(screen.lines.indexOf('sqlite> select * from t;') + 1, -1).filter((l) => l !== '');
  assert.deepEqual(box.slice(0, 6), ['┌───┬─────┐', '│ a │  b  │', '├───┼─────┤', '│ 1 │ one │', '│ 2 │ two │', '└───┴─────┘'], JSON.stringify(screen.lines));
  const error = await line(id, 'select * from nosuch;');
  assert.equal(error.output, 'select * from nosuch;\nParse error: no such table: nosuch\nsqlite> ', JSON.stringify(error));
  assert.equal(error.waiting_for_input, true, JSON.stringify(error));
  const quit = await line(id, '.quit');
  assert.equal(quit.status, 'completed', JSON.stringify(quit));
});

const nodeRepl = { argv: ['node'], env: { NODE_REPL_HISTORY: '' }, yield_ms: WAIT_MS };

test('node: continuation lines, .editor ended with ctrl-d, a busy loop, ctrl-c once and twice', async (t) => {
  const r = await start(t, nodeRepl);
  atPrompt(r, '> ');
  const id = r.execution_id;
  assert.equal((await line(id, 'function f(x) {')).output, 'function f(x) {\n... ');
  assert.equal((await line(id, '  return x * 3;')).output, '  return x * 3;\n... ');
  assert.equal((await line(id, '}')).output, '}\nundefined\n> ');
  assert.equal((await line(id, 'f(5)')).output, 'f(5)\n15\n> ');
  const editor = await line(id, '.editor');
  assert.match(editor.output, /^\.editor\n\/\/ Entering editor mode/, JSON.stringify(editor));
  // A line alone prints nothing (no prompt): its write waits out yield_ms,
  // and says how to send the block instead.
  const alone = await line(id, 'const g = (a) => a + 100;', { yield_ms: 300 });
  assert.equal(alone.output, 'const g = (a) => a + 100;\n', JSON.stringify(alone));
  assert.match(alone.message ?? '', /node's \.editor mode does: send all its lines and keys \["ctrl-d"\] in one write/, alone.message);
  const block = await call('write', { execution_id: id, input: 'g(1)\n', keys: ['ctrl-d'], yield_ms: WAIT_MS });
  assert.match(block.output, /\n101\n> $/, JSON.stringify(block));
  // Computing: not waiting for input, though node's event loop holds the terminal.
  const loop = await line(id, 'while (true) {}', { yield_ms: 500 });
  assert.equal(loop.waiting_for_input, false, JSON.stringify(loop));
  const interrupted = await call('write', { execution_id: id, keys: ['ctrl-c'], yield_ms: WAIT_MS });
  assert.match(interrupted.output, /Script execution was interrupted by `SIGINT`[^]*\n> $/, JSON.stringify(interrupted));
  const once = await call('write', { execution_id: id, keys: ['ctrl-c'], yield_ms: WAIT_MS });
  assert.match(once.output, /\(To exit, press Ctrl\+C again or Ctrl\+D or type \.exit\)\n> $/, JSON.stringify(once));
  const twice = await call('write', { execution_id: id, keys: ['ctrl-c'], yield_ms: WAIT_MS });
  assert.equal(twice.status, 'completed', JSON.stringify(twice));
});

test('in a session: gdb, sqlite3 and node typed in, each back at the shell; close leaves no inferior', { skip: noGdb || noSqlite }, async (t) => {
  const session = await openSession(call, t);
  const gdb = await runIn(session, `DEBUGINFOD_URLS= gdb -q -nx --args ${gdbProgram}`);
  assert.equal(gdb.status, 'backgrounded', JSON.stringify(gdb));
  assert.equal(gdb.waiting_for_input, true, JSON.stringify(gdb));
  assert.match(gdb.output, /\(gdb\) $/, JSON.stringify(gdb));
  atPrompt(await line(session, 'break square'), '(gdb) ');
  const run = await line(session, 'run');
  assert.match(run.output, /Breakpoint 1, square \(v=0\)/, JSON.stringify(run));
  atPrompt(run, '(gdb) ');
  atPrompt(await line(session, 'quit'), 'Quit anyway? (y or n) ');
  const back = await line(session, 'y');
  assert.equal(back.prompt_ready, true, JSON.stringify(back));
  assert.equal((await runIn(session, 'echo gdb-status=$?')).output, 'gdb-status=0\n');

  const sqlite = await runIn(session, 'sqlite3');
  assert.match(sqlite.output, /sqlite> $/, JSON.stringify(sqlite));
  assert.equal((await line(session, 'select 6 * 7;')).output, 'select 6 * 7;\n42\nsqlite> ');
  assert.equal((await line(session, '.quit')).prompt_ready, true);

  const node = await runIn(session, 'NODE_REPL_HISTORY= node');
  assert.match(node.output, /> $/, JSON.stringify(node));
  assert.equal((await line(session, '6 * 7')).output, '6 * 7\n42\n> ');
  assert.equal((await line(session, '.exit')).prompt_ready, true);

  // A live inferior stopped at a breakpoint when the session closes.
  await runIn(session, `DEBUGINFOD_URLS= gdb -q -nx --args ${gdbProgram}`);
  await line(session, 'break square');
  const again = await line(session, 'run');
  atPrompt(again, '(gdb) ');
  const pids = [inferiorPid(again.output)];
  const closed = await call('close', { execution_id: session });
  assert.equal(closed.closed, true, JSON.stringify(closed));
  await assertGone(pids);
});
