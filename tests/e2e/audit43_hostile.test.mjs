// Audit 43: hostile and badly-behaved programs and output. Programs that
// flood the screen model with sequences libvterm is slow at, print bytes no
// terminal should get (NUL, invalid and overlong UTF-8, lone surrogates,
// thousands of combining marks), flood the terminal with queries, set
// titles and names made of HTML and control characters, use up every
// pseudo-terminal, or leave the terminal raw: the server answers every
// other call promptly, says what happened, and the web pages show it all as
// text. (Programs that leave the process group or ignore signals:
// audit40_job_control; patterns PCRE2 gives up on: audit15_fuzz.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agenttyWithStderr, assertFramesInOrder, openSession, readWholeText, serverForFile, sessionRunner, startAgentty, waiterFor } from './lib/mcp-client.mjs';
import { TOKEN, eventually, launchBrowser, openPage, openTerminal, parseUrl } from './lib/web-helpers.mjs';

const server = serverForFile({ args: ['--no-web'] });
const call = server.call;
const run = sessionRunner(call);
const waitFor = waiterFor(call);
const brief = (r) => JSON.stringify({ ...r, raw: undefined, output: r.output?.slice(0, 300) });
const isRoot = process.getuid?.() === 0;

// How long the slowest of `count` calls of a cheap tool took.
async function slowestCall(count, tool, args) {
  let slowest = 0;
  for (let i = 0; i < count; ++i) {
    const started = Date.now();
    const r = await call(tool, args);
    assert.equal(r.isError, false, r.error);
    slowest = Math.max(slowest, Date.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));  // spread the probes over the flood
  }
  return slowest;
}

// ---- floods the screen model is slow at ----

// Each rewrites every cell of the screen in libvterm, in 2-3 bytes: a
// megabyte of them held the one event loop for 3-20 s at a time (the screen
// model caught up with a megabyte at once), so every other call, execution
// and viewer waited. Plain text floods were never slow (they skip libvterm).
// Bare clears, resets and alignment tests are now repeats that change
// nothing and never reach libvterm; the one with a letter between is paced.
const SLOW_FLOODS = {
  'full-screen clears (ED 2)': '\\e[2J',
  'terminal resets (RIS)': '\\ec',
  'screen alignment tests (DECALN)': '\\e#8',
  'screen alignment tests with a letter between (DECALN)': '\\e#8x',
  'reverse index at the top (RI)': '\\eM',
};

for (const [what, sequence] of Object.entries(SLOW_FLOODS)) {
  test(`a program printing ${what} as fast as it can does not hold up other calls`, async (t) => {
    const idle = await call('execute', { command: 'echo idle', side_effects: ['NONE'] });
    assert.equal(idle.status, 'completed', brief(idle));
    const flood = await server.agent.startCommand(t, {
      command: `while :; do printf '${sequence}%.0s' {1..200}; done`, yield_ms: 0,
    });
    // More than a catch-up batch (1 MiB) of it, which took seconds at once.
    // The flood now goes at libvterm's pace: DECALN with a letter between at
    // ~130 KB/s here.
    await eventually(async () => (await call('ps', {})).executions
      .find((e) => e.execution_id === flood.execution_id).latest_seq > (1 << 20) + 100000,
    { timeout: 40000, what: 'over a megabyte of the flood' });
    const slowest = await slowestCall(20, 'screen', { execution_id: idle.execution_id });
    assert.ok(slowest < 1000, `a call on another execution took ${slowest} ms during the flood`);
    // A look at the flood itself catches its screen up: a bounded backlog.
    const started = Date.now();
    const look = await call('screen', { execution_id: flood.execution_id });
    assert.equal(look.isError, false, look.error);
    assert.ok(Date.now() - started < 3000, `screen of the flood took ${Date.now() - started} ms`);
    const stopped = await call('stop', { execution_id: flood.execution_id, signal: 'SIGKILL' });
    assert.equal(stopped.status, 'stopped', brief(stopped));
  });
}

test('a flood slowed for the screen model loses no output: every byte is read back in order', async (t) => {
  // 20000 numbered frames, each a clear and its number: the program is made
  // to wait while the screen catches up, never its output dropped.
  const r = await call('execute', {
    command: "for i in $(seq 1 20000); do printf '\\e[2J\\e[H\\ec%d\\n' $i; done; echo end",
    side_effects: ['NONE'], yield_ms: 50000,
  });
  assert.equal(r.status, 'completed', brief(r));
  const text = await readWholeText(call, r.execution_id);
  assertFramesInOrder(text, 20000);
  assert.match(text, /end\n$/);
  const screen = await call('screen', { execution_id: r.execution_id });
  assert.equal(screen.lines[0], '20000', brief(screen));
  assert.equal(screen.lines[1], 'end', brief(screen));
});

// ---- bytes no terminal should get ----

test('NUL bytes, invalid and overlong UTF-8, lone surrogates and 3000 combining marks read back as text', async () => {
  const r = await call('execute', {
    command: "printf 'a\\0b\\0\\0c\\n'; printf '\\xc0\\xaf|\\xed\\xa0\\x80|\\xff\\xfe|ok\\n'; " +
      "printf 'e'; for i in $(seq 3000); do printf '\\xcc\\x81'; done; echo; echo after",
    side_effects: ['NONE'],
  });
  assert.equal(r.status, 'completed', brief(r));
  const lines = r.output.split('\n');
  assert.equal(lines[0], 'abc', 'NULs are dropped, as a terminal does');
  // An overlong "/" is not a slash; a CESU surrogate is no character.
  assert.match(lines[1], /^\uFFFD+\|\uFFFD+\|\uFFFD+\|ok$/, JSON.stringify(lines[1]));
  assert.doesNotMatch(r.output, /[\uD800-\uDFFF]/u, 'a lone surrogate reached the JSON');
  assert.ok(lines[2].startsWith('e\u0301'), JSON.stringify(lines[2].slice(0, 10)));
  assert.equal(lines[3], 'after');
  const screen = await call('screen', { execution_id: r.execution_id });
  assert.equal(screen.isError, false, screen.error);
  assert.equal(screen.lines[0], 'abc');
  assert.ok(screen.lines[2].startsWith('e\u0301'), JSON.stringify(screen.lines[2].slice(0, 10)));
  assert.ok(screen.lines[2].length < 100, `one cell holds ${screen.lines[2].length} characters`);
  assert.equal(screen.lines[3], 'after');
});

test('a flood of terminal queries (DA, DSR, DECRQM, XTVERSION, colour) is answered, and the program ends', async () => {
  const started = Date.now();
  const r = await call('execute', {
    command: "for i in $(seq 3000); do printf '\\e[c\\e[6n\\e[?1049$p\\e[>c\\e[>q\\e]10;?\\a'; done; echo done",
    side_effects: ['NONE'], yield_ms: 30000,
  });
  assert.equal(r.status, 'completed', brief(r));
  assert.equal(r.exit_code, 0, brief(r));
  assert.ok(Date.now() - started < 20000, `took ${Date.now() - started} ms`);
  // The terminal echoes the replies (the program reads none of them), so
  // `done` need not be the last line.
  const all = await call('read', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 1 << 20 });
  assert.match(all.output, /done\n/, brief(all));
  assert.match(all.output, /\^\[\[\?1;2c/, 'no DA reply came back');
});

test('a title of HTML and control characters is kept as text without the controls; a huge one is not kept', async () => {
  const r = await call('execute', {
    command: "printf '\\e]0;<img src=x onerror=alert(1)>\\x01\\x02\\a'; echo shown",
    side_effects: ['NONE'],
  });
  assert.equal(r.status, 'completed', brief(r));
  const screen = await call('screen', { execution_id: r.execution_id });
  assert.ok(screen.title.startsWith('<img src=x onerror=alert(1)>'), JSON.stringify(screen.title));
  assert.doesNotMatch(screen.title, /[\x00-\x1f\x7f]/, JSON.stringify(screen.title));
  const huge = await call('execute', {
    command: "printf '\\e]2;%s\\a' \"$(head -c 3000000 /dev/zero | tr '\\0' y)\"; echo after",
    side_effects: ['NONE'], yield_ms: 30000,
  });
  assert.equal(huge.status, 'completed', brief(huge));
  const hugeScreen = await call('screen', { execution_id: huge.execution_id });
  assert.ok(hugeScreen.title.length <= 4096, `a title of ${hugeScreen.title.length} bytes kept`);
  assert.ok(hugeScreen.lines.includes('after'), brief(hugeScreen));
});

// ---- the web pages show hostile text as text ----

test('names, commands, purposes and output of HTML and control characters show as text on the dashboard and terminal page', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => agent.client.close());
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const hostile = '<img src=x onerror="window.__injected=1">';
  const r = await agent.call('execute', {
    command: `echo '<script>window.__injected=2</script>'; printf '\\e]0;${hostile}\\a\\e]8;;javascript:window.__injected=3\\alink\\e]8;;\\a\\n'`,
    // (Control characters in a name or purpose are refused: labels.test.mjs.)
    name: `${hostile} red`, purpose: `${hostile}\n<b>bold</b>`, side_effects: ['NONE'],
  });
  assert.equal(r.status, 'completed', brief(r));
  const context = await browser.newContext();
  t.after(() => context.close());
  const { origin } = parseUrl(r.terminal_url);
  const dialogs = [];
  const dashboard = (await openPage(context, `${origin}/#token=${TOKEN}`)).page;
  dashboard.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  await dashboard.waitForFunction((id) => document.querySelector(`tr[data-execution-id="${id}"]`), r.execution_id, { timeout: 15000 });
  const row = await dashboard.evaluate((id) => {
    const tr = document.querySelector(`tr[data-execution-id="${id}"]`);
    return { text: tr.textContent, images: tr.querySelectorAll('img, script, b').length, injected: window.__injected };
  }, r.execution_id);
  assert.equal(row.images, 0, 'markup in the row became elements');
  assert.equal(row.injected, undefined);
  assert.ok(row.text.includes(hostile), row.text);
  assert.ok(row.text.includes('<b>bold</b>'), row.text);

  const terminal = (await openPage(context, r.terminal_url)).page;
  terminal.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  await terminal.waitForFunction(() => (window.__agentty?.screenText() ?? '').includes('link'), null, { timeout: 15000 });
  const page = await terminal.evaluate(() => ({
    heading: document.getElementById('title').textContent,
    title: document.title,
    injected: window.__injected,
    elements: document.querySelectorAll('#title *').length,
  }));
  assert.equal(page.injected, undefined);
  assert.equal(page.elements, 0);
  assert.ok(page.heading.startsWith(hostile), page.heading);
  assert.ok(page.title.startsWith(hostile), page.title);
  assert.deepEqual(dialogs, []);
  assert.equal(await terminal.evaluate(() => window.__injected), undefined);
});

// xterm.js logged every malformed sequence of binary output as a console
// error, thousands a second: the watching page stopped answering for over
// 10 s at a time (with the console watched, as the tests and devtools do).
test('the terminal page of a program printing random bytes stays responsive and logs nothing', async (t) => {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const r = await agent.startCommand(t, { command: 'cat /dev/urandom', yield_ms: 0 });
  t.after(() => agent.client.close());  // after startCommand's stop (hooks run in order)
  const context = await browser.newContext();
  const { page, problems } = await openTerminal(context, r.terminal_url);
  let slowest = 0;
  for (let i = 0; i < 10; ++i) {
    const started = Date.now();
    const answer = await Promise.race([
      page.evaluate(() => document.body.dataset.connected),
      new Promise((resolve) => setTimeout(() => resolve('no answer'), 15000)),
    ]);
    if (answer !== 'yes') {
      // Seen once in ~40 loaded runs (session 38): say how the socket closed.
      const closed = await page.evaluate(() => document.body.dataset.closed).catch(() => '?');
      assert.fail(`the page's answer ${i}: ${answer}; its socket closed with ${closed}; ` +
        `server stderr: ${agent.stderr().slice(-1000)}; console: ${JSON.stringify(problems.slice(0, 3))}`);
    }
    slowest = Math.max(slowest, Date.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.ok(slowest < 3000, `the page took ${slowest} ms to answer`);
  assert.deepEqual(problems.slice(0, 3), []);
});

// ---- a program that takes every pseudo-terminal ----

// posix_openpt said "No space left on device", which sent people to df.
// A devpts of its own with room for 3 terminals, in a mount namespace, so
// the machine's terminals are not used up under other programs.
test('with every pseudo-terminal taken, execute says so and what to do, and works once they are given back', { skip: !isRoot && 'mounts a devpts: root only' }, async (t) => {
  const fewTerminals = [
    'unshare', '-m', '--propagation', 'private', 'sh', '-c',
    'mount -t devpts -o newinstance,ptmxmode=0666,max=3 devpts /dev/pts && mount --bind /dev/pts/ptmx /dev/ptmx && exec "$@"',
    'sh',
  ];
  const agent = await agenttyWithStderr(t, { runAs: fewTerminals, args: ['--no-web', '--no-spare-terminal'] });
  const hog = await agent.run({
    command: "python3 -c \"import os,time\nheld=[]\ntry:\n  while True: held.append(os.openpty())\nexcept OSError as e: print('took', len(held), flush=True)\ntime.sleep(120)\"",
    yield_ms: 0,
  });
  const waitHog = await agent.call('wait', { execution_id: hog.execution_id, until: 'match', pattern: '^took', since_seq: 1, timeout_ms: 30000 });
  assert.equal(waitHog.wait_result, 'matched', brief(waitHog));
  const refused = await agent.run({ command: 'echo hi' });
  assert.equal(refused.isError, true, brief(refused));
  assert.match(refused.error, /every pseudo-terminal the system allows is in use/, refused.error);
  assert.match(refused.error, /kernel\.pty\.max/, refused.error);
  assert.match(refused.error, /end the programs that hold terminals/, refused.error);
  const opened = await agent.call('open', {});
  assert.equal(opened.isError, true, brief(opened));
  assert.match(opened.error, /every pseudo-terminal the system allows is in use/, opened.error);
  await agent.call('stop', { execution_id: hog.execution_id, signal: 'SIGKILL' });
  const again = await agent.run({ command: 'echo hi' });
  assert.equal(again.status, 'completed', brief(again));
  assert.equal(again.output, 'hi\n');
});

// ---- a terminal left in odd modes ----

test('session: after a program leaves the terminal raw, without echo, sized 5x3 and in the alternate screen with mouse reporting, the next commands run and read right', async (t) => {
  const session = await openSession(call, t);
  await run(session, "python3 -c 'import tty; tty.setraw(0)'; stty -echo cols 5 rows 3; printf '\\e[?1000h\\e[?2004h\\e[?1049h'");
  const next = await run(session, 'echo next-command; stty size');
  assert.equal(next.status, 'completed', brief(next));
  assert.equal(next.output, 'next-command\n3 5\n', brief(next));
  const screen = await call('screen', { execution_id: session });
  assert.equal(screen.cols, 5, brief(screen));
  assert.equal(screen.alt_screen, true, brief(screen));
  const sane = await run(session, "stty sane cols 120 rows 40; printf '\\e[?1049l'; echo back; stty size");
  assert.equal(sane.output, 'back\n40 120\n', brief(sane));
  const restored = await call('screen', { execution_id: session });
  assert.equal(restored.cols, 120);
  assert.equal(restored.alt_screen, false);
});

// readline sets the terminal as `stty raw` does but for signals; with the
// terminal left raw, the shell's `read` was called "back at a prompt the
// session's hook no longer marks", and the agent's next command was typed
// into it (where Enter, a CR, ends no line: ICRNL is off too).
test('session: `read` on a terminal a program left raw is a command waiting for input, not an unmarked prompt', async (t) => {
  const session = await openSession(call, t);
  await run(session, 'stty raw -echo');
  const reading = await call('execute', {
    session, command: "read -p 'name? ' x; echo got=$x", side_effects: ['NONE'], yield_ms: 10000,
  });
  assert.equal(reading.isError, false, reading.error);
  assert.equal(reading.status, 'backgrounded', brief(reading));
  assert.equal(reading.waiting_for_input, true, brief(reading));
  assert.equal(reading.boundaries, 'exact', brief(reading));
  assert.doesNotMatch(reading.message, /no longer marks/, brief(reading));
  // A raw terminal ends a line at LF (ctrl-j), not at Enter's CR.
  const typed = await call('write', { execution_id: session, input: 'bob', keys: ['ctrl-j'] });
  assert.equal(typed.isError, false, typed.error);
  const ended = await waitFor(session, 'exit');
  assert.equal(ended.isError, false, ended.error);
  const out = await call('read', { execution_id: session, since_seq: reading.start_seq });
  assert.match(out.output, /got=bob/, brief(out));
  const sane = await run(session, 'stty sane; echo fine');
  assert.equal(sane.output, 'fine\n', brief(sane));
});

// ---- a program that stops its own supervisor ----

test('stop ends a program that stopped its supervisor (kill -STOP $PPID), instead of saying "not ended yet" for ever', async (t) => {
  const r = await server.agent.startCommand(t, {
    command: 'kill -STOP $PPID; echo stopped-it; exec sleep 600', yield_ms: 0,
  });
  const printed = await waitFor(r.execution_id, 'match', { pattern: '^stopped-it', since_seq: 1 });
  assert.equal(printed.wait_result, 'matched', brief(printed));
  const stopped = await call('stop', { execution_id: r.execution_id, force_after_ms: 2000 });
  assert.equal(stopped.isError, false, stopped.error);
  assert.equal(stopped.status, 'stopped', brief(stopped));
  assert.equal(stopped.stopped, true, brief(stopped));
});
