// End-to-end tests from the fifty-seventh audit: REAL developer tools
// installed on this machine (ninja, make, cmake, gcc, git, man, less, curl,
// dd, python3/pip, top, tmux), not emulations, run through agentty. What the
// agent reads (`output`, `wait`, `read`) is judged against what a person
// sees in a terminal (`screen` of the same execution: scrollback and rows)
// and, where the tool prints the same lines without a terminal, against its
// own output then (its colours and redraws aside). audit49 has make with one
// error, git commit/add -p; audit54 has dd, git clone and curl's meter in
// execute; audit31 has watch and a pager's refusal in a session: not repeated.
// A tool that is not installed skips its test, saying so. A test marked
// `todo` asserts what a person reads where agentty does not (yet) give it;
// its comment quotes what the agent read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import {
  brief, agenttyWithStderr, installed, openSession, readWholeText, serverForFile, sessionRunner, tempDirForRun,
  waiterFor, WAIT_MS,
} from './lib/mcp-client.mjs';

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);
const run = sessionRunner(call);
const waitFor = waiterFor(call);

const needs = (...programs) => {
  const missing = programs.filter((p) => !installed(p));
  return missing.length ? `needs ${missing.join(', ')} (not installed)` : false;
};

// The lines of a text (its final LF ends the last line, it starts none).
const linesOf = (text) => (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
// A person does not see blanks at a line's end; the screen leaves them out.
const trimmed = (lines) => lines.map((l) => l.trimEnd());
// ESC, CR and BS: none is left in what a person reads.
const CONTROLS = /[\u001b\r\x08]/;
const stripSgr = (text) => text.replace(/\u001b\[[0-9;]*[mK]/g, '');

// What the terminal shows for an execution: its scrollback and rows,
// without the empty rows below the last text.
async function screenLines(id) {
  const s = await call('screen', { execution_id: id, scrollback_lines: 10000 });
  assert.equal(s.isError, false, s.error);
  const all = [...(s.scrollback ?? []), ...s.lines];
  while (all.length && all.at(-1) === '') all.pop();
  return all;
}

// The screen's lines a session command printed: after the last prompt line
// that ends with the command, up to the next prompt.
async function commandOnScreen(session, command) {
  const all = await screenLines(session);
  const at = all.findLastIndex((l) => l.endsWith(` ${command}`));
  assert.ok(at >= 0, `the command line on the screen: ${JSON.stringify(all.slice(-5))}`);
  const prompt = all[at].slice(0, all[at].length - command.length).trimEnd();
  const end = all.findIndex((l, i) => i > at && l.startsWith(prompt));
  // The prompt too, not enumerable: the lines compare as a plain array.
  return Object.defineProperty(all.slice(at + 1, end < 0 ? undefined : end), 'prompt', { value: prompt });
}

// Under `make test` the environment says make runs nested (MAKELEVEL and a
// jobserver in MAKEFLAGS): a make, or ninja through cmake, would differ.
const noMake = { ...process.env };
for (const name of ['MAKELEVEL', 'MAKEFLAGS', 'MFLAGS']) delete noMake[name];
// The tool's own output without a terminal (stdout and stderr together, as
// a terminal interleaves them), and its exit status.
function plain(command, cwd) {
  const r = spawnSync('bash', ['-c', `${command} 2>&1`], { cwd, encoding: 'utf8', env: noMake });
  return { out: r.stdout, status: r.status };
}
const unsetMake = 'env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS';

const execute = async (args) => {
  const r = await call('execute', { side_effects: ['NONE'], yield_ms: WAIT_MS, ...args });
  assert.equal(r.isError, false, r.error);
  return r;
};

// ====================================================================== ninja
// A person sees ninja's "smart terminal" status line ("\r[3/10] CC f2.o\e[K")
// redrawn in place: one line, the last edge; a command's output (gcc's
// coloured diagnostics) is printed below the status line that started it.

// Eight small C files, f4 with a warning and f6 with an error, and a link.
function ninjaProject() {
  const dir = tempDirForRun('agentty-e2e-a57-ninja-');
  for (let i = 0; i < 8; i++) writeFileSync(path.join(dir, `f${i}.c`), `int f${i}(void) { return ${i}; }\n`);
  writeFileSync(path.join(dir, 'f4.c'), 'int f4(void) { int unused; return 4; }\n');
  writeFileSync(path.join(dir, 'f6.c'), 'int f6(void) { return undefined_thing; }\n');
  writeFileSync(path.join(dir, 'main.c'), 'int main(void) { return 0; }\n');
  const objects = [...Array(8).keys()].map((i) => `f${i}.o`).concat('main.o');
  writeFileSync(path.join(dir, 'build.ninja'), [
    'rule cc', '  command = gcc -Wall -fdiagnostics-color=always -c $in -o $out', '  description = CC $out',
    'rule link', '  command = gcc $in -o $out', '  description = LINK $out',
    ...objects.map((o) => `build ${o}: cc ${o.replace(/\.o$/, '.c')}`),
    `build prog: link ${objects.join(' ')}`, '',
  ].join('\n'));
  return dir;
}
const isStatus = (line) => /^\[\d+\/\d+\] /.test(line);

test('ninja -k 0 with a warning and an error: the text is the screen, the diagnostics those ninja prints without a terminal, exit code 1', {
  skip: needs('ninja', 'gcc'),
}, async () => {
  const dir = ninjaProject();
  const r = await execute({ argv: ['ninja', '-j2', '-k', '0'], cwd: dir, cols: 160 });
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.exit_code, 1, brief(r));
  assert.doesNotMatch(r.output, CONTROLS, r.output);
  const lines = linesOf(r.output);
  assert.deepEqual(trimmed(lines), await screenLines(r.execution_id), r.output);
  // The tool did draw a status line and colours: it saw a terminal.
  const raw = await call('read', { execution_id: r.execution_id, since_seq: 1, format: 'raw', max_output_bytes: 1 << 20 });
  assert.match(raw.output, /\r\[\d+\/10\] CC f\d\.o\u001b\[K/);
  assert.match(raw.output, /\u001b\[01;31m\u001b\[Kerror: /);
  // Every diagnostic line once, none lost (ninja -j2 may finish edges in
  // another order; ninja prints each edge's output whole).
  execFileSync('rm', ['-f', ...readdirSync(dir).filter((f) => f.endsWith('.o')).map((f) => path.join(dir, f))]);
  const alone = plain('ninja -j2 -k 0', dir);
  assert.equal(alone.status, 1);
  const diagnostics = (ls) => ls.filter((l) => !isStatus(l)).sort();
  assert.deepEqual(diagnostics(trimmed(lines)), diagnostics(trimmed(linesOf(stripSgr(alone.out)))));
  assert.equal(lines.filter((l) => l.startsWith('FAILED: f6.o')).length, 1, r.output);
  assert.equal(lines.at(-1), 'ninja: build stopped: cannot make progress due to previous errors.');
  // The status lines read are the ones a person still sees: the one above
  // each edge's output, and the last one drawn.
  assert.ok(lines.filter(isStatus).length <= 3, r.output);
});

test('ninja that outlives yield_ms: the answer is its status line now, the wait its last one, once', {
  skip: needs('ninja'),
}, async (t) => {
  const dir = tempDirForRun('agentty-e2e-a57-slow-');
  writeFileSync(path.join(dir, 'build.ninja'), ['rule slow', '  command = sleep 0.4 && touch $out',
    '  description = STEP $out', ...[1, 2, 3, 4, 5, 6].map((i) => `build s${i}: slow`), ''].join('\n'));
  const r = await start(t, { argv: ['ninja', '-j1'], cwd: dir, yield_ms: 1000 });
  assert.equal(r.status, 'backgrounded', brief(r));
  // At most one status line, unterminated: the line a person sees drawing.
  assert.match(r.output, /^(\[[0-6]\/6\] STEP s[1-6])?$/, r.output);
  const mid = await waitFor(r.execution_id, 'match', { pattern: '^\\[[4-6]/6\\] STEP' });
  assert.equal(mid.wait_result, 'matched', brief(mid));
  assert.match(mid.output, /^\[[4-6]\/6\] STEP s[4-6]$/m, mid.output);
  const done = await waitFor(r.execution_id, 'exit');
  assert.equal(done.exit_code, 0, brief(done));
  assert.match(done.output, /(^|\n)\[6\/6\] STEP s6\n$/, done.output);
  assert.equal(await readWholeText(call, r.execution_id), '[6/6] STEP s6\n');
  assert.deepEqual(await screenLines(r.execution_id), ['[6/6] STEP s6']);
});

// ctrl-c at the status line: a person sees "[0/2] STEP s1^C" (the terminal
// echoes it after the status line), then ninja's own line; exit code 2.
test('ctrl-c to ninja mid-build: the echo ends the status line, ninja says it was interrupted, exit code 2', {
  skip: needs('ninja'),
}, async (t) => {
  const dir = tempDirForRun('agentty-e2e-a57-int-');
  writeFileSync(path.join(dir, 'build.ninja'), ['rule slow', '  command = sleep 5 && touch $out',
    '  description = STEP $out', 'build s1: slow', 'build s2: slow', ''].join('\n'));
  const r = await start(t, { argv: ['ninja', '-j1'], cwd: dir, yield_ms: 300 });
  assert.equal(r.status, 'backgrounded', brief(r));
  const drawn = await waitFor(r.execution_id, 'match', { pattern: 'STEP s1', since_seq: 1 });
  assert.equal(drawn.wait_result, 'matched', brief(drawn));
  const stopped = await call('write', { execution_id: r.execution_id, keys: ['ctrl-c'] });
  const done = stopped.status === 'completed' ? stopped : await waitFor(r.execution_id, 'exit');
  assert.equal(done.exit_code, 2, brief(done));
  const text = await readWholeText(call, r.execution_id);
  assert.equal(text, '[0/2] STEP s1^C\nninja: build stopped: interrupted by user.\n');
  assert.deepEqual(linesOf(text), await screenLines(r.execution_id));
});

test('cmake configure, then a build and a failing build through ninja in a session: each command\'s lines and exit code', {
  skip: needs('cmake', 'ninja', 'gcc'),
}, async (t) => {
  const dir = tempDirForRun('agentty-e2e-a57-cmake-');
  writeFileSync(path.join(dir, 'CMakeLists.txt'), 'cmake_minimum_required(VERSION 3.16)\nproject(a57 C)\nadd_executable(app main.c util.c)\n');
  writeFileSync(path.join(dir, 'util.c'), 'int util(void) { return 1; }\n');
  writeFileSync(path.join(dir, 'main.c'), 'int util(void);\nint main(void) { return util() - 1; }\n');
  const id = await openSession(call, t);
  await run(id, `cd ${dir} && unset MAKELEVEL MAKEFLAGS MFLAGS`);
  const configure = await run(id, 'cmake -S . -B build -G Ninja');
  assert.equal(configure.exit_code, 0, brief(configure));
  const conf = linesOf(configure.output);
  assert.ok(conf.every((l) => l.startsWith('-- ')), configure.output);
  assert.ok(conf.some((l) => l.startsWith('-- Configuring done')), configure.output);
  assert.equal(conf.at(-1), `-- Build files have been written to: ${dir}/build`);
  assert.deepEqual(conf, await commandOnScreen(id, 'cmake -S . -B build -G Ninja'));
  // A person sees one status line, redrawn to the last edge.
  const build = await run(id, 'cmake --build build');
  assert.equal(build.exit_code, 0, brief(build));
  assert.equal(build.output, '[3/3] Linking C executable app\n');
  writeFileSync(path.join(dir, 'util.c'), 'int util(void) { return nope; }\n');
  const failed = await run(id, 'cmake --build build');
  assert.equal(failed.exit_code, 1, brief(failed));
  assert.doesNotMatch(failed.output, CONTROLS);
  const lines = linesOf(failed.output);
  assert.equal(lines[0], '[1/2] Building C object CMakeFiles/app.dir/util.c.o');
  assert.equal(lines[1], 'FAILED: CMakeFiles/app.dir/util.c.o ');
  assert.equal(lines.filter((l) => l.endsWith("error: ‘nope’ undeclared (first use in this function)")).length, 1, failed.output);
  assert.equal(lines.at(-1), 'ninja: build stopped: subcommand failed.');
  const again = await run(id, 'echo after-build');
  assert.equal(again.output, 'after-build\n');
});

// ======================================================================= make
test('make -k -j2 -O with two failing files: every line once, as make prints them without a terminal, exit code 2', {
  skip: needs('make', 'gcc'),
}, async () => {
  const dir = tempDirForRun('agentty-e2e-a57-make-');
  writeFileSync(path.join(dir, 'Makefile'),
    'CFLAGS = -Wall -fdiagnostics-color=always\nall: a.o b.o c.o d.o\n%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n');
  writeFileSync(path.join(dir, 'a.c'), 'int a(void) { return missing_a; }\n');
  writeFileSync(path.join(dir, 'b.c'), 'int b(void) { return missing_b }\n');
  writeFileSync(path.join(dir, 'c.c'), 'int c(void) { int u; return 3; }\n');
  writeFileSync(path.join(dir, 'd.c'), 'int d(void) { return 4; }\n');
  const r = await execute({ command: `${unsetMake} make -k -j2 -Otarget`, cwd: dir, cols: 160 });
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.exit_code, 2, brief(r));
  assert.doesNotMatch(r.output, CONTROLS, r.output);
  const lines = linesOf(r.output);
  assert.deepEqual(trimmed(lines), await screenLines(r.execution_id), r.output);
  assert.equal(lines.at(-1), "make: Target 'all' not remade because of errors.");
  for (const target of ['a.o', 'b.o']) assert.equal(lines.filter((l) => l === `make: *** [Makefile:4: ${target}] Error 1`).length, 1, r.output);
  execFileSync('rm', ['-f', ...['c.o', 'd.o'].map((f) => path.join(dir, f))]);
  const alone = plain('make -k -j2 -Otarget', dir);
  assert.equal(alone.status, 2);
  assert.deepEqual([...lines].sort(), linesOf(stripSgr(alone.out)).sort());
});

// ======================================================================== git
// A git repository with 48 commits (more than a 40-row screen holds), a
// branch merged back, and a change; made once, only read by the tests.
let repo;
function gitRepo() {
  if (repo) return repo;
  const dir = tempDirForRun('agentty-e2e-a57-git-');
  const env = { ...process.env, GIT_AUTHOR_NAME: 'a57', GIT_AUTHOR_EMAIL: 'a57@example.invalid',
    GIT_COMMITTER_NAME: 'a57', GIT_COMMITTER_EMAIL: 'a57@example.invalid' };
  execFileSync('bash', ['-ec', `git -c init.defaultBranch=main init -q
    for i in $(seq 1 45); do echo "line $i" >> f.txt; git add f.txt; git commit -qm "commit number $i"; done
    git checkout -qb topic; echo topic > g.txt; git add g.txt; git commit -qm "topic work"
    git checkout -q main; echo main > h.txt; git add h.txt; git commit -qm "main work"
    git merge -q --no-edit topic
    echo changed >> f.txt`], { cwd: dir, env, stdio: 'pipe' });
  const git = (...args) => execFileSync('git', args, { cwd: dir, stdio: 'pipe', encoding: 'utf8' });
  repo = { dir, git };
  return repo;
}

// execute gives git GIT_PAGER=cat: no pager stops it, and the coloured
// graph reads as the same lines git prints into a pipe.
test('git log --graph --color and git diff --color in execute: completed, no pager, the lines git prints without a terminal', {
  skip: needs('git'),
}, async () => {
  const { dir, git } = gitRepo();
  const log = await execute({ command: 'git log --graph --color --oneline --decorate', cwd: dir });
  assert.equal(log.status, 'completed', brief(log));
  assert.equal(log.exit_code, 0);
  assert.doesNotMatch(log.output, CONTROLS);
  assert.equal(log.output, git('log', '--graph', '--oneline', '--decorate'));
  assert.match(log.output, /^\|\\ {2}\n/m, 'the merge is drawn');
  const raw = await call('read', { execution_id: log.execution_id, since_seq: 1, format: 'raw', max_output_bytes: 1 << 20 });
  assert.match(raw.output, /\u001b\[3[1-6]m\|/, 'git coloured the graph');
  const diff = await execute({ command: 'git diff --color', cwd: dir });
  assert.equal(diff.exit_code, 0);
  assert.equal(diff.output, git('diff'));
  assert.deepEqual(linesOf(diff.output), await screenLines(diff.execution_id));
});

// In a session git runs its pager (Debian's `pager`, i.e. less, with
// LESS=FRX): a log longer than the screen stops at less's ":" prompt; a
// short one (-F) ends at once, as for a person.
test('git log in a session: a long log stops in the pager, the answer is the page on the screen and says q quits; a short log completes', {
  skip: needs('git'),
}, async (t) => {
  const { dir, git } = gitRepo();
  const id = await openSession(call, t);
  // git's own default pager, whatever the environment running the tests.
  await run(id, `cd ${dir} && unset PAGER GIT_PAGER LESS`);
  const long = await run(id, 'git log --oneline --decorate');
  assert.equal(long.status, 'backgrounded', brief(long));
  assert.equal(long.waiting_for_input, true, brief(long));
  assert.match(long.message, /It is a pager \([^)]+\): it reads keys, not lines; write input "q" quits it/, long.message);
  const page = linesOf(long.output);
  assert.equal(page.at(-1), ':', long.output);
  const whole = linesOf(git('log', '--oneline', '--decorate'));
  assert.deepEqual(page.slice(0, -1), whole.slice(0, page.length - 1), long.output);
  assert.deepEqual(page, await commandOnScreen(id, 'git log --oneline --decorate'));
  const quit = await call('write', { execution_id: id, input: 'q' });
  assert.equal(quit.isError, false, quit.error);
  const back = quit.prompt_ready ? quit : await waitFor(id, 'exit');
  assert.equal(back.command_exit_code, 0, brief(back));
  assert.doesNotMatch(quit.output + (back === quit ? '' : back.output), /commit number/, 'nothing of the log again');
  const short = await run(id, 'git log --oneline --decorate -3');
  assert.equal(short.status, 'completed', brief(short));
  assert.equal(short.output, git('log', '--oneline', '--decorate', '-3'));
  const diff = await run(id, 'git diff');
  assert.equal(diff.exit_code, 0, brief(diff));
  assert.equal(diff.output, git('diff'));
});

// ===================================================================== pagers
const noManLs = (!installed('man') && 'needs man') ||
  (spawnSync('man', ['-w', 'ls']).status !== 0 && 'no manual page for ls (docs excluded from this system)');

// execute gives man PAGER=cat: groff's bold and underline arrive as
// overstrikes ("N\bNA\bA", "_\bO"), which a terminal shows as the letters.
test('man ls in execute: completed, overstrikes read as the letters a person sees, the lines man prints without a terminal', {
  skip: noManLs,
}, async () => {
  // Without a MANPAGER of the environment running the tests (see the todo
  // below): this is about execute's PAGER=cat.
  const r = await execute({ command: 'env -u MANPAGER man ls', cols: 120 });
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.exit_code, 0);
  assert.doesNotMatch(r.output, CONTROLS);
  const raw = await call('read', { execution_id: r.execution_id, since_seq: 1, format: 'raw', max_output_bytes: 4096 });
  assert.match(raw.output, /N\x08NA\x08AM\x08ME\x08E/, 'man overstruck NAME for the terminal');
  const lines = linesOf(r.output);
  assert.ok(lines.includes('NAME') && lines.includes('       ls [OPTION]... [FILE]...'), r.output.slice(0, 400));
  assert.deepEqual(trimmed(lines), await screenLines(r.execution_id));
  assert.equal(r.output, plain('env -u MANPAGER MANWIDTH=120 man ls').out);
});

test('man ls in a session: the pager\'s first page, alt_screen, and a message that q quits it; q gives the prompt back', {
  skip: noManLs,
}, async (t) => {
  const id = await openSession(call, t);
  await run(id, 'unset MANPAGER PAGER');
  const r = await run(id, 'man ls');
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.alt_screen, true, brief(r));
  assert.match(r.message, /write input "q" quits it/, r.message);
  const shown = await call('screen', { execution_id: id });
  assert.equal(shown.alt_screen, true);
  assert.match(shown.lines.at(-1), /^ Manual page ls\(1\) line 1 .*q to quit/);
  // The page flattened: the rows with text, in order (the text view adds
  // no blank lines for the jump to the status row).
  assert.deepEqual(linesOf(r.output).filter((l) => l !== ''), shown.lines.filter((l) => l !== ''));
  const quit = await call('write', { execution_id: id, input: 'q' });
  assert.equal(quit.isError, false, quit.error);
  const back = quit.prompt_ready ? quit : await waitFor(id, 'exit');
  assert.equal(back.command_exit_code, 0, brief(back));
  assert.equal((await call('screen', { execution_id: id })).alt_screen, false);
  assert.equal((await run(id, 'echo after-man')).output, 'after-man\n');
});

// `less FILE` started by execute: a person sees less's full screen and knows
// q quits it. The answer comes at once (waiting_for_input, alt_screen).
test('less FILE in execute: answered at once with the first page, q ends it with exit code 0', {
  skip: needs('less'),
}, async (t) => {
  const file = path.join(tempDirForRun('agentty-e2e-a57-less-'), 'notes.txt');
  writeFileSync(file, Array.from({ length: 200 }, (_, i) => `note ${i + 1}\n`).join(''));
  const r = await start(t, { argv: ['less', file], rows: 20 });
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.equal(r.alt_screen, true, brief(r));
  const shown = await call('screen', { execution_id: r.execution_id });
  assert.deepEqual(shown.lines.slice(0, 19), Array.from({ length: 19 }, (_, i) => `note ${i + 1}`));
  // In a session the same pager gets "It is a pager (less): it reads keys,
  // not lines; write input "q" quits it". agentty of session 46 answered
  // here: "It waits for
  // input (the foreground program, less, reads the terminal ...). Answer
  // with write (...; keys for ctrl-c, arrows...), or wait/read to follow it,
  // stop to end it. For a password, handoff to a person. It draws a full
  // screen ...": nothing says it is a pager that q quits, and a "wait" to
  // follow it only runs out (less never ends by itself).
  await t.test('the message says it is a pager and that input "q" quits it, as in a session', () => {
    assert.match(r.message, /pager/, r.message);
    assert.match(r.message, /"q" quits it/, r.message);
  });
  const quit = await call('write', { execution_id: r.execution_id, input: 'q' });
  const done = quit.status === 'completed' ? quit : await waitFor(r.execution_id, 'exit');
  assert.equal(done.exit_code, 0, brief(done));
});

// execute sets PAGER=cat (and GIT_PAGER) so that no command it starts stops
// in a pager, but many people set MANPAGER in their profile, which man reads
// before PAGER. An agentty (of session 46) started from such an
// environment: execute(man ls) answered status "backgrounded", waiting_for_input true, alt_screen true,
// message "It waits for input (less (in the foreground process group of
// man) reads the terminal ...": the manual page sits in less, while the
// same `man ls` without MANPAGER completes with the whole page.
test('man ls in execute completes when agentty\'s environment sets MANPAGER', {
  skip: noManLs,
}, async (t) => {
  const agent = await agenttyWithStderr(t, { env: { MANPAGER: 'less' } });
  const r = await agent.run({ command: 'man ls', yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed', brief(r));
  assert.match(r.output, /^NAME$/m);
});

// ===================================================================== python
test('python3 -m unittest with a failure and an error: the report python prints without a terminal, exit code 1, in execute and in a session', async (t) => {
  const dir = tempDirForRun('agentty-e2e-a57-py-');
  writeFileSync(path.join(dir, 'test_calc.py'), [
    'import unittest', '', 'def div(a, b):', '    return a / b', '',
    'class CalcTest(unittest.TestCase):',
    '    def test_ok(self):', '        self.assertEqual(div(6, 3), 2)',
    '    def test_fail(self):', '        self.assertEqual(div(7, 2), 3, "rounding")',
    '    def test_error(self):', '        div(1, 0)', '',
  ].join('\n'));
  const timing = (text) => text.replace(/^Ran 3 tests in \d+\.\d+s$/m, 'Ran 3 tests in Ns');
  const expected = timing(plain('python3 -m unittest -v', dir).out);
  assert.match(expected, /FAILED \(failures=1, errors=1\)\n$/);
  const r = await execute({ command: 'python3 -m unittest -v', cwd: dir });
  assert.equal(r.exit_code, 1, brief(r));
  assert.equal(timing(r.output), expected);
  assert.deepEqual(linesOf(r.output), await screenLines(r.execution_id));
  const id = await openSession(call, t);
  await run(id, `cd ${dir}`);
  const s = await run(id, 'python3 -m unittest -v');
  assert.equal(s.exit_code, 1, brief(s));
  assert.equal(timing(s.output), expected);
});

// Python 3.13 colours an uncaught traceback on a terminal (and not in a
// pipe): the agent reads the lines a pipe gets.
function python313() {
  const candidates = ['/usr/bin/python3.13', '/usr/local/bin/python3.13'];
  const pyenv = process.env.PYENV_ROOT || path.join(homedir(), '.pyenv');
  try {
    for (const v of readdirSync(path.join(pyenv, 'versions')).filter((v) => /^3\.1[3-9]\./.test(v))) {
      candidates.push(path.join(pyenv, 'versions', v, 'bin', 'python3'));
    }
  } catch { /* no pyenv */ }
  return candidates.find((p) => existsSync(p) && spawnSync(p, ['-c', '0']).status === 0);
}
const py313 = python313();

test('a Python 3.13 coloured traceback reads as the traceback python prints into a pipe, exit code 1', {
  skip: !py313 && 'needs python 3.13 or later (coloured tracebacks)',
}, async () => {
  const script = 'def f(x):\n    return 1 / x\nf(0)\n';
  const r = await execute({ argv: [py313, '-c', script] });
  assert.equal(r.exit_code, 1, brief(r));
  const raw = await call('read', { execution_id: r.execution_id, since_seq: 1, format: 'raw' });
  assert.match(raw.output, /\u001b\[1;35mZeroDivisionError\u001b\[0m/, 'python coloured it');
  const piped = spawnSync(py313, ['-c', script], { encoding: 'utf8' });
  assert.equal(r.output, piped.stderr);
  assert.deepEqual(linesOf(r.output), await screenLines(r.execution_id));
});

const hasPip = spawnSync('python3', ['-m', 'pip', '--version']).status === 0;

test('pip list and a failing install (red ERROR lines) read as pip prints them without a terminal', {
  skip: !hasPip && 'needs python3 -m pip',
}, async () => {
  const pip = 'python3 -m pip --disable-pip-version-check';
  const list = await execute({ command: `${pip} list`, cols: 200 });
  assert.equal(list.exit_code, 0);
  assert.equal(list.output, plain(`${pip} list`).out);
  assert.match(list.output, /^Package +Version\n-+ -+\n/);
  const install = await execute({ command: `${pip} install --no-index a57-no-such-package` });
  assert.equal(install.exit_code, 1, brief(install));
  const raw = await call('read', { execution_id: install.execution_id, since_seq: 1, format: 'raw' });
  assert.match(raw.output, /\u001b\[31mERROR: /, 'pip coloured its errors');
  assert.equal(install.output, plain(`${pip} install --no-index a57-no-such-package`).out);
  assert.deepEqual(linesOf(install.output), await screenLines(install.execution_id));
});

// =========================================================== curl, dd, top
test('curl file:// in a session: the meter and the -# bar read as their final rows, and exit code 37 for a missing file', {
  skip: needs('curl'),
}, async (t) => {
  const dir = tempDirForRun('agentty-e2e-a57-curl-');
  writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(20 << 20, 7));
  const id = await openSession(call, t);
  await run(id, `cd ${dir}`);
  const meter = await run(id, 'curl -o /dev/null file://$PWD/big.bin');
  assert.equal(meter.exit_code, 0, brief(meter));
  const lines = linesOf(meter.output);
  assert.equal(lines.length, 3, meter.output);
  assert.match(lines[0], /^ +% Total +% Received/);
  assert.match(lines[2], /^100 20\.0M +100 20\.0M /, meter.output);
  assert.deepEqual(lines, await commandOnScreen(id, 'curl -o /dev/null file://$PWD/big.bin'));
  const bar = await run(id, 'curl -# -o /dev/null file://$PWD/big.bin');
  assert.match(bar.output, /^#+ 100\.0%\n$/, bar.output);
  assert.deepEqual(linesOf(bar.output), await commandOnScreen(id, 'curl -# -o /dev/null file://$PWD/big.bin'));
  const missing = await run(id, 'curl -sS -o /dev/null file://$PWD/missing.bin');
  assert.equal(missing.exit_code, 37, brief(missing));
  assert.equal(missing.output, `curl: (37) Couldn't open file ${dir}/missing.bin\n`);
});

test('dd status=progress in a session past yield_ms: wait reads the last progress line and the totals, as the screen shows', async (t) => {
  const dir = tempDirForRun('agentty-e2e-a57-dd-');
  // A producer slow enough that dd prints a progress line (once a second).
  writeFileSync(path.join(dir, 'produce.sh'), 'for i in 1 2 3; do head -c 2000000 /dev/zero; sleep 0.6; done\n');
  const id = await openSession(call, t);
  await run(id, `cd ${dir}`);
  const command = 'sh produce.sh | dd of=/dev/null bs=64k status=progress';
  const r = await run(id, command, { yield_ms: 700 });
  assert.equal(r.status, 'backgrounded', brief(r));
  const done = await waitFor(id, 'exit');
  assert.equal(done.command_exit_code, 0, brief(done));
  // wait's text runs on to the next prompt when the shell drew it already.
  const shown = await commandOnScreen(id, command);
  const text = linesOf(r.output + done.output).filter((l) => l !== '' && l.trimEnd() !== shown.prompt);
  assert.deepEqual(text, shown);
  assert.equal(text.filter((l) => /records in$/.test(l)).length, 1, done.output);
  assert.match(text.at(-1), /^6000000 bytes \(6\.0 MB, 5\.7 MiB\) copied, \d+\.\d+ s, /);
  assert.ok(text.filter((l) => /copied/.test(l)).length <= 2, done.output);
});

// top (not batch mode) draws one frame with cursor addressing and ends with
// "\e[16;1H\r\n" in a 15-row terminal: the cursor is on the last row
// already, so the move stays there and "\r\n" scrolls once; what follows
// is on the next row. A person sees "    5 root ... kworker/R-sync_wq",
// then "top exit 0". agentty of session 46 read "...kworker/R-sync_wq\n\ntop exit 0\n":
// an empty line the screen does not have. The same bytes by hand:
// printf '1\n2\n3\e[3;1H\r\nX\n' in a 3-row terminal reads "1\n2\n3\n\nX\n",
// the screen shows 1 2 3 X.
test('top -n 1 in a 15-row terminal: exit code 0, no escape left, the header and the process table', {
  skip: needs('top'),
}, async (t) => {
  const r = await execute({ command: 'top -n 1; echo top exit $?', rows: 15, cols: 100 });
  assert.equal(r.exit_code, 0, brief(r));
  assert.doesNotMatch(r.output, CONTROLS);
  const lines = linesOf(r.output);
  assert.match(lines[0], /^top - \d\d:\d\d:\d\d up /);
  assert.ok(lines.some((l) => /^ +PID USER +PR +NI/.test(l)), r.output);
  assert.equal(lines.at(-1), 'top exit 0');
  const screen = await screenLines(r.execution_id);
  await t.test('the text is the screen, line for line', () => {
    assert.deepEqual(trimmed(lines), screen);
  });
});

// top -d 0.2 -n 3 (not batch mode) draws three frames in place: the first
// after a clear, the next two with cursor addressing, redrawing only the
// rows that changed. A person sees the last frame. agentty of session 46 read all three
// frames appended, the later ones with holes: "...  0:01.48 sh\n\nTasks:
// 111 total, ...\n%Cpu(s): 83.9 us, ...\n\n\n\n\n18935 root ... cc1plus
// ...\ntop - 20:43:21 up 13:58, ...\nTasks: 113 total, ...": the "MiB Mem",
// "MiB Swap" and "PID USER" rows, unchanged on the screen, read as empty
// lines in frames 2 and 3, and alt_screen is false, so no message points
// to screen (README: an absolute move "writes the rows as they are").
test('top -d 0.2 -n 3 reads as the last frame the screen shows', {
  skip: needs('top'),
}, async () => {
  const r = await execute({ command: 'top -d 0.2 -n 3; echo top exit $?', rows: 12, cols: 100 });
  assert.equal(r.exit_code, 0, brief(r));
  assert.equal(linesOf(r.output).filter((l) => l.startsWith('%Cpu(s):')).length, 1, r.output);
  assert.deepEqual(trimmed(linesOf(r.output)), await screenLines(r.execution_id));
});

test('version lines (tmux, ninja, cmake, git, curl, make, pip) read as the tools print them without a terminal', async () => {
  const tools = ['tmux -V', 'ninja --version', 'cmake --version', 'git --version', 'curl --version', 'make --version']
    .filter((c) => installed(c.split(' ')[0])).concat(hasPip ? ['python3 -m pip --version'] : []);
  const command = tools.join('; ');
  const r = await execute({ command, cols: 250 });
  assert.equal(r.exit_code, 0, brief(r));
  assert.equal(r.output, plain(command).out);
});
