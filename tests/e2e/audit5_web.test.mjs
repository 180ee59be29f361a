// End-to-end audit of the web watch-and-takeover experience as a new user
// sees it, in a real browser (Debian chromium through playwright-core)
// against the real binary driven through MCP (the official SDK client).
//
// Each test names a defect a person supervising an agent ran into: the
// newest output hidden below the fold, a lost takeover nobody mentions, pages
// that say "running ... reconnecting" for ever after agentty restarted,
// keystrokes that vanish without a word before a takeover, a handoff banner
// that could not be clicked, and dashboard clicks lost to live updates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { agenttyBin, startAgentty } from './lib/mcp-client.mjs';
import { freePort } from './lib/free-port.mjs';
import { TOKEN, agentAndBrowserForFile, eventually, openTerminal as openViewer, watchPage, waitForLine } from './lib/web-helpers.mjs';

const PROMPT = 'audit5$ ';
const fixture = agentAndBrowserForFile(PROMPT, 'agentty-audit5-web-');
const { workDir } = fixture;

const call = (name, args) => fixture.agent.call(name, args);

// Keeps every WebSocket the page makes in window.__sockets, so a test can drop
// the connection the way a network blip or a sleeping laptop does.
function recordSockets() {
  const Native = window.WebSocket;
  window.__sockets = [];
  window.WebSocket = function RecordedWebSocket(...args) {
    const socket = new Native(...args);
    window.__sockets.push(socket);
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  for (const key of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) window.WebSocket[key] = Native[key];
}

const openTerminal = (context, url, size = {}) =>
  openViewer(context, url, { ...size, initScript: recordSockets });

const snapshots = (page) => page.evaluate(() => Number(document.body.dataset.snapshots ?? 0));

// Drops the page's terminal socket and waits until the page has reconnected
// and redrawn from a fresh snapshot.
async function dropConnection(page) {
  const seen = await snapshots(page);
  await page.evaluate(() => window.__sockets.at(-1).close());
  await page.waitForFunction((n) => document.body.dataset.connected === 'yes' &&
    Number(document.body.dataset.snapshots ?? 0) > n, seen, { timeout: 15000, polling: 50 });
}

async function openSession(t, name) {
  const opened = await call('open', { name });
  assert.equal(opened.isError, false, opened.error);
  assert.equal(opened.prompt_ready, true);
  t.after(() => call('close', { execution_id: opened.execution_id }));
  return opened;
}

test('a watcher whose window is smaller than the terminal still sees all of it, newest line included', async (t) => {
  // execute's default size is 120x40: more than a 1000x600 window holds at
  // the page's 14px font. The live edge (the last lines, the cursor) is what
  // a person watches; it must not sit below the fold.
  const r = await call('execute', {
    command: 'seq 1 60; echo LAST-LINE; sleep 600', side_effects: ['NONE'], yield_ms: 200,
  });
  t.after(() => call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const { page, problems } = await openTerminal(context, r.terminal_url);
  await waitForLine(page, 'LAST-LINE');
  const layout = () => page.evaluate(() => {
    const main = document.querySelector('main');
    const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
    const box = main.getBoundingClientRect();
    return {
      cols: window.__agentty.term.cols,
      rows: window.__agentty.term.rows,
      fits: screen.bottom <= box.bottom + 0.5 && screen.right <= box.right + 0.5,
      overflow: main.scrollHeight > main.clientHeight || main.scrollWidth > main.clientWidth,
    };
  });
  let seen = await layout();
  assert.deepEqual([seen.cols, seen.rows], [120, 40], 'a watcher keeps the PTY size');
  assert.equal(seen.fits, true, `the terminal fits the window: ${JSON.stringify(seen)}`);
  assert.equal(seen.overflow, false, 'nothing to scroll to find the newest line');

  // Narrower still: the page follows a window resize.
  await page.setViewportSize({ width: 800, height: 500 });
  await page.waitForFunction(() => {
    const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
    const box = document.querySelector('main').getBoundingClientRect();
    return screen.bottom <= box.bottom + 0.5 && screen.right <= box.right + 0.5;
  }, null, { timeout: 15000, polling: 50 });

  // The person who takes over types at the normal size: the PTY takes the window's size.
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  seen = await layout();
  assert.equal(await page.evaluate(() => window.__agentty.term.options.fontSize), 14);
  assert.equal(seen.fits, true, JSON.stringify(seen));
  const screen = await eventually(async () => {
    const s = await call('screen', { execution_id: r.execution_id });
    return s.cols === seen.cols && s.rows === seen.rows ? s : null;
  }, { what: 'the PTY to take the holder size' });
  assert.ok(screen.cols < 120);
  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  assert.deepEqual(problems, []);
});

test('when the holder loses the connection or reloads, the page says the takeover ended', async (t) => {
  const opened = await openSession(t, 'audit5-drop');
  const id = opened.execution_id;
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const { page, problems } = await openTerminal(context, opened.terminal_url);

  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  assert.equal((await call('write', { execution_id: id, input: 'echo x', newline: true })).held, true);

  // The connection drops: agentty hands the terminal back to the agent at
  // once (a closed tab must not lock it out). The page must not show its own
  // lost hold as "held by" somebody else, and once back it must say that the
  // takeover ended, or the person types into a terminal that ignores them.
  await page.evaluate(() => window.__sockets.at(-1).close());
  await page.waitForSelector('body:not([data-connected="yes"])', { timeout: 15000 });
  assert.doesNotMatch(await page.innerText('#holder'), /Held by/);
  assert.notEqual(await page.getAttribute('body', 'data-held'), 'other');
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await page.waitForSelector('#message:not([hidden])', { timeout: 15000 });
  assert.match(await page.innerText('#message'), /takeover ended/i);
  assert.match(await page.innerText('#message'), /Take over/);
  assert.equal(await page.getAttribute('body', 'data-held'), 'no');
  const written = await call('write', { execution_id: id, input: 'echo agent-has-it', newline: true });
  assert.equal(written.ok, true, JSON.stringify(written));
  await waitForLine(page, 'agent-has-it');

  // Taking over again clears the notice.
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  await page.waitForSelector('#message', { state: 'hidden', timeout: 15000 });

  // A reload while holding ends the hold too, and the reloaded page says so.
  await page.reload();
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await page.waitForSelector('#message:not([hidden])', { timeout: 15000 });
  assert.match(await page.innerText('#message'), /takeover ended/i);
  assert.equal(await page.getAttribute('body', 'data-held'), 'no');
  await eventually(async () => (await call('ps', {})).executions.find((e) => e.execution_id === id)?.held === false,
    { what: 'the hold to end' });
  // A plain reload of a page that did not hold anything shows no notice.
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  await page.reload();
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await page.waitForFunction(() => Number(document.body.dataset.snapshots ?? 0) >= 1);
  assert.equal(await page.isHidden('#message'), true);

  // A drop while only watching reconnects quietly, with no lost or doubled output.
  await call('write', { execution_id: id, input: 'for i in $(seq 1 120); do echo n-$i; sleep 0.01; done', newline: true });
  await waitForLine(page, 'n-20');
  await dropConnection(page);
  await waitForLine(page, 'n-120');
  const lines = (await page.evaluate(() => window.__agentty.screenText())).split('\n')
    .map((l) => l.trimEnd()).filter((l) => /^n-\d+$/.test(l));
  assert.deepEqual(lines, Array.from({ length: 120 }, (_, i) => `n-${i + 1}`));
  assert.equal(await page.isHidden('#message'), true);
  assert.deepEqual(problems, []);
});

// Starts an agentty on a fixed web port (startAgentty always asks for a free one).
async function startOnPort(port, stateDir, token = TOKEN) {
  const transport = new StdioClientTransport({
    command: agenttyBin,
    args: ['mcp', '--state-dir', stateDir, '--web-listen', `127.0.0.1:${port}`],
    env: { ...process.env, AGENTTY_LOG_LEVEL: 'warn', AGENTTY_WEB_TOKEN: token },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'agentty-e2e-restart', version: '1.0.0' });
  await client.connect(transport);
  const callTool = async (name, args) => (await client.callTool({ name, arguments: args })).structuredContent;
  return { client, call: callTool };
}

// The port the agentty serving `stateDir` listens on (it takes the next
// free one if its own was taken), from the URL it writes there.
async function listeningPort(stateDir) {
  const url = await eventually(() => {
    try {
      return readFileSync(path.join(stateDir, 'web-url'), 'utf8');
    } catch {
      return undefined;
    }
  }, { what: 'the web-url file' });
  return Number(new URL(url.trim()).port);
}

// An agentty on a free port of its own; another port is tried if a
// listener took the picked one before agentty bound it.
async function startOnFreePort(stateDir) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const server = await startOnPort(port, stateDir);
    if (await listeningPort(stateDir) === port || attempt === 5) return { port, server };
    await server.client.close();
  }
}

test('a page whose agentty stopped, then restarted, says the link is outdated, not "running ... reconnecting"', async (t) => {
  const stateDir = mkdtempSync(path.join(workDir, 'restart-'));
  let { port, server } = await startOnFreePort(stateDir);
  t.after(() => server.client.close());
  const r = await server.call('execute', {
    command: 'echo before-restart; sleep 600', side_effects: ['NONE'], yield_ms: 200,
  });
  assert.equal(r.status, 'backgrounded');
  assert.ok(r.terminal_url.includes(`:${port}/`));
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const { page } = await openTerminal(context, r.terminal_url);
  await waitForLine(page, 'before-restart');

  // agentty exits (its agent went away): the program was ended with it, so
  // the page must not keep saying "running", and must say agentty is gone.
  await server.client.close();
  await page.waitForSelector('body:not([data-connected="yes"])', { timeout: 15000 });
  await page.waitForFunction(() => /not running|not reachable/i.test(document.getElementById('message').textContent),
    null, { timeout: 15000, polling: 50 });
  assert.notEqual(await page.innerText('#status'), 'running');
  assert.equal(await page.isDisabled('#take-over'), true);

  // A new agentty on the same port (same fixed secret) has no such execution:
  // the page says its link is outdated and stops asking.
  server = await startOnPort(port, stateDir);
  assert.equal(await listeningPort(stateDir), port, 'the restarted agentty is on the same port');
  await page.waitForFunction(() => /outdated/i.test(document.getElementById('message').textContent),
    null, { timeout: 30000, polling: 50 });
  assert.match(await page.innerText('#message'), /restarted|removed/);
  assert.equal(await page.getAttribute('body', 'data-connected'), 'gone');
  assert.equal(await page.isDisabled('#take-over'), true);
});

test('a dashboard whose agentty stopped, then restarted with a new secret, says so and shows no stale rows', async (t) => {
  const stateDir = mkdtempSync(path.join(workDir, 'restart-dashboard-'));
  let { port, server } = await startOnFreePort(stateDir);
  t.after(() => server.client.close());
  const r = await server.call('execute', {
    command: 'sleep 600', side_effects: ['NONE'], yield_ms: 100, name: 'sleeper',
  });
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${port}/#token=${TOKEN}`);
  await page.locator(`tr[data-execution-id="${r.execution_id}"]`).waitFor({ timeout: 15000 });

  // agentty exits: the list is no longer live, and the page says agentty is gone.
  await server.client.close();
  await page.waitForFunction(() => /not running/i.test(document.getElementById('message').textContent),
    null, { timeout: 15000, polling: 50 });
  assert.notEqual(await page.getAttribute('body', 'data-connected'), 'yes');
  assert.match(await page.innerText('#message'), /as last seen/);

  // Restarted with a new secret (the default) on the same port: this link is
  // outdated; the page says where to find the new one and drops the old rows.
  server = await startOnPort(port, stateDir, 'a'.repeat(64));
  assert.equal(await listeningPort(stateDir), port, 'the restarted agentty is on the same port');
  await page.waitForSelector('body[data-connected="gone"]', { timeout: 30000 });
  assert.match(await page.innerText('#message'), /outdated/);
  assert.match(await page.innerText('#message'), /new secret/);
  assert.equal(await page.locator('tr[data-execution-id]').count(), 0);
});

test('an unknown execution id says so at once and does not retry', async (t) => {
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.addInitScript(recordSockets);
  const r = await call('execute', { command: 'true', side_effects: ['NONE'] });
  const { origin } = new URL(r.terminal_url);
  await page.goto(`${origin}/t/no-such-execution#token=${TOKEN}`);
  await page.waitForSelector('body[data-connected="gone"]', { timeout: 15000 });
  assert.match(await page.innerText('#message'), /no execution no-such-execution|outdated/);
  assert.equal(await page.evaluate(() => window.__sockets.length), 1);
});

test('pasting into a read-only terminal says how to take over, and nothing reaches the program', async (t) => {
  const opened = await openSession(t, 'audit5-paste');
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const { page, problems } = await openTerminal(context, opened.terminal_url);
  await page.click('#terminal');
  // What Ctrl+V, Shift+Insert and the context menu's Paste deliver.
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData('text/plain', 'echo pasted-$((6*7))\r');
    document.querySelector('.xterm-helper-textarea').dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  });
  await page.waitForSelector('#message:not([hidden])', { timeout: 15000 });
  assert.match(await page.innerText('#message'), /Read-only.*Take over/);
  const after = await call('execute', {
    session: opened.execution_id, command: 'echo after-paste', side_effects: ['NONE'],
  });
  assert.equal(after.status, 'completed', JSON.stringify(after));
  const read = await call('read', { execution_id: opened.execution_id, tail_lines: 100 });
  assert.match(read.output, /after-paste/);
  assert.doesNotMatch(read.output, /pasted-42/);
  assert.deepEqual(problems, []);
});

test('typing into a read-only terminal says how to take over, and nothing reaches the program', async (t) => {
  const opened = await openSession(t, 'audit5-readonly');
  const id = opened.execution_id;
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const { page, problems } = await openTerminal(context, opened.terminal_url);

  await page.click('#terminal');
  await page.keyboard.type('echo sneaky-1');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#message:not([hidden])', { timeout: 15000 });
  assert.match(await page.innerText('#message'), /Read-only.*Take over/);

  // Past the page: a keystroke frame sent straight on the socket is refused
  // by the server, not only by the page.
  await page.evaluate(() => window.__sockets.at(-1).send(new TextEncoder().encode('echo sneaky-2\r')));
  await page.waitForFunction(() => /take over to type/.test(document.getElementById('message').textContent),
    null, { timeout: 15000, polling: 50 });

  // Then a takeover: what the person types now runs, and nothing before it did.
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  await page.waitForSelector('#message', { state: 'hidden', timeout: 15000 });
  await page.keyboard.type('echo typed-after-$((2*21))');
  await page.keyboard.press('Enter');
  await waitForLine(page, 'typed-after-42');
  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  const read = await call('read', { execution_id: id });
  assert.match(read.output, /typed-after-42/);
  assert.doesNotMatch(read.output, /sneaky/);
  assert.ok(!(await page.evaluate(() => window.__agentty.screenText())).includes('sneaky'));
  assert.deepEqual(problems, []);
});

test('a handoff on the dashboard links straight to its terminal, and the answer reaches the agent', async (t) => {
  const opened = await openSession(t, 'audit5-handoff');
  const id = opened.execution_id;
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const dashboard = await context.newPage();
  const problems = watchPage(dashboard);
  await dashboard.goto(`${new URL(opened.terminal_url).origin}/#token=${TOKEN}`);
  await dashboard.locator(`tr[data-execution-id="${id}"]`).waitFor({ timeout: 15000 });
  const handoff = await call('handoff', { execution_id: id, reason: 'answer the question' });
  assert.equal(handoff.requested, true);
  const waited = call('wait', { execution_id: id, until: 'released', timeout_ms: 55000 });

  // The person clicks the highlighted request itself.
  await dashboard.waitForSelector('#handoffs:not([hidden]) a', { timeout: 15000 });
  assert.match(await dashboard.innerText('#handoffs'), /audit5-handoff: answer the question/);
  await dashboard.click('#handoffs a');
  await dashboard.waitForURL(opened.terminal_url, { timeout: 15000 });
  await dashboard.waitForSelector('#handoff:not([hidden])', { timeout: 15000 });
  await dashboard.click('#take-over');
  await dashboard.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  await dashboard.keyboard.type('echo the-answer');
  await dashboard.keyboard.press('Enter');
  await waitForLine(dashboard, 'the-answer');
  await dashboard.click('#release');
  const result = await waited;
  assert.equal(result.wait_result, 'released');
  assert.match(result.output, /\[human\] \$ echo the-answer\nthe-answer\n\[exit 0\]/);
  assert.deepEqual(problems, []);
});

test('a click on a dashboard link is not lost to the live updates', async (t) => {
  // A running program's output changes its row every second: the row must be
  // updated in place, or a press and a release a moment apart land on two
  // different links and the click never happens.
  const r = await call('execute', {
    command: 'while :; do echo tick; sleep 0.1; done', side_effects: ['NONE'], yield_ms: 100,
    name: 'audit5-ticker',
  });
  t.after(() => call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' }));
  const context = await fixture.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`${new URL(r.terminal_url).origin}/#token=${TOKEN}`);
  const link = page.locator(`tr[data-execution-id="${r.execution_id}"] a.terminal-link`);
  await link.waitFor({ timeout: 15000 });
  const box = await link.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  // Two list updates arrive while the button is down (the person is slow).
  const updates = await page.evaluate(() => Number(document.body.dataset.updates ?? 0));
  await page.waitForFunction((n) => Number(document.body.dataset.updates ?? 0) >= n + 2, updates,
    { timeout: 15000, polling: 50 });
  await page.mouse.up();
  await page.waitForURL(r.terminal_url, { timeout: 15000 });
});
