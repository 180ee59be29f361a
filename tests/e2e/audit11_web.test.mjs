// End-to-end audit 11 of the web watch-and-takeover page as a person
// supervising an agent uses it (real chromium through playwright-core, the
// real binary driven through the official MCP SDK client).
//
// Each test names what a person ran into:
// - a flood (a build log, `seq`, a runaway `yes`) left the page with no
//   scrollback until it ended, and the history then brought back (or given
//   to a page opened later) had lost the program's colours;
// - the dashboard listed a session as "/usr/bin/bash" whatever ran in it,
//   and never said on which host an execution runs;
// - keys typed right after pressing Take over, before the answer came, were
//   dropped without a word;
// - a second viewer typing while someone else held the terminal was not told
//   why nothing happened;
// - a session handed back with vim still open: the agent's next
//   execute(session=) typed its command line into vim as keystrokes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { startSshd, sshdSkip, sshClientEnv } from './lib/sshd.mjs';
import { vim as vimProgram } from './lib/programs.mjs';
import {
  TOKEN, agentAndBrowserForFile, eventually, openTerminal as openViewer, watchPage, waitForLine,
} from './lib/web-helpers.mjs';

const PROMPT = 'audit11$ ';
// A low stream rate: the floods here are floods however slowly a loaded
// machine runs them. At the default 4 MiB/s a starved agentty read them at
// about that rate, so the feed went back and forth between flood redraws
// and streaming, and a flood that happened to end while streaming sent no
// redraw at its end.
const fixture = agentAndBrowserForFile(PROMPT, 'agentty-audit11-web-', { AGENTTY_WEB_STREAM_RATE: '65536' });

const call = (name, args) => fixture.agent.call(name, args);

// The page's CSP forbids eval: predicates call this instead of new Function.
const openTerminal = (context, url, size = {}) =>
  openViewer(context, url, { ...size, initScript: `window.__history = ${historyWithColours.toString()};` });

// In the page: the buffer's lines above the screen (history) as
// [text, palette fg colour or -1], oldest first.
function historyWithColours() {
  const { term } = window.__agentty;
  const buffer = term.buffer.active;
  const rows = [];
  for (let i = 0; i < buffer.length - term.rows; i++) {
    const line = buffer.getLine(i);
    const cell = line?.getCell(0);
    const fg = cell && cell.isFgPalette() ? cell.getFgColor() : -1;
    rows.push([line?.translateToString(true) ?? '', fg]);
  }
  return rows;
}

// The history once xterm.js has parsed everything the page got so far (the
// snapshot counter moves when a redraw arrives, not when it is drawn).
function settledHistory(page) {
  return page.evaluate(async () => {
    await new Promise((resolve) => window.__agentty.term.write('', resolve));
    return { snapshots: Number(document.body.dataset.snapshots), history: window.__history() };
  });
}

// ---- 1. floods: scrollback during the flood, colours kept ----

test('during a flood the page can scroll back, and the history keeps the colours', async () => {
  // A runaway program: green lines as fast as the PTY takes them, until
  // stopped (long lines: many MB/s, a flood, even on a loaded machine).
  const green = 'g'.repeat(2000);
  const started = await call('execute', {
    command: `printf '\\033[32m'; exec yes ${green}`, side_effects: ['NONE'], yield_ms: 100,
  });
  assert.equal(started.status, 'backgrounded', JSON.stringify(started));
  const context = await fixture.browser.newContext();
  try {
    const { page, problems } = await openTerminal(context, started.terminal_url);
    // Flood redraws arrive (ten a second), and meanwhile the history fills
    // up with the program's green lines: a person scrolling up sees them.
    const greenRows = (history) => history.filter(([text, fg]) => /^g+$/.test(text) && fg === 2);
    await eventually(async () => greenRows((await settledHistory(page)).history).length >= 1000,
      { timeout: 30000, interval: 100, what: '1000 green rows in the history' });
    // Then, look after look while ten more redraws arrive: the history stays
    // (before the fix each flood redraw wiped it until the flood ended).
    const first = (await settledHistory(page)).snapshots;
    const counts = [];
    await eventually(async () => {
      const { snapshots, history } = await settledHistory(page);
      counts.push(greenRows(history).length);
      return snapshots >= first + 10;
    }, { timeout: 30000, interval: 50, what: 'ten flood redraws' });
    assert.ok(counts.every((n) => n >= 1000), `green rows in the history, look by look: ${counts}`);
    const listed = await call('ps', {});
    assert.match(JSON.stringify(listed), new RegExp(`${started.execution_id}[^}]*running`));
    assert.deepEqual(problems, []);
  } finally {
    await call('stop', { execution_id: started.execution_id });
    await context.close();
  }
});

test('after a flood the history the page gets back keeps the colours', async () => {
  const opened = await call('open', { name: 'red-flood' });
  assert.equal(opened.prompt_ready, true);
  const id = opened.execution_id;
  const context = await fixture.browser.newContext();
  try {
    const { page, problems } = await openTerminal(context, opened.terminal_url);
    const r = await call('execute', {
      session: id, side_effects: ['NONE'], max_output_bytes: 1000,
      command: "printf '\\033[31m'; seq 1000000 1900000; printf '\\033[0m'; echo flood-$((6*7))",
    });
    assert.equal(r.exit_code, 0, JSON.stringify(r));
    await waitForLine(page, 'flood-42', 60000);
    await page.waitForFunction(() => {
      const history = window.__history();
      const at = history.findIndex(([text]) => text === '1899000');
      return at >= 0 && history[at + 1]?.[0] === '1899001';
    }, null, { timeout: 30000, polling: 100 });
    assert.ok(Number(await page.getAttribute('body', 'data-snapshots')) >= 2, 'flood redraws');
    const flooded = (await page.evaluate(() => window.__history()))
      .filter(([text]) => /^1[89]\d{5}$/.test(text));
    assert.ok(flooded.length >= 500, `history holds ${flooded.length} flooded lines`);
    assert.deepEqual(flooded.filter(([, fg]) => fg !== 1).slice(0, 5), [],
      'every flooded line is red, as the program drew it');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await call('close', { execution_id: id });
  }
});

test('someone reading back during a flood keeps their place when the history comes back whole', async () => {
  // Long numbered lines, many MB/s (a flood the page cannot keep up with),
  // until the test says stop, and then 3 MB more: the stop may come as a
  // round ends, and the flood the test waits out must still be one.
  const stopFile = path.join(fixture.workDir, 'stop-flood');
  const round = `awk 'BEGIN { s = sprintf("%1500s", ""); gsub(/ /, "g", s); for (i = 1; i <= 2000; i++) print i s }'`;
  const r = await call('execute', {
    command: `while [ ! -e ${stopFile} ]; do ${round}; done; ${round}; echo flood-$((6*7)); exec sleep 600`,
    side_effects: ['NONE'], yield_ms: 100,
  });
  assert.equal(r.status, 'backgrounded', JSON.stringify(r));
  const context = await fixture.browser.newContext();
  try {
    const { page, problems } = await openTerminal(context, r.terminal_url);
    const fullSnapshots = () => page.evaluate(() => Number(document.body.dataset.fullSnapshots ?? 0));
    // Mid-flood (flood redraws arriving), the person scrolls 200 lines back
    // (before, the redraw after the flood put them back at the bottom).
    await page.waitForFunction(() => window.__history().length >= 1000 && Number(document.body.dataset.snapshots) >= 3,
      null, { timeout: 60000, polling: 50 });
    // A redraw's reset may be parsed just before the history it brings: the
    // scroll is made (again) until the view really is 200 lines up.
    await page.waitForFunction(() => {
      const { term } = window.__agentty;
      const buffer = term.buffer.active;
      if (buffer.baseY - buffer.viewportY < 200) term.scrollToLine(Math.max(0, buffer.baseY - 200));
      return buffer.baseY >= 200 && buffer.baseY - buffer.viewportY >= 200;
    }, null, { timeout: 30000, polling: 50 });
    const before = await fullSnapshots();
    writeFileSync(stopFile, '');
    // The flood ends; a full redraw brings the history back whole.
    await waitForLine(page, 'flood-42', 60000);
    await page.waitForFunction((n) => Number(document.body.dataset.fullSnapshots ?? 0) > n, before,
      { timeout: 30000, polling: 50 });
    const up = await page.evaluate(async () => {
      await new Promise((resolve) => window.__agentty.term.write('', resolve));
      const buffer = window.__agentty.term.buffer.active;
      return buffer.baseY - buffer.viewportY;
    });
    // Lines went on arriving under the held view: it is at least as far up.
    assert.ok(up >= 200, `lines between the view and the newest: ${up}`);
    assert.deepEqual(problems, []);
  } finally {
    await call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' });
    await context.close();
  }
});

test('a page opened after coloured output scrolled by shows its history in colour', async () => {
  const opened = await call('open', { name: 'red-history' });
  const id = opened.execution_id;
  const r = await call('execute', {
    session: id, side_effects: ['NONE'],
    command: "for i in $(seq 1 300); do printf '\\033[31mred-%d\\033[0m plain\\n' $i; done",
  });
  assert.equal(r.exit_code, 0, JSON.stringify(r));
  const context = await fixture.browser.newContext();
  try {
    const { page, problems } = await openTerminal(context, opened.terminal_url);
    await page.waitForFunction(() => window.__history().some(([text]) => text === 'red-1 plain'),
      null, { timeout: 15000, polling: 50 });
    const history = (await page.evaluate(() => window.__history()))
      .filter(([text]) => /^red-\d+ plain$/.test(text));
    assert.ok(history.length >= 250, `history holds ${history.length} red lines`);
    assert.deepEqual(history.filter(([, fg]) => fg !== 1).slice(0, 5), []);
    // Only the program's colours: the rest of the line is in the default colour.
    const plainPart = await page.evaluate(() => {
      const buffer = window.__agentty.term.buffer.active;
      for (let i = 0; i < buffer.length; i++) {
        const line = buffer.getLine(i);
        if (line.translateToString(true) === 'red-1 plain') return line.getCell(7).isFgDefault();
      }
      return null;
    });
    assert.equal(plainPart, true);
    // The agent's screen tool still reads plain text.
    const screen = await call('screen', { execution_id: id, scrollback_lines: 400 });
    assert.ok(screen.scrollback.includes('red-1 plain'), JSON.stringify(screen.scrollback.slice(0, 3)));
    assert.ok(screen.scrollback.every((line) => !line.includes('\x1b')));
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await call('close', { execution_id: id });
  }
});

// ---- 6. the dashboard: what runs in a session, and where ----

// The page's state for a dashboard row, as a person reads it.
const rowText = (page, id) => page.locator(`tr[data-execution-id="${id}"]`).innerText();

test('the dashboard says what runs in a session now, as the agent\'s ps does', async () => {
  const opened = await call('open', { name: 'busy-session', purpose: 'dashboard' });
  const id = opened.execution_id;
  const context = await fixture.browser.newContext();
  try {
    const page = await context.newPage();
    const problems = watchPage(page);
    await page.goto(`${new URL(opened.terminal_url).origin}/${new URL(opened.terminal_url).hash}`);
    await page.locator(`tr[data-execution-id="${id}"]`).waitFor({ timeout: 15000 });
    // At its prompt: a bash session (not "/usr/bin/bash", the shell's path).
    await page.waitForFunction((rowId) => document.querySelector(`tr[data-execution-id="${rowId}"] .command`)
      ?.textContent === 'bash (session)', id, { timeout: 15000 });
    const busy = await call('execute', {
      session: id, command: 'sleep 60', side_effects: ['NONE'], yield_ms: 100,
    });
    assert.equal(busy.status, 'backgrounded', JSON.stringify(busy));
    await page.waitForFunction((rowId) => document.querySelector(`tr[data-execution-id="${rowId}"] .command`)
      ?.textContent === 'bash (session) running: sleep 60', id, { timeout: 15000 });
    const listed = (await call('ps', {})).executions.find((e) => e.execution_id === id);
    assert.equal(listed.command, 'bash (session) running: sleep 60');
    // The terminal page's title says so too (the session has a name here).
    assert.match(await rowText(page, id), /busy-session/);
    await call('write', { execution_id: id, keys: ['ctrl-c'] });
    await page.waitForFunction((rowId) => document.querySelector(`tr[data-execution-id="${rowId}"] .command`)
      ?.textContent === 'bash (session)', id, { timeout: 15000 });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await call('close', { execution_id: id });
  }
});

test('the dashboard says which host an execution runs on', {
  skip: sshdSkip(),
}, async () => {
  const sshd = await startSshd();
  const home = tempDirForRun('agentty-audit11-ssh-');
  const remote = await startAgentty({ env: { ...sshClientEnv(sshd, home), AGENTTY_WEB_TOKEN: TOKEN } });
  const context = await fixture.browser.newContext();
  try {
    const started = await remote.call('execute', {
      host: sshd.host, command: 'sleep 60', side_effects: ['NONE'], yield_ms: 100,
    });
    assert.equal(started.status, 'backgrounded', JSON.stringify(started));
    const url = new URL(started.terminal_url);
    const page = await context.newPage();
    const problems = watchPage(page);
    await page.goto(`${url.origin}/${url.hash}`);
    await page.waitForFunction(([rowId, wanted]) => document.querySelector(
      `tr[data-execution-id="${rowId}"] .command`)?.textContent === wanted,
    [started.execution_id, `${sshd.host}: sleep 60`], { timeout: 15000 });
    assert.deepEqual(problems, []);
    await remote.call('stop', { execution_id: started.execution_id });
  } finally {
    await context.close();
    await remote.client.close();
    await sshd.stop();
  }
});

// ---- 5. keyboard: keys typed right after pressing Take over ----

// Holds the page's incoming WebSocket messages while window.__held is an
// array (a slow link: the takeover's answer is late); __deliver() lets them in.
function holdIncomingMessages() {
  const Native = window.WebSocket;
  window.__held = null;
  window.__deliver = () => {
    const held = window.__held ?? [];
    window.__held = null;
    for (const deliver of held) deliver();
  };
  window.WebSocket = function HeldWebSocket(...args) {
    const socket = new Native(...args);
    let handler = null;
    Object.defineProperty(socket, 'onmessage', { get: () => handler, set: (h) => { handler = h; } });
    socket.addEventListener('message', (event) => {
      if (window.__held) window.__held.push(() => handler?.(event));
      else handler?.(event);
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  for (const key of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) window.WebSocket[key] = Native[key];
}

test('keys typed right after pressing Take over reach the program once it is granted', async () => {
  const opened = await call('open', { name: 'early-keys' });
  const id = opened.execution_id;
  const context = await fixture.browser.newContext();
  try {
    const page = await context.newPage();
    const problems = watchPage(page);
    await page.addInitScript(holdIncomingMessages);
    await page.goto(opened.terminal_url);
    await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
    await waitForLine(page, PROMPT.trimEnd());
    await page.evaluate(() => { window.__held = []; });
    await page.click('#take-over');
    await page.keyboard.type('echo early-$((6*7))');
    await page.keyboard.press('Enter');
    await page.evaluate(() => window.__deliver());
    await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
    await waitForLine(page, 'early-42');
    assert.equal(await page.locator('#message').isHidden(), true);
    await page.click('#release');
    await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await call('close', { execution_id: id });
  }
});

// ---- 3. several viewers ----

test('a second viewer typing while another holds the terminal is told who holds it', async () => {
  const opened = await call('open', { name: 'two-viewers' });
  const id = opened.execution_id;
  const contexts = [await fixture.browser.newContext(), await fixture.browser.newContext()];
  try {
    const [holder, watcher] = await Promise.all(contexts.map((c) => openTerminal(c, opened.terminal_url)));
    await holder.page.click('#take-over');
    await holder.page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
    await watcher.page.waitForSelector('body[data-held="other"]', { timeout: 15000 });
    await watcher.page.click('#terminal');
    await watcher.page.keyboard.type('echo from-watcher');
    const message = watcher.page.locator('#message');
    await message.waitFor({ state: 'visible', timeout: 5000 });
    const holderName = (await call('ps', {})).executions.find((e) => e.execution_id === id).held_by;
    assert.match(await message.innerText(), new RegExp(`Read-only: ${holderName} holds this terminal`));
    assert.equal((await watcher.page.evaluate(() => window.__agentty.screenText())).includes('from-watcher'), false);
    // Released: the hint goes, and the watcher may take over.
    await holder.page.click('#release');
    await watcher.page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
    await message.waitFor({ state: 'hidden', timeout: 5000 });
    assert.equal(await watcher.page.locator('#take-over').isDisabled(), false);
    assert.deepEqual([...holder.problems, ...watcher.problems], []);
  } finally {
    for (const c of contexts) await c.close();
    await call('close', { execution_id: id });
  }
});

// ---- 2. a session handed back with a full-screen program still open ----

test('execute(session=) does not type a command line into a full-screen program left open', async () => {
  const opened = await call('open', { name: 'vim-left-open' });
  const id = opened.execution_id;
  const file = path.join(fixture.home, 'notes.txt');
  try {
    const made = await call('execute', {
      session: id, command: `printf 'keep me\\n' > ${file}`, side_effects: ['NONE'],
    });
    assert.equal(made.exit_code, 0);
    // A person (or the agent) opened vim and handed the session back with it open.
    const vim = await call('execute', { session: id, command: `${vimProgram} -u NONE ${file}`, side_effects: ['NONE'] });
    assert.equal(vim.alt_screen, true, JSON.stringify(vim));
    const next = await call('execute', { session: id, command: 'make test', side_effects: ['NONE'] });
    assert.equal(next.isError, true, JSON.stringify(next));
    assert.match(next.error, /full-screen program .*vim/);
    assert.match(next.error, /nothing was typed/);
    // vim's buffer is as it was: quit without saving, and the file is intact.
    await call('write', { execution_id: id, keys: ['esc'] });
    await call('write', { execution_id: id, input: ':q!\r' });
    // write's reply settles 150 ms after vim's last output; a loaded machine's
    // vim can still be exiting then, and execute would find it running.
    const quit = await call('wait', { execution_id: id, until: 'exit', timeout_ms: 30000 });
    assert.equal(quit.wait_result, 'exited', JSON.stringify(quit));
    const after = await call('execute', { session: id, command: `cat ${file}`, side_effects: ['NONE'] });
    assert.equal(after.output, 'keep me\n', JSON.stringify(after));
  } finally {
    await call('close', { execution_id: id });
  }
});
