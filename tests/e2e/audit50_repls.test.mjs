// End-to-end tests from the fiftieth audit: a coding agent driving
// interactive REPLs inside a session (python3, ipython, node, sqlite3,
// tclsh): open, execute(session=) to start the REPL and to type lines into
// it, write/wait/screen/read around it, ctrl-c out of a long computation,
// tracebacks, and leaving the REPL back to the session's shell with exact
// boundaries and the REPL's exit code. Judged by what the agent reads: the
// echo once, results present, nothing lost or duplicated, and status,
// waiting_for_input, message and boundaries that say what really happened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  brief, installed, interruptToPrompt, openSession, serverForFile, sessionRunner, tempDirForRun, waiterFor,
} from './lib/mcp-client.mjs';

const server = serverForFile();
const call = server.call;
const run = sessionRunner(call);
const waitFor = waiterFor(call);

// Starts `command` (a REPL) in session `id` and checks it waits at its prompt.
async function startRepl(id, command) {
  const r = await run(id, command);
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  return r;
}

// ---------------------------------------------------------------- defects
// Found by audit 50; each mended in session 45 but the wide-character wrap
// space (still todo). The comments say what the answers were before.

// In a session running `python3 -q`, execute(session, command='import time;
// time.sleep(3); print("slept")', yield_ms=1000) answers after 1000 ms with
// status "completed", waiting_for_input false, output only the echo, and the
// message "answered once its output went quiet and it waited for input
// again". Nothing of that is so: yield_ms ran out while python still ran the
// line (no prompt came back). The agent takes the line for done, and its next
// execute is refused with "a command is still running ... wait(until="exit")",
// advice that at a REPL waits for the REPL to end, not for its prompt. write
// says it right in the same case ("Nothing came back within yield_ms but the
// echo, and python3 is not reading its terminal now ... Follow it with wait").
// (describe_unfinished in src/mcp/tools/session_execute.cpp sets "completed"
// and that message for every heuristic line, whatever ended the wait.)
test('a REPL line still running when yield_ms runs out is not reported completed', {
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'python3 -q');
  const r = await run(id, 'import time; time.sleep(3); print("slept")', { yield_ms: 1000 });
  assert.equal(r.waiting_for_input, false, brief(r));
  assert.equal(r.output, 'import time; time.sleep(3); print("slept")\n');
  assert.notEqual(r.status, 'completed', brief(r));
  assert.doesNotMatch(r.message, /waited for input again/, r.message);
  assert.match(r.message, /wait/, r.message);
  const done = await waitFor(id, 'input');
  assert.equal(done.output, 'slept\n>>> ');
});

// In a session running `python3 -q`, execute(session, command='for i in
// range(3): print(i * 7)\n') (a one-line compound statement ended by the
// blank line that runs it, as a person types it) answers "completed" with
// output "for i in range(3): print(i * 7)\n... ": the trailing newline is
// trimmed because the rest of the command holds no newline, so the loop
// never runs and the REPL sits at `... `, where the agent's next line joins
// the block. The multi-line form ("for i in range(3):\n    print(i)\n") keeps
// its newline since audit 49; the one-line form needs it just the same.
// (session_execute.cpp: the newline is put back only when the trimmed text
// still holds a '\n'.)
test('a one-line Python compound statement typed with its closing newline runs', {
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'python3 -q');
  const r = await run(id, 'for i in range(3): print(i * 7)\n');
  assert.match(r.output, /\n0\n7\n14\n>>> $/, brief(r));
  const next = await run(id, 'print("after")');
  assert.equal(next.output, 'print("after")\nafter\n>>> ');
});

// In a session running `python3 -q` (readline, no bracketed paste),
// execute(session, command='x = "a<TAB>b"; print(len(x))') answers
// "x = \"ab\"; print(len(x))\n2\n>>> ": the TAB is typed as a key, readline
// tries to complete, rings the bell (BEL in the raw output) and drops it, so
// the code that ran is not the code the agent sent, and no message says so.
// A person pasting it sees the same, but an agent's command is text, not
// keystrokes: a TAB there means a TAB (readline's quoted-insert, ctrl-v TAB,
// types one). sqlite3 gets its TABs through because it turns bracketed paste
// on; node's REPL keeps them too. (typed_bytes in session_execute.cpp.)
test('a TAB inside a line typed into the python3 REPL reaches python', {
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'python3 -q');
  const r = await run(id, 'x = "a\tb"; print(len(x))');
  assert.match(r.output, /\n3\n>>> $/, brief(r));
});

// In a session running `sqlite3`, execute(session, command="select
// 'a<TAB>b';") (sent as a bracketed paste because of the TAB) answers with
// output "select 'select 'a       b';\na\tb\nsqlite> ". readline draws the
// pasted line highlighted, then CR, 8 x CSI C (past "sqlite> ") and draws it
// again: on the terminal (screen) and in read(since_seq=1) the line reads
// "sqlite> select 'a       b';". The answer's text starts at the typed
// line, after the prompt, and replays the CR as if that were column 0, so
// the redraw lands 8 columns into the first drawing. Not the known doubled
// echo of a multi-line paste: one line, garbled. (The answer's page starts
// mid-line: the text view of a page that begins after a prompt does not
// know the columns the prompt took; see text_page.cpp / command_output.)
test('a one-line statement with a TAB typed into sqlite3 is echoed as the screen shows it', {
  skip: !installed('sqlite3') && 'needs sqlite3',
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'sqlite3');
  const r = await run(id, "select 'a\tb';");
  const whole = await call('read', { execution_id: id, since_seq: 1 });
  assert.match(whole.output, /\nsqlite> select 'a {7}b';\na\tb\nsqlite> $/, whole.output);
  assert.match(r.output, /^select 'a {7}b';\na\tb\nsqlite> $/, JSON.stringify(r.output));
});

// In a session running `ipython --no-banner`, execute(session,
// command="import os; os.getpid() and 0") often answers (3 in 5 fresh
// ipythons for the first line, 7 of 20 lines overall) with output
// "In [1]: import os; os.getpid() and 0\nIn [1]: import os; os.getpid() and
// 0\nOut[1]: 0\n\nIn [2]:\n": the echo twice. prompt_toolkit drew the typed
// line, then its reserved rows below (CR CR LF x37, a space, CSI 37 A), then
// redrew the line in place on Enter; the screen shows it once. The text view
// never reopens a line it ended, so the redraw is a second line. Same family
// as the sqlite3 paste (a redraw in place read twice), another program and
// trigger: one plain line, no paste.
test('lines typed into ipython are echoed once', {
  skip: !installed('ipython') && 'needs ipython',
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'ipython --no-banner');
  for (let i = 0; i < 4; i++) {
    const line = `import os; os.getpid() and ${i}`;
    const r = await run(id, line);
    const echoes = r.output.split('\n').filter((l) => l.endsWith(`]: ${line}`)).length;
    assert.equal(echoes, 1, JSON.stringify(r.output));
    assert.match(r.output, new RegExp(`\\nOut\\[\\d+\\]: ${i}\\n`), JSON.stringify(r.output));
  }
});

// In a session, execute(session, command="python3 -q"), execute(session,
// command="1+1"), then write(input="import sys; sys.exit(5)", newline=true):
// the answer shows the shell's prompt again (prompt_ready true,
// command_running false) but has no command_exit_code ("exit code of the
// last finished command"), nor does ps. Without the execute of "1+1" in
// between the same write answers command_exit_code 5, and an execute(session)
// of "echo $?" afterwards prints 5. The heuristic command record the REPL
// line left behind (submitted, then abandoned) seems to stand in for the
// REPL's own as the session's current command (session_fields in
// src/mcp/tools/common.cpp reads shell->current()).
test('write that ends a REPL after an execute into it reports the REPL\'s exit code', {
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'python3 -q');
  assert.equal((await run(id, '1+1')).output, '1+1\n2\n>>> ');
  const w = await call('write', { execution_id: id, input: 'import sys; sys.exit(5)', newline: true });
  assert.equal(w.isError, false, w.error);
  assert.equal(w.prompt_ready, true, brief(w));
  assert.equal(w.command_running, false, brief(w));
  assert.equal(w.command_exit_code, 5, brief(w));
});

// In a session opened with cols=80, with `python3 -q` running,
// execute(session, command='x = "中中…"' with 60 CJK characters) answers
// with an echo that has a space in the middle of the string:
// 'x = "中…中 中…中"'. readline, at the column where a double-width
// character does not fit, writes " ESC[K" to make the terminal wrap; on the
// terminal the ESC[K (cursor in the pending-wrap state) erases that space
// again, and screen's rows hold no such space, but the text view (no right
// margin) kept it. The agent read a space in its own code that is not
// there (len(x) is 60). Mended in session 46: with the terminal's width
// the text view erases at the pending wrap as the terminal does.
test('a long line of wide characters typed into the python3 REPL is echoed without a wrap space', async (t) => {
  const opened = await call('open', { cols: 80, rows: 24 });
  assert.equal(opened.isError, false, opened.error);
  t.after(() => call('close', { execution_id: opened.execution_id }));
  const id = opened.execution_id;
  await startRepl(id, 'python3 -q');
  const line = `x = "${'中'.repeat(60)}"`;
  const r = await run(id, line);
  const count = await run(id, 'print(len(x))');
  assert.equal(count.output, 'print(len(x))\n60\n>>> ');
  const shown = await call('screen', { execution_id: id });
  assert.ok(shown.lines.some((l) => l.endsWith('中"')), JSON.stringify(shown.lines));
  assert.equal(r.output, `${line}\n>>> `);
});

// In a session, execute(session, command='python3 -c "import sys;
// print(len(sys.stdin.readline()))"') (a program that reads a line in the
// terminal's canonical mode), then execute(session, command=5000 x "q")
// answers "completed", exit_code 0, the whole 5000 q echoed and then
// "4096": the terminal kept only 4095 bytes of the line (N_TTY's limit) and
// dropped the rest. The answer says nothing of it; the echo even shows the
// whole line. The README names this limit for execute's `stdin` typed with
// close_stdin=false, but neither execute(session=) nor write warns when the
// line it types into a canonical-mode reader is longer (termios ICANON is
// known to agentty: it uses it for password prompts).
test('a line longer than the terminal\'s 4095-byte line limit typed into a line reader says it was cut', {
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'python3 -c "import sys; print(len(sys.stdin.readline()))"');
  const r = await run(id, 'q'.repeat(5000));
  assert.equal(r.exit_code, 0, brief({ ...r, output: r.output.slice(-40) }));
  assert.match(r.output, /\n4096\n$/);
  assert.match(r.message ?? '', /4095/, r.message);
  // write says it too.
  await startRepl(id, 'python3 -c "import sys; print(len(sys.stdin.readline()))"');
  const w = await call('write', { execution_id: id, input: 'q'.repeat(5000), newline: true });
  assert.match(w.message ?? '', /A typed line is 5000 bytes long.*4095/, w.message);
});

// ------------------------------------------------ behaviours that work

test('python3 REPL in a session: results, a function defined over several lines, a traceback, unicode and a line wider than the terminal', async (t) => {
  const id = await openSession(call, t);
  const start = await startRepl(id, 'python3 -q');
  assert.equal(start.output, '>>> ');
  assert.match(start.message, /python3, reads the terminal/);
  const sum = await run(id, '6*7');
  assert.equal(sum.status, 'completed', brief(sum));
  assert.equal(sum.output, '6*7\n42\n>>> ');
  assert.equal(sum.waiting_for_input, true);
  assert.equal(sum.boundaries, 'heuristic');
  assert.equal(sum.exit_code, null);
  const def = await run(id, 'def f(x):\n    return x * 2\n');
  assert.equal(def.output, 'def f(x):\n...     return x * 2\n... \n>>> ');
  assert.equal((await run(id, 'f(21)')).output, 'f(21)\n42\n>>> ');
  const boom = await run(id, '1/0');
  assert.equal(boom.output, '1/0\nTraceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n' +
    'ZeroDivisionError: division by zero\n>>> ');
  const uni = await run(id, 'print("héllo 中文 🎉")');
  assert.equal(uni.output, 'print("héllo 中文 🎉")\nhéllo 中文 🎉\n>>> ');
  const tabbed = await run(id, 'print("a" + chr(9) + "b")');
  assert.equal(tabbed.output, 'print("a" + chr(9) + "b")\na\tb\n>>> ');
  // 250 characters of code, 300 of output: both wrap on the 120-column
  // terminal, and read as the lines they are.
  const code = `print("${'y'.repeat(250)}" + "z" * 50)`;
  const wide = await run(id, code);
  assert.equal(wide.output, `${code}\n${'y'.repeat(250)}${'z'.repeat(50)}\n>>> `);
  const shown = await call('screen', { execution_id: id });
  assert.ok(shown.lines.includes('>>> f(21)'), JSON.stringify(shown.lines));
});

test('ctrl-c interrupts a long computation in the python3 REPL, which then takes the next line', async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'python3 -q');
  const loop = await run(id, 'n = 0\nwhile True:\n    n += 1\n', { yield_ms: 800 });
  assert.equal(loop.waiting_for_input, false, brief(loop));
  assert.equal(loop.command_running, true);
  const busy = await call('read', { execution_id: id });
  assert.equal(busy.waiting_for_input, false, brief(busy));
  const interrupted = await interruptToPrompt(call, id);
  assert.match(interrupted, /\nKeyboardInterrupt\n>>> $/, JSON.stringify(interrupted));
  const after = await run(id, 'n > 0');
  assert.equal(after.output, 'n > 0\nTrue\n>>> ');
});

test('a slow REPL line written with write is followed with wait(until="input"), which returns its result and the prompt', async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'python3 -q');
  const w = await call('write', {
    execution_id: id, input: 'import time; time.sleep(1.5); print("done")', newline: true, yield_ms: 400,
  });
  assert.equal(w.isError, false, w.error);
  assert.equal(w.output, 'import time; time.sleep(1.5); print("done")\n');
  assert.equal(w.waiting_for_input, false, brief(w));
  assert.match(w.message, /not reading its terminal now[^]*wait/, w.message);
  const done = await waitFor(id, 'input');
  assert.equal(done.wait_result, 'waiting_for_input', brief(done));
  assert.equal(done.output, 'done\n>>> ');
});

test('leaving the python3 REPL: sys.exit(3) answers exit code 3 at the shell\'s marked prompt, ctrl-d returns to it too', async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'python3 -q');
  await run(id, 'x = 1');
  const quit = await run(id, 'import sys; sys.exit(3)');
  assert.equal(quit.status, 'completed', brief(quit));
  assert.equal(quit.exit_code, 3);
  assert.equal(quit.boundaries, 'exact');
  assert.equal(quit.prompt_ready, true);
  assert.equal(quit.command_running, false);
  assert.equal(quit.output, 'import sys; sys.exit(3)\n');
  assert.match(quit.message, /ended the program it was typed into \(python3 -q, exit code 3\)/, quit.message);
  const status = await run(id, 'echo $?');
  assert.equal(status.output, '3\n');
  assert.equal(status.exit_code, 0);
  await startRepl(id, 'python3 -q');
  const eof = await call('write', { execution_id: id, keys: ['ctrl-d'] });
  assert.equal(eof.isError, false, eof.error);
  assert.equal(eof.prompt_ready, true, brief(eof));
  assert.equal(eof.command_running, false, brief(eof));
  assert.equal(eof.command_exit_code, 0, brief(eof));
  const back = await run(id, 'echo back');
  assert.equal(back.output, 'back\n');
  assert.equal(back.boundaries, 'exact');
});

test('node REPL in a session: a function and a loop over several lines, a thrown error, ctrl-c out of a busy loop, process.exit(4)', {
  skip: !installed('node') && 'needs node',
}, async (t) => {
  const id = await openSession(call, t);
  const start = await startRepl(id, 'node');
  assert.match(start.output, /\n> $/);
  const fn = await run(id, 'function f(x) {\n  return x * 2;\n}');
  assert.equal(fn.output, 'function f(x) {\n...   return x * 2;\n... }\nundefined\n> ');
  assert.equal((await run(id, 'f(21)')).output, 'f(21)\n42\n> ');
  const loop = await run(id, 'for (let i = 0; i < 3; i++) {\n  console.log("i=" + i);\n}');
  assert.equal(loop.output, 'for (let i = 0; i < 3; i++) {\n...   console.log("i=" + i);\n... }\ni=0\ni=1\ni=2\nundefined\n> ');
  const thrown = await run(id, 'throw new Error("boom")');
  assert.equal(thrown.output, 'throw new Error("boom")\nUncaught Error: boom\n> ');
  const tab = await run(id, 'JSON.stringify("a\tb")');
  assert.equal(tab.output, 'JSON.stringify("a\tb")\n\'"a\\\\tb"\'\n> ');
  const busy = await run(id, 'while (true) {}', { yield_ms: 800 });
  assert.equal(busy.waiting_for_input, false, brief(busy));
  const interrupted = await interruptToPrompt(call, id);
  assert.match(interrupted, /Script execution was interrupted by `SIGINT`[^]*\n> $/, JSON.stringify(interrupted));
  const quit = await run(id, 'process.exit(4)');
  assert.equal(quit.exit_code, 4, brief(quit));
  assert.equal(quit.boundaries, 'exact');
  assert.equal(quit.output, 'process.exit(4)\n');
});

test('sqlite3 in a session: statements, unicode, a statement continued over two lines, and .quit with exit code 0', {
  skip: !installed('sqlite3') && 'needs sqlite3',
}, async (t) => {
  const dir = tempDirForRun('agentty-a50-sql-');
  const id = await openSession(call, t);
  const start = await startRepl(id, `sqlite3 ${path.join(dir, 't.db')}`);
  assert.match(start.output, /\nsqlite> $/);
  assert.equal((await run(id, 'create table t(a int, b text);')).output, 'create table t(a int, b text);\nsqlite> ');
  await run(id, "insert into t values (1, 'é中🎉');");
  const partial = await run(id, 'select b from t');
  assert.equal(partial.output, 'select b from t\n   ...> ');
  assert.equal(partial.waiting_for_input, true);
  const rest = await run(id, 'where a = 1;');
  assert.equal(rest.output, 'where a = 1;\né中🎉\nsqlite> ');
  const quit = await run(id, '.quit');
  assert.equal(quit.exit_code, 0, brief(quit));
  assert.equal(quit.boundaries, 'exact');
  assert.equal(quit.output, '.quit\n');
});

test('sqlite3: an error is shown with its caret and ctrl-c interrupts a runaway query', {
  skip: !installed('sqlite3') && 'needs sqlite3',
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'sqlite3');
  const bad = await run(id, 'select nosuch;');
  assert.equal(bad.output, 'select nosuch;\nParse error: no such column: nosuch\n  select nosuch;\n         ^--- error here\nsqlite> ');
  const runaway = await run(id, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c;', { yield_ms: 800 });
  assert.equal(runaway.waiting_for_input, false, brief(runaway));
  const interrupted = await interruptToPrompt(call, id);
  assert.match(interrupted, /interrupted[^]*\nsqlite> $/, JSON.stringify(interrupted));
  // sqlite3 exits 1 after a session with errors, as it does in a terminal.
  const quit = await run(id, '.quit');
  assert.equal(quit.exit_code, 1, brief(quit));
  assert.equal(quit.prompt_ready, true);
});

test('ipython in a session: Out[n] results, a block, a traceback, and exit back to the shell with exit code 0', {
  skip: !installed('ipython') && 'needs ipython',
}, async (t) => {
  const id = await openSession(call, t);
  await startRepl(id, 'ipython --no-banner');
  const sum = await run(id, '6*7');
  assert.match(sum.output, /\nOut\[1\]: 42\n/, JSON.stringify(sum.output));
  assert.equal(sum.waiting_for_input, true);
  const block = await run(id, 'for i in range(3):\n    print(i * 7)\n');
  assert.match(block.output, /\n0\n7\n14\n/, JSON.stringify(block.output));
  const boom = await run(id, '1/0');
  assert.match(boom.output, /ZeroDivisionError: division by zero\n/, JSON.stringify(boom.output));
  assert.doesNotMatch(boom.output, /\x1b/);
  const quit = await run(id, 'exit');
  assert.equal(quit.exit_code, 0, brief(quit));
  assert.equal(quit.boundaries, 'exact');
  assert.equal(quit.prompt_ready, true);
  assert.equal((await run(id, 'echo back')).output, 'back\n');
});

test('tclsh in a session: a proc over several lines, and exit 7 answers exit code 7', {
  skip: !installed('tclsh') && 'needs tclsh',
}, async (t) => {
  const id = await openSession(call, t);
  const start = await startRepl(id, 'tclsh');
  assert.equal(start.output, '% ');
  const proc = await run(id, 'proc f {x} {\n  return [expr {$x*2}]\n}');
  assert.equal(proc.output, 'proc f {x} {\n  return [expr {$x*2}]\n}\n% ');
  assert.equal((await run(id, 'f 21')).output, 'f 21\n42\n% ');
  const quit = await run(id, 'exit 7');
  assert.equal(quit.exit_code, 7, brief(quit));
  assert.equal(quit.output, 'exit 7\n');
  assert.equal(quit.boundaries, 'exact');
});
