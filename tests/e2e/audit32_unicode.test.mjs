// End-to-end regression tests from the thirty-second audit: programs that
// print non-ASCII text (CJK, accents, emoji), judged by what a person's
// terminal shows (tmux at the same size is the reference for the screen)
// and by what an agent expects of a pattern over that text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { serverForFile, startAgentty, waiterFor, WAIT_MS } from './lib/mcp-client.mjs';
import {
  TOKEN, Tmux, launchBrowser, openPage, openTerminal, parseUrl, waitForLine,
} from './lib/web-helpers.mjs';

const UTF8 = { LANG: 'C.UTF-8' };

const server = serverForFile();
const call = server.call;
const start = (t, args) => server.agent.startCommand(t, args);
const waitFor = waiterFor(call);

// What tmux shows once `script` (bash) has run in a cols x rows pane:
// its rows, trailing blanks trimmed.
function tmuxLinesAfter(t, script, { cols, rows }) {
  const tmux = new Tmux();
  t.after(() => { tmux.kill(); rmSync(tmux.dir, { recursive: true, force: true }); });
  const tmuxCall = `tmux -S '${tmux.socket}' -f /dev/null wait-for`;
  tmux.run('new-session', '-d', '-s', 'main', '-x', String(cols), '-y', String(rows),
    'env', 'TERM=xterm-256color', 'LANG=C.UTF-8',
    'bash', '-c', `${tmuxCall} go; ${script}; ${tmuxCall} -S done; exec sleep 600`);
  tmux.run('set', '-t', 'main', 'status', 'off');
  tmux.run('resize-window', '-t', 'main', '-x', String(cols), '-y', String(rows));
  tmux.run('wait-for', '-S', 'go');
  tmux.run('wait-for', 'done');
  return tmux.run('capture-pane', '-p', '-t', 'main').split('\n').slice(0, rows)
    .map((line) => line.replace(/ +$/, ''));
}

test('a narrow character printed over either half of a wide one blanks the other half, as in tmux', async (t) => {
  // Over the first half (CHA to column 2), over the second half (column
  // 3), and a wide character over the second half of another. Before the
  // fix the screen and the text showed "aXb" and "a中Xb": everything after
  // the edit one column off from where the program put it.
  const script = String.raw`printf 'a\xe4\xb8\xadb\033[2GX\n'; printf 'a\xe4\xb8\xadb\033[3GX\n'; ` +
    String.raw`printf '\xe4\xb8\xad\xe6\x96\x87b\033[2G\xe5\xad\x97\n'`;
  const size = { cols: 20, rows: 5 };
  const r = await start(t, { argv: ['bash', '-c', script], env: UTF8, ...size, yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  const screen = await call('screen', { execution_id: r.execution_id });
  assert.deepEqual(screen.lines, tmuxLinesAfter(t, script, size));
  assert.deepEqual(screen.lines.slice(0, 3), ['aX b', 'a Xb', ' 字 b']);
  assert.equal(r.output, 'aX b\na Xb\n 字 b\n', 'the text view reads as the screen');
});

test('erasing a wide character in a cooked-mode read (the kernel echoes one \\b \\b) reads as tmux shows it', async (t) => {
  // The tty driver with IUTF8 erases the whole character but echoes one
  // column's "\b \b": the terminal is left with a blank where the wide
  // character was, and the next letter one column right of it.
  const r = await start(t, {
    argv: ['bash', '-c', 'read -r line; printf "got <%s>\\n" "$line"'], env: UTF8, cols: 20, rows: 5, yield_ms: 0,
  });
  const id = r.execution_id;
  await waitFor(id, 'input');
  await call('write', { execution_id: id, input: 'a中' });
  await call('write', { execution_id: id, keys: ['backspace'] });
  await call('write', { execution_id: id, input: 'b', newline: true });
  assert.equal((await waitFor(id, 'exit')).wait_result, 'exited');
  const screen = await call('screen', { execution_id: id });
  const script = String.raw`printf 'a\xe4\xb8\xad\b \bb\r\ngot <ab>\r\n'`;
  assert.deepEqual(screen.lines, tmuxLinesAfter(t, script, { cols: 20, rows: 5 }));
  assert.deepEqual(screen.lines.slice(0, 2), ['a b', 'got <ab>']);
  const all = await call('read', { execution_id: id, since_seq: 1 });
  assert.equal(all.output, 'a b\ngot <ab>\n');
});

test('wait(match) and explore grep read \\S, \\w and \\b over non-ASCII letters as Unicode-aware greps do', async (t) => {
  const r = await start(t, {
    argv: ['bash', '-c', 'printf "café crème\\n中文 字\\nnaïve\\n"; exec sleep 600'], env: UTF8, yield_ms: 0,
  });
  const id = r.execution_id;
  assert.equal((await waitFor(id, 'match', { pattern: '^naïve$', since_seq: 1 })).wait_result, 'matched');
  // \S without PCRE2_UCP and with PCRE2_MATCH_INVALID_UTF failed on any
  // non-ASCII character in PCRE2 10.42's JIT (the interpreter matched).
  for (const [pattern, text] of [['^\\S+ cr\\S+$', 'café crème'], ['^\\S\\S \\S$', '中文 字'],
    ['\\bcafé\\b', 'café'], ['^na\\w+ve$', 'naïve'], ['\\W字', ' 字'], ['cr[[:alpha:]]{3}', 'crème']]) {
    const w = await waitFor(id, 'match', { pattern, since_seq: 1 });
    assert.equal(w.wait_result, 'matched', `${pattern}: ${JSON.stringify(w)}`);
    assert.equal(w.match.text, text, pattern);
    const grep = await call('explore', { execution_id: id, op: 'grep', pattern });
    assert.equal(grep.isError, false, grep.error);
    assert.equal(grep.matches.length, 1, `${pattern}: ${JSON.stringify(grep)}`);
  }
});

test('a deny rule with \\S refuses a command whose argument starts with a non-ASCII letter', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_DENY_COMMAND_REGEX: 'rm\\s+-rf\\s+\\S' } });
  t.after(() => agent.client.close());
  for (const command of ['rm -rf ./x', 'rm -rf ébauche', 'rm -rf 中文']) {
    const r = await agent.call('execute', { command: `echo ${command}`, side_effects: ['NONE'], yield_ms: WAIT_MS });
    assert.equal(r.isError, true, `${command}: ${JSON.stringify(r)}`);
    assert.equal(r.status, 'failed_to_start', command);
    assert.match(r.error, /AGENTTY_DENY_COMMAND_REGEX/);
  }
});

test('C1 controls written as UTF-8 (Windows-1252 quotes read as Latin-1) do not eat the character before them', async (t) => {
  // "don\u0092t": libvterm drew U+0092 -1 columns wide, so the screen read
  // "dot"; tmux and the text view show "dont".
  const script = String.raw`printf 'don\xc2\x92t stop\nA\xc2\x85B|\n'`;
  const size = { cols: 20, rows: 4 };
  const r = await start(t, { argv: ['bash', '-c', script], env: UTF8, ...size, yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  assert.equal(r.output, 'dont stop\nAB|\n');
  const screen = await call('screen', { execution_id: r.execution_id });
  assert.deepEqual(screen.lines, tmuxLinesAfter(t, script, size));
  assert.deepEqual(screen.lines.slice(0, 2), ['dont stop', 'AB|']);
});

test('lines that scrolled off keep the repaired wide-character halves', async (t) => {
  // 12 lines on 4 rows: most go to the scrollback, read back from its own
  // copy of the cells.
  const script = String.raw`for i in $(seq 10 21); do printf 'x\xe4\xb8\xady%d\033[5Dz\n' $i; done`;
  const r = await start(t, { argv: ['bash', '-c', script], env: UTF8, cols: 20, rows: 4, yield_ms: WAIT_MS });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  const expected = Array.from({ length: 12 }, (_, i) => `xz y${i + 10}`);
  assert.equal(r.output, `${expected.join('\n')}\n`);
  const screen = await call('screen', { execution_id: r.execution_id, scrollback_lines: 100 });
  assert.deepEqual([...screen.scrollback, ...screen.lines].filter((line) => line !== ''), expected);
});

test('the terminal and replay pages drop UTF-8 C1 controls too: DCS/OSC no longer hide the output after them', async (t) => {
  // xterm.js acts on U+0090 (DCS) and U+009D (OSC) as C1 controls: the live
  // page showed nothing after them (here "after" never appeared) and U+0085
  // started a new line, while `screen` showed every line.
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  const browser = await launchBrowser();
  let id;
  t.after(async () => {
    if (id) await agent.call('stop', { execution_id: id, signal: 'SIGKILL' });
    await browser.close();
    await agent.client.close();
  });
  const script = String.raw`read -r go; printf 'don\xc2\x92t|A\xc2\x85B|\xc2\x9d0;t\007C|\n'; ` +
    String.raw`printf 'D\xc2\x90x\n'; printf 'after\n'; exec sleep 600`;
  const r = await agent.call('execute', { argv: ['bash', '-c', script], env: UTF8, side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.isError, false, r.error);
  id = r.execution_id;
  const expected = ['go', 'dont|AB|0;tC|', 'Dx', 'after'];
  const context = await browser.newContext();
  const { page, problems } = await openTerminal(context, r.terminal_url);
  // Typed once the page watches: the lines arrive as live output, not in
  // the first snapshot.
  await agent.call('write', { execution_id: r.execution_id, input: 'go', newline: true });
  const w = await agent.call('wait', { execution_id: r.execution_id, until: 'match', pattern: '^after$', since_seq: 1, timeout_ms: WAIT_MS });
  assert.equal(w.wait_result, 'matched', JSON.stringify(w));
  const screen = await agent.call('screen', { execution_id: r.execution_id });
  assert.deepEqual(screen.lines.filter((line) => line !== ''), expected);
  await waitForLine(page, 'after', WAIT_MS);
  const shown = (await page.evaluate(() => window.__agentty.screenText())).split('\n').map((l) => l.trimEnd());
  assert.deepEqual(shown.filter((line) => line !== ''), expected);
  assert.deepEqual(problems, []);
  await context.close();

  // The recording keeps the characters; the replay shows what the live page does.
  await agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' });
  assert.equal((await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: WAIT_MS })).wait_result, 'exited');
  const replayContext = await browser.newContext();
  const replay = await openPage(replayContext, `${parseUrl(r.terminal_url).origin}/r/${r.execution_id}#token=${TOKEN}`);
  await replay.page.waitForSelector('body[data-loaded="yes"]', { timeout: WAIT_MS });
  await replay.page.click('#end');
  await replay.page.waitForSelector('body[data-finished="yes"]', { timeout: WAIT_MS });
  const replayed = (await replay.page.evaluate(() => window.__agentty.viewportText())).split('\n').map((l) => l.trimEnd());
  assert.deepEqual(replayed.filter((line) => line !== ''), expected);
  assert.deepEqual(replay.problems, []);
  await replayContext.close();
});
