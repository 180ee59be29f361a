// End-to-end tests from the fifty-third audit: a coding agent driving
// programs that ASK things (read -p chains with defaults, bash select menus,
// rm -i, ssh-keygen's passphrase and overwrite questions, openssl req's
// subject prompts, python input()/getpass, git's credential prompts, node
// readline questions), with and without a session. Judged by what the agent
// reads: execute returns at the prompt with waiting_for_input at once, the
// prompt text exactly, write answers with the next prompt, passwords never
// in the text or the recording, and the right exit code at the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  brief, installed, openSession, serverForFile, sessionRunner, tempDirForRun, waiterFor, WAIT_MS,
} from './lib/mcp-client.mjs';
import { freePort } from './lib/free-port.mjs';

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);
const run = sessionRunner(call);
const waitFor = waiterFor(call);
const write = (id, args) => call('write', { execution_id: id, ...args });

// The asciicast recording of an execution (read once it has ended, when the
// recorder has written its last events).
const castOf = (id) => readFileSync(path.join(server.agent.stateDir, 'recordings', `${id}.cast`), 'utf8');

// A program at a prompt, returned early by execute: checks it answered
// backgrounded with waiting_for_input well before yield_ms.
async function startAtPrompt(t, args) {
  const began = Date.now();
  const r = await start(t, { yield_ms: WAIT_MS, ...args });
  assert.equal(r.status, 'backgrounded', brief(r));
  assert.equal(r.waiting_for_input, true, brief(r));
  assert.ok(Date.now() - began < WAIT_MS / 2, `returned at the prompt, not after yield_ms: ${brief(r)}`);
  return r;
}

// The rest of an execution once it ends (a write's answer may already be it).
async function ended(id, answer) {
  return answer.status === 'running' ? waitFor(id, 'exit') : answer;
}

// ---------------------------------------------------------------- defects
// Found by audit 53; all mended in session 45. The comments say what the
// answers were before.

// execute(command='seq 1 20000; read -p "Do you want to continue? [Y/n] " a')
// (apt-get's package list, terraform's plan, then the question): the answer
// is backgrounded, waiting_for_input true, capped, with output "1\n2\n...
// 3517\n" and a hint "More output is waiting (108930 bytes)"; neither
// output, output_tail nor message holds the question the program waits on.
// The agent is told to answer a prompt it cannot see (or pages 100 KB to
// find it). output_tail is only added once the execution has finished
// (mcp/tools/output_page.cpp read_fields: `page.capped &&
// request.tail_preview && execution.finished()`); a program waiting for
// input no longer grows its output either, so its end (the prompt) belongs
// in the answer the same way. Also write/wait(until="input") answers.
test('a capped answer at a prompt still shows the prompt it waits on', {
}, async (t) => {
  const r = await startAtPrompt(t, { command: 'seq 1 20000; read -p "Do you want to continue? [Y/n] " a; echo "a=$a"' });
  assert.equal(r.capped, true, brief(r));
  const shown = `${r.output}${r.output_tail ?? ''}${r.message ?? ''}`;
  assert.match(shown, /Do you want to continue\? \[Y\/n\] /, 'the question is in the answer');
});

// open; execute(session, 'read -s -p "Password: " p; echo; echo len=${#p}')
// (waits for input, message "It asks for a password"); write(input:
// "NoEnterPw2") without Enter: the answer has no message (the "typed but not
// submitted" note a visible prompt gets); then execute(session, "echo hi")
// is NOT refused: it answers completed, exit_code 0, output "\nlen=17\n",
// message "The line ended the program it was typed into": "echo hi" was
// appended to the pending password (10 + 7 bytes) and submitted as it, and
// never ran. The README promises that execute(session=) is refused while
// text typed without Enter waits in a program (it would be appended), as it
// is at a visible prompt. mcp/tools/unsubmitted_input.cpp only counts the
// pending text while the screen's cursor row ends with it, which a prompt
// that does not echo (ICANON on, ECHO off: Execution::hides_typed_line) never
// shows.
test('execute(session=) is refused while a password typed without Enter waits at a hidden prompt', {
}, async (t) => {
  const id = await openSession(call, t);
  const asked = await run(id, 'read -s -p "Password: " p; echo; echo len=${#p}');
  assert.equal(asked.waiting_for_input, true, brief(asked));
  const typed = await write(id, { input: 'NoEnterPw2' });
  assert.equal(typed.isError, false, typed.error);
  assert.match(typed.message ?? '', /not submitted/, brief(typed));
  const refused = await call('execute', { session: id, command: 'echo hi', side_effects: ['NONE'] });
  assert.equal(refused.isError, true, brief(refused));
  assert.match(refused.error, /would be appended/, refused.error);
});

// Also seen by audit 53: execute(session, "ls /") while `read -s` waited at
// its password prompt typed "ls /" as the password (answered completed,
// exit 0, "The line ended the program it was typed into"). Sent to sudo or
// ssh, a command line would go out as a password. It is refused now.
test('execute(session=) at a prompt that hides what is typed is refused; write answers it', async (t) => {
  const id = await openSession(call, t);
  const asked = await run(id, 'read -s -p "Password: " p; echo; echo len=${#p}');
  assert.equal(asked.waiting_for_input, true, brief(asked));
  const refused = await call('execute', { session: id, command: 'ls /', side_effects: ['NONE'] });
  assert.equal(refused.isError, true, brief(refused));
  assert.match(refused.error, /asks for a password .* Answer it with write \(newline=true\), handoff/, refused.error);
  const answered = await write(id, { input: 'pw', newline: true });
  assert.match(answered.output, /len=2\n/, brief(answered));
});

// open(cols: 60); execute(session, 'read -p "Path to the configuration file
// to import: " p; echo "p=$p"'); write(input:
// "/etc/myapp/conf.d/production-overrides.yaml") without Enter: prompt and
// answer wrap onto a second row, and the answer has no "typed but not
// submitted" message; execute(session, "echo hi") then answers completed,
// exit_code 0, output "echo hi\np=/etc/myapp/conf.d/production-
// overrides.yamlecho hi\n": the command was appended to the answer, the
// path given to the program is wrong and "echo hi" never ran. The check in
// mcp/tools/unsubmitted_input.cpp compares the pending text with the cursor's
// screen row alone, which holds only the wrapped tail of it.
test('an answer typed without Enter that wraps past the terminal width is still called unsubmitted', {
}, async (t) => {
  const opened = await call('open', { cols: 60 });
  assert.equal(opened.prompt_ready, true, brief(opened));
  t.after(() => call('close', { execution_id: opened.execution_id }));
  const id = opened.execution_id;
  const asked = await run(id, 'read -p "Path to the configuration file to import: " p; echo "p=$p"');
  assert.equal(asked.waiting_for_input, true, brief(asked));
  const typed = await write(id, { input: '/etc/myapp/conf.d/production-overrides.yaml' });
  assert.match(typed.message ?? '', /not submitted/, brief(typed));
  const refused = await call('execute', { session: id, command: 'echo hi', side_effects: ['NONE'] });
  assert.equal(refused.isError, true, brief(refused));
  assert.match(refused.error, /would be appended/, refused.error);
});

// ------------------------------------------------ behaviours that work

test('a chain of read -p prompts: Enter alone takes the default, each write gets the next prompt, and the exit code comes last', async (t) => {
  const r = await startAtPrompt(t, {
    command: 'read -p "Name [bob]: " n; n=${n:-bob}; read -p "Age: " g; echo "hi $n $g"; exit 3',
  });
  assert.equal(r.output, 'Name [bob]: ');
  assert.match(r.message, /waits for input \(the foreground program, bash, reads the terminal/, r.message);
  const second = await write(r.execution_id, { newline: true });
  assert.equal(second.output, '\nAge: ');
  assert.equal(second.waiting_for_input, true, brief(second));
  const last = await write(r.execution_id, { input: '42', newline: true });
  const done = await ended(r.execution_id, last);
  assert.equal(done.exit_code, 3, brief(done));
  const all = await call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.equal(all.output, 'Name [bob]: \nAge: 42\nhi bob 42\n');
});

test('prompts that come after CR progress, on stderr, or in colour read as the bare prompt text', async (t) => {
  const progress = await startAtPrompt(t, {
    command: 'printf "\\rLoading 50%%"; sleep 0.2; printf "\\rLoading 100%%\\r\\e[K"; read -p "Name: " n; echo "n=$n"',
  });
  assert.equal(progress.output, 'Name: ');
  const stderr = await startAtPrompt(t, { command: 'printf "Continue? [y/N] " >&2; read a; echo "ans=$a"; [ "$a" = y ]' });
  assert.equal(stderr.output, 'Continue? [y/N] ');
  const no = await write(stderr.execution_id, { input: 'n', newline: true });
  const noEnd = await ended(stderr.execution_id, no);
  assert.equal(noEnd.exit_code, 1, brief(noEnd));
  const colour = await startAtPrompt(t, {
    command: "read -p $'\\e[1;32m?\\e[0m \\e[1mProject name:\\e[0m \\e[2m(demo)\\e[0m ' n; echo \"n=${n:-demo}\"",
  });
  assert.equal(colour.output, '? Project name: (demo) ');
  const taken = await write(colour.execution_id, { newline: true });
  const takenEnd = await ended(colour.execution_id, taken);
  assert.equal(takenEnd.exit_code, 0);
  assert.match(taken.output + (takenEnd === taken ? '' : takenEnd.output), /^\nn=demo\n$/);
});

test('a bash select menu in a session: a bad choice asks again, Enter redraws the menu, and the choice sets the exit code', async (t) => {
  const id = await openSession(call, t);
  const menu = await run(id, 'PS3="Environment? "; select e in staging production; do [ -n "$e" ] && break; echo "invalid: $REPLY"; done; echo "deploying to $e"; [ "$e" = staging ]');
  assert.equal(menu.status, 'backgrounded', brief(menu));
  assert.equal(menu.waiting_for_input, true, brief(menu));
  assert.equal(menu.output, '1) staging\n2) production\nEnvironment? ');
  const bad = await write(id, { input: '7', newline: true });
  assert.equal(bad.output, '7\ninvalid: 7\nEnvironment? ');
  const redraw = await write(id, { newline: true });
  assert.equal(redraw.output, '\n1) staging\n2) production\nEnvironment? ');
  const chosen = await write(id, { input: '2', newline: true });
  const done = chosen.command_running === false ? chosen : await waitFor(id, 'exit');
  assert.equal(done.command_exit_code, 1, brief(done));
  assert.match(`${chosen.output}${done === chosen ? '' : done.output}`, /^2\ndeploying to production\n/);
});

test('rm -i asks per file: each answer gets the next question, and only the confirmed file goes', async (t) => {
  const dir = tempDirForRun('agentty-a53-rm-');
  writeFileSync(path.join(dir, 'a'), '');
  writeFileSync(path.join(dir, 'b'), '');
  const r = await startAtPrompt(t, { command: 'rm -i a b; echo rc=$?', cwd: dir });
  assert.equal(r.output, "rm: remove regular empty file 'a'? ");
  assert.match(r.message, /rm \(in the foreground process group of bash\) reads the terminal/, r.message);
  const next = await write(r.execution_id, { input: 'y', newline: true });
  assert.equal(next.output, "y\nrm: remove regular empty file 'b'? ");
  assert.equal(next.waiting_for_input, true, brief(next));
  const last = await write(r.execution_id, { input: 'n', newline: true });
  const done = await ended(r.execution_id, last);
  assert.equal(done.exit_code, 0);
  assert.equal(existsSync(path.join(dir, 'a')), false);
  assert.equal(existsSync(path.join(dir, 'b')), true);
});

test('ssh-keygen: the passphrase asked twice is never shown or recorded, a mismatch asks again, and declining the overwrite exits 1', {
  skip: !installed('ssh-keygen') && 'needs ssh-keygen',
}, async (t) => {
  const key = path.join(tempDirForRun('agentty-a53-key-'), 'id');
  const secret = 'Zq9-passphrase-A53';
  const r = await startAtPrompt(t, { command: `ssh-keygen -q -t ed25519 -C a53 -f ${key}` });
  assert.equal(r.output, 'Enter passphrase (empty for no passphrase): ');
  const again = await write(r.execution_id, { input: secret, newline: true });
  assert.equal(again.output, '\nEnter same passphrase again: ');
  const mismatch = await write(r.execution_id, { input: 'not-the-same', newline: true });
  assert.equal(mismatch.output, '\nPassphrases do not match.  Try again.\nEnter passphrase (empty for no passphrase): ');
  await write(r.execution_id, { input: secret, newline: true });
  const last = await write(r.execution_id, { input: secret, newline: true });
  const done = await ended(r.execution_id, last);
  assert.equal(done.exit_code, 0, brief(done));
  const text = await call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.doesNotMatch(text.output, /Zq9|not-the-same/);
  const cast = castOf(r.execution_id);
  assert.doesNotMatch(cast, /Zq9|not-the-same/);
  assert.equal(cast.match(/"i", "\[hidden input\]"/g)?.length, 4, cast);
  assert.ok(existsSync(`${key}.pub`));

  const overwrite = await startAtPrompt(t, { command: `ssh-keygen -q -t ed25519 -f ${key}` });
  assert.match(overwrite.output, new RegExp(`${key} already exists\\.\\nOverwrite \\(y/n\\)\\? $`), overwrite.output);
  const declined = await write(overwrite.execution_id, { input: 'n', newline: true });
  const declinedEnd = await ended(overwrite.execution_id, declined);
  assert.equal(declinedEnd.exit_code, 1, brief(declinedEnd));
});

test('openssl req: every subject prompt is answered in turn and the request carries the answers', {
  skip: !installed('openssl') && 'needs openssl',
}, async (t) => {
  const dir = tempDirForRun('agentty-a53-csr-');
  const r = await startAtPrompt(t, { command: 'openssl req -new -newkey rsa:2048 -nodes -keyout k.pem -out r.csr', cwd: dir });
  assert.match(r.output, /Country Name \(2 letter code\) \[AU\]:$/, r.output);
  const prompts = [
    ['DE', /^DE\nState or Province Name \(full name\) \[Some-State\]:$/],
    ['', /^\nLocality Name \(eg, city\) \[\]:$/],
    ['Berlin', /^Berlin\nOrganization Name \(eg, company\) \[Internet Widgits Pty Ltd\]:$/],
    ['Acme', /^Acme\nOrganizational Unit Name \(eg, section\) \[\]:$/],
    ['.', /^\.\nCommon Name \(e\.g\. server FQDN or YOUR name\) \[\]:$/],
    ['example.test', /^example\.test\nEmail Address \[\]:$/],
    ['a@b.c', /A challenge password \[\]:$/],
    ['', /^\nAn optional company name \[\]:$/],
  ];
  for (const [answer, next] of prompts) {
    const w = await write(r.execution_id, { input: answer, newline: true });
    assert.equal(w.waiting_for_input, true, brief(w));
    assert.match(w.output, next);
  }
  const last = await write(r.execution_id, { newline: true });
  const done = await ended(r.execution_id, last);
  assert.equal(done.exit_code, 0, brief(done));
  const subject = await call('execute', { command: 'openssl req -in r.csr -noout -subject', cwd: dir, side_effects: ['NONE'], yield_ms: WAIT_MS });
  assert.equal(subject.output, 'subject=C = DE, ST = Some-State, L = Berlin, O = Acme, CN = example.test, emailAddress = a@b.c\n');
});

test('python input() then getpass: the name is echoed, the password neither shown nor recorded, and stdin given to getpass is named as not read', async (t) => {
  const secret = 'Tr0ub4dor&3-A53';
  const r = await startAtPrompt(t, {
    argv: ['python3', '-c', 'import getpass\nu = input("User: ")\np = getpass.getpass("Password for %s: " % u)\nprint("len", len(p), "user", u)'],
  });
  assert.equal(r.output, 'User: ');
  const pw = await write(r.execution_id, { input: 'alice', newline: true });
  assert.equal(pw.output, 'alice\nPassword for alice: ');
  const last = await write(r.execution_id, { input: secret, newline: true });
  const done = await ended(r.execution_id, last);
  assert.equal(done.exit_code, 0, brief(done));
  const text = await call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.equal(text.output, `User: alice\nPassword for alice: \nlen ${secret.length} user alice\n`);
  const cast = castOf(r.execution_id);
  assert.doesNotMatch(cast, /Tr0ub4dor/);
  assert.match(cast, /"i", "alice\\r"/);
  assert.match(cast, /"i", "\[hidden input\]"/);

  const piped = await startAtPrompt(t, {
    argv: ['python3', '-c', 'import getpass; print(len(getpass.getpass("Key: ")))'], stdin: 'from-stdin\n',
  });
  assert.equal(piped.output, 'Key: ');
  assert.match(piped.message, /The stdin you gave went to its standard input, but a password prompt[^]*reads the terminal/, piped.message);
  const typed = await write(piped.execution_id, { input: 'abc', newline: true });
  const typedEnd = await ended(piped.execution_id, typed);
  assert.equal(typedEnd.exit_code, 0);
  assert.match(typed.output + (typedEnd === typed ? '' : typedEnd.output), /^\n3\n$/);
});

test('git clone over http asks for a username and a hidden password, and a wrong one ends with exit code 128', {
  skip: !installed('git') && 'needs git',
}, async (t) => {
  const dir = tempDirForRun('agentty-a53-git-');
  const serverScript = path.join(dir, 'auth.py');
  writeFileSync(serverScript, [
    'import http.server, sys',
    'class H(http.server.BaseHTTPRequestHandler):',
    '    def do_GET(self):',
    '        self.send_response(401)',
    '        self.send_header("WWW-Authenticate", \'Basic realm="x"\')',
    '        self.send_header("Content-Length", "0")',
    '        self.end_headers()',
    '    def log_message(self, *a): pass',
    's = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H)',
    'print("ready", flush=True)',
    's.serve_forever()',
  ].join('\n'));
  const port = await freePort();
  const http = spawn('python3', [serverScript, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => http.kill());
  await new Promise((resolve, reject) => {
    http.stdout.once('data', resolve);
    http.once('exit', (code) => reject(new Error(`auth server exited (${code})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const r = await startAtPrompt(t, {
    command: `git -c credential.helper= -c core.askPass= clone ${url}/x.git cl`,
    cwd: dir,
    env: { GIT_ASKPASS: '', SSH_ASKPASS: '', GIT_TERMINAL_PROMPT: '1' },
  });
  assert.equal(r.output, `Cloning into 'cl'...\nUsername for '${url}': `);
  const pw = await write(r.execution_id, { input: 'alice', newline: true });
  assert.equal(pw.output, `alice\nPassword for 'http://alice@127.0.0.1:${port}': `);
  const last = await write(r.execution_id, { input: 'WrongPass-A53', newline: true });
  const done = await ended(r.execution_id, last);
  assert.equal(done.exit_code, 128, brief(done));
  const text = await call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.match(text.output, new RegExp(`Password for 'http://alice@127\\.0\\.0\\.1:${port}': \\nfatal: Authentication failed for '${url}/x\\.git/'\\n$`), text.output);
  assert.doesNotMatch(castOf(r.execution_id), /WrongPass/);
});

test('a prompting script in a session: wait(until="input") finds each prompt, the password stays hidden, and command_exit_code is the script\'s', async (t) => {
  const dir = tempDirForRun('agentty-a53-ask-');
  const script = path.join(dir, 'ask.sh');
  writeFileSync(script, [
    '#!/bin/bash',
    'read -p "Name [bob]: " n; n=${n:-bob}',
    'read -s -p "Password: " p; echo',
    'read -p "Proceed with $n (${#p} chars)? [y/N] " ok',
    '[ "$ok" = y ] || { echo aborted; exit 3; }',
    'echo "created $n"',
  ].join('\n'), { mode: 0o755 });
  const id = await openSession(call, t);
  const started = await run(id, script, { yield_ms: 0 });
  assert.equal(started.status, 'backgrounded', brief(started));
  const first = await waitFor(id, 'input');
  assert.equal(first.wait_result, 'waiting_for_input', brief(first));
  assert.equal(first.output, 'Name [bob]: ');
  await write(id, { input: 'carol', newline: true, yield_ms: 0 });
  const second = await waitFor(id, 'input');
  assert.equal(second.output, 'carol\nPassword: ');
  const third = await write(id, { input: 'Pw-sess-A53', newline: true });
  assert.equal(third.output, '\nProceed with carol (11 chars)? [y/N] ');
  const last = await write(id, { input: 'n', newline: true });
  const done = last.command_running === false ? last : await waitFor(id, 'exit');
  assert.equal(done.command_exit_code, 3, brief(done));
  const text = await call('read', { execution_id: id, since_seq: started.start_seq });
  assert.doesNotMatch(text.output, /Pw-sess/);
  assert.match(text.output, /Name \[bob\]: carol\nPassword: \nProceed with carol \(11 chars\)\? \[y\/N\] n\naborted\n/);
  await call('close', { execution_id: id });
  assert.doesNotMatch(castOf(id), /Pw-sess/);
});

test('node readline questions (npm init style): each answer gets the next question and Enter takes the default', async (t) => {
  const dir = tempDirForRun('agentty-a53-node-');
  const file = path.join(dir, 'q.js');
  writeFileSync(file, [
    "const rl = require('readline').createInterface({ input: process.stdin, output: process.stdout });",
    "rl.question('package name: (demo) ', (a) => {",
    "  console.log('name=' + (a || 'demo'));",
    "  rl.question('version: (1.0.0) ', (b) => {",
    "    console.log('version=' + (b || '1.0.0'));",
    '    rl.close();',
    '    process.exitCode = 2;',
    '  });',
    '});',
  ].join('\n'));
  const r = await startAtPrompt(t, { argv: ['node', file] });
  assert.equal(r.output, 'package name: (demo) ');
  const next = await write(r.execution_id, { input: 'my-pkg', newline: true });
  assert.equal(next.output, 'my-pkg\nname=my-pkg\nversion: (1.0.0) ');
  assert.equal(next.waiting_for_input, true, brief(next));
  const last = await write(r.execution_id, { newline: true });
  const done = await ended(r.execution_id, last);
  assert.equal(done.exit_code, 2, brief(done));
  const text = await call('read', { execution_id: r.execution_id, since_seq: 1 });
  assert.equal(text.output, 'package name: (demo) my-pkg\nname=my-pkg\nversion: (1.0.0) \nversion=1.0.0\n');
});

// A question asked above a status row (dpkg's conffile question under apt's
// "Progress: [ 50%]" row): the output ends with the blank rows and the
// status, as the screen reads top down, so the question is not its last
// line. The message names the cursor's row, in execute's answer, a
// session's, write's and wait(until="input")'s.
test('a question asked above a status row: the message names the row the cursor waits on', async (t) => {
  const dir = tempDirForRun('agentty-a53-status-');
  const file = path.join(dir, 'q.py');
  writeFileSync(file, [
    'import sys',
    'for n in (1, 2):',
    '    sys.stdout.write(f"unpacking {n}\\n\\x1b7\\x1b[12;1HProgress: [ {50 * n}%]\\x1b8")',
    '    sys.stdout.flush()',
    '    input(f"*** foo{n}.conf (Y/N) [default=N] ? ")',
    '',
  ].join('\n'));
  const named = (r, n) => assert.match(r.message ?? '',
    new RegExp(`The cursor waits on the row "\\*\\*\\* foo${n}\\.conf \\(Y/N\\) \\[default=N\\] \\?" \\(row \\d+ of \\d+\\)`), brief(r));
  const r = await startAtPrompt(t, { argv: ['python3', file], rows: 12 });
  assert.match(r.output, /\nProgress: \[ 50%\]$/, brief(r));
  named(r, 1);
  const next = await write(r.execution_id, { input: 'N', newline: true });
  assert.equal(next.waiting_for_input, true, brief(next));
  named(next, 2);
  const id = await openSession(call, t);
  const inSession = await run(id, `python3 ${file}`, { yield_ms: WAIT_MS });
  assert.equal(inSession.waiting_for_input, true, brief(inSession));
  named(inSession, 1);
  await write(id, { input: 'N', newline: true, yield_ms: 0 });
  const waited = await call('wait', { execution_id: id, until: 'input', timeout_ms: WAIT_MS });
  assert.equal(waited.wait_result, 'waiting_for_input', brief(waited));
  named(waited, 2);
  // A plain prompt with nothing under it gets no such note.
  const plain = await startAtPrompt(t, { command: 'read -p "name? " a' });
  assert.doesNotMatch(plain.message, /cursor waits/, brief(plain));
});
