// End-to-end: the web terminal in a real browser (Debian chromium through
// playwright-core) against the real binary, driven as an agent would drive it
// through MCP (the official SDK client).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgentty } from './lib/mcp-client.mjs';
import { vim } from './lib/programs.mjs';
import {
  TOKEN, launchBrowser, watchPage, parseUrl, screenText, viewportText, waitForLine, waitForText,
  httpGet, tryUpgrade, eventually,
} from './lib/web-helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const artifacts = path.resolve(here, '../../artifacts');

let agent;
let browser;
let shell;  // { id, url }
let server; // { origin, port }

before(async () => {
  agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  browser = await launchBrowser();
  const r = await agent.call('execute', {
    command: 'bash --norc --noprofile', side_effects: ['NONE'], yield_ms: 300, name: 'web-shell',
    purpose: 'browser e2e', env: { PS1: 'prompt$ ' },
  });
  assert.equal(r.status, 'backgrounded');
  assert.match(r.terminal_url, /^http:\/\/127\.0\.0\.1:\d+\/t\/[^#]+#token=[0-9a-f]{64}$/);
  shell = { id: r.execution_id, url: r.terminal_url };
  const u = parseUrl(r.terminal_url);
  server = { origin: u.origin, port: u.port };
});

after(async () => {
  await browser?.close();
  await agent?.client.close();
});

async function openTerminal(context, url = shell.url) {
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.setViewportSize({ width: 1100, height: 700 });
  await page.goto(url);
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await page.waitForFunction(() => Number(document.body.dataset.snapshots ?? 0) >= 1, null, { timeout: 15000 });
  return { page, problems };
}

async function agentWrite(input, extra = {}) {
  return agent.call('write', { execution_id: shell.id, input, newline: true, yield_ms: 500, ...extra });
}

test('the dashboard lists the execution live and links to its terminal', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${server.origin}/#token=${TOKEN}`);
  const row = page.locator(`tr[data-execution-id="${shell.id}"]`);
  await row.waitFor({ timeout: 15000 });
  const text = await row.innerText();
  assert.match(text, /web-shell/);
  assert.match(text, /running/);
  assert.match(text, /bash --norc --noprofile/);
  assert.match(text, /browser e2e/);
  // Live: a new execution appears without a reload, and its exit is shown.
  const quick = await agent.call('execute', { command: 'echo quick; exit 4', side_effects: ['NONE'], name: 'quick-one' });
  const quickRow = page.locator(`tr[data-execution-id="${quick.execution_id}"]`);
  await quickRow.waitFor({ timeout: 15000 });
  await page.waitForFunction((id) => document.querySelector(`tr[data-execution-id="${id}"]`)?.innerText.includes('exit 4'),
    quick.execution_id, { timeout: 15000 });
  const href = await row.locator('a.terminal-link').getAttribute('href');
  assert.equal(`${server.origin}${href}`, shell.url);
  // A phone-width window: each row is a card as wide as the window, so the
  // page scrolls neither sideways nor inside the table (audit28_web_ux).
  await page.setViewportSize({ width: 420, height: 700 });
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    window: window.innerWidth,
    table: document.querySelector('#executions').scrollWidth,
  }));
  assert.equal(widths.page, widths.window, JSON.stringify(widths));
  assert.ok(widths.table <= widths.window, `the table is wider than the window: ${JSON.stringify(widths)}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the terminal page links back to the dashboard, secret included', async () => {
  const context = await browser.newContext();
  const { page, problems } = await openTerminal(context);
  const link = page.locator('#all-executions');
  assert.equal(await link.getAttribute('href'), `/#token=${TOKEN}`);
  await link.click();
  await page.locator(`tr[data-execution-id="${shell.id}"]`).waitFor({ timeout: 15000 });
  assert.deepEqual(problems, []);
  await context.close();
});

// Emoji are two columns for the program (glibc's wcwidth) and for the screen
// model; xterm.js's default table made them one, shifting the rest of the
// line left in the browser. Checked live (the terminal echoing typed text)
// and from the snapshot a page gets when it opens.
test('the browser draws emoji in the columns the program gave them, as the screen model does', async () => {
  const line = '\u2705a\u{1F680}b\u{1F9D1}c\u{1F972}d\u{1FAE0}e\u4E2Df';
  const expected = { cursor: 18, at: { a: 2, b: 5, c: 8, d: 11, e: 14, f: 17 } };  // 6 wide, 6 narrow
  const r = await agent.call('execute', { command: 'cat', side_effects: ['NONE'], yield_ms: 300 });
  const context = await browser.newContext();
  try {
    const columns = (page) => page.evaluate(() => {
      const buffer = window.__agentty.term.buffer.active;
      const row = buffer.getLine(buffer.baseY + buffer.cursorY);
      const at = {};
      for (let x = 0; x < row.length; x++) {
        const chars = row.getCell(x).getChars();
        if (/^[a-f]$/.test(chars)) at[chars] = x;
      }
      return { cursor: buffer.cursorX, at };
    });
    const live = await openTerminal(context, r.terminal_url);
    await agent.call('write', { execution_id: r.execution_id, input: line });
    const screen = await agent.call('screen', { execution_id: r.execution_id });
    assert.equal(screen.cursor.col, expected.cursor, JSON.stringify(screen));
    await waitForText(live.page, 'f');
    assert.deepEqual(await columns(live.page), expected, 'live');
    const opened = await openTerminal(context, r.terminal_url);
    await waitForText(opened.page, 'f');
    assert.deepEqual(await columns(opened.page), expected, 'snapshot');
    assert.deepEqual([...live.problems, ...opened.problems], []);
  } finally {
    await context.close();
    await agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' });
  }
});

test('terminal page: live output, takeover, held refusals, release, reload, vim', async () => {
  mkdirSync(artifacts, { recursive: true });
  const context = await browser.newContext();
  const { page, problems } = await openTerminal(context);

  // The agent's output shows up live.
  await agentWrite('echo from-agent-$((20+3))');
  await waitForLine(page, 'from-agent-23');

  // Take over: keystrokes go to the PTY.
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  await page.keyboard.type('echo hi');
  await page.keyboard.press('Enter');
  await waitForLine(page, 'hi');

  // The PTY took the browser's size (fit), and the agent sees it held.
  const size = await page.evaluate(() => ({ cols: window.__agentty.term.cols, rows: window.__agentty.term.rows }));
  const screen = await agent.call('screen', { execution_id: shell.id });
  assert.equal(screen.cols, size.cols);
  assert.equal(screen.rows, size.rows);
  const refused = await agentWrite('echo should-not-run');
  assert.equal(refused.held, true);
  assert.notEqual(refused.ok, true);

  // A second browser (its own context) cannot take it too, and cannot type.
  const otherContext = await browser.newContext();
  const other = await openTerminal(otherContext);
  await other.page.waitForSelector('body[data-held="other"]', { timeout: 15000 });
  assert.equal(await other.page.isDisabled('#take-over'), true);
  // Force the request past the disabled button: the server must refuse it.
  await other.page.evaluate(() => { document.getElementById('take-over').disabled = false; });
  await other.page.click('#take-over');
  await other.page.waitForSelector('#message:not([hidden])', { timeout: 15000 });
  assert.match(await other.page.innerText('#message'), /already held/);
  // The other viewer follows the holder's size instead of fitting.
  const otherSize = await other.page.evaluate(() => ({ cols: window.__agentty.term.cols, rows: window.__agentty.term.rows }));
  assert.deepEqual(otherSize, size);
  await waitForLine(other.page, 'hi');
  assert.ok(!(await screenText(page)).includes('should-not-run'));

  await page.screenshot({ path: path.join(artifacts, 'web-terminal.png') });

  // Release: the agent can write again and the agent's size comes back.
  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  await other.page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  const again = await agentWrite('echo agent-again-$((1+1))');
  assert.equal(again.ok, true);
  assert.notEqual(again.held, true);
  await waitForLine(page, 'agent-again-2');
  await waitForLine(other.page, 'agent-again-2');
  const released = await agent.call('screen', { execution_id: shell.id });
  assert.deepEqual([released.cols, released.rows], [120, 40]);  // execute's default size

  // Reload: the screen comes back from the server's snapshot.
  await page.reload();
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await waitForLine(page, 'agent-again-2');
  await waitForLine(page, 'from-agent-23');

  // A full-screen program looks right after a reconnect: compare the
  // browser's rows with the server's screen model, row by row.
  await agentWrite(`${vim} -u NONE -N`);
  // Typed before vim reads keys (write's reply can come before a loaded
  // machine has started it), the keys would be echoed on the shell's screen,
  // where waitForText would find them.
  await eventually(async () => (await agent.call('screen', { execution_id: shell.id })).alt_screen,
    { timeout: 30000, what: 'vim on the alternate screen' });
  const reading = await agent.call('wait', { execution_id: shell.id, until: 'input', timeout_ms: 30000 });
  assert.equal(reading.wait_result, 'waiting_for_input', JSON.stringify(reading));
  await agentWrite('', { input: 'ihello from vim\x1b' , newline: false });
  await waitForText(page, 'hello from vim');
  await page.reload();
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await waitForText(page, 'hello from vim');
  // vim redraws its last line once it takes the ESC alone (up to
  // timeoutlen later): the page shows what the server's model shows once
  // that redraw has reached both.
  const expectedRows = (s) => s.lines.map((l) => l.trimEnd()).concat(Array(s.rows - s.lines.length).fill(''));
  const pageRows = async () => (await viewportText(page)).split('\n').map((l) => l.trimEnd());
  let rows;
  let vimScreen = await eventually(async () => {
    const s = await agent.call('screen', { execution_id: shell.id });
    rows = await pageRows();
    return s.alt_screen && JSON.stringify(rows) === JSON.stringify(expectedRows(s)) ? s : null;
  }, { timeout: 30000, what: 'the page to show the screen model\'s rows' }).catch(() => null);
  if (!vimScreen) {  // say how they differ
    vimScreen = await agent.call('screen', { execution_id: shell.id });
    rows = await pageRows();
    assert.deepEqual(rows, expectedRows(vimScreen));
  }
  assert.equal(rows.length, vimScreen.rows);
  assert.equal(rows[0], 'hello from vim');
  assert.equal(rows[1], '~');
  await agentWrite('', { input: ':q!', newline: true });
  await waitForLine(page, 'agent-again-2');

  assert.deepEqual(problems, []);
  await otherContext.close();
  await context.close();
});

test('handoff: the reason is shown prominently on the page and the dashboard', async () => {
  const context = await browser.newContext();
  const { page } = await openTerminal(context);
  const r = await agent.call('handoff', { execution_id: shell.id, reason: 'type the 2FA code' });
  assert.equal(r.requested, true);
  await page.waitForSelector('#handoff:not([hidden])', { timeout: 15000 });
  assert.match(await page.innerText('#handoff'), /type the 2FA code/);
  const dashboard = await context.newPage();
  await dashboard.goto(`${server.origin}/#token=${TOKEN}`);
  await dashboard.waitForSelector(`tr.handoff[data-execution-id="${shell.id}"]`, { timeout: 15000 });
  assert.match(await dashboard.innerText('#handoffs'), /type the 2FA code/);
  // Taking over answers the request: the dashboard stops asking, and the
  // page keeps the reason only as a reminder for the person who took it.
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  await dashboard.waitForSelector(`tr.handoff[data-execution-id="${shell.id}"]`, { state: 'detached', timeout: 15000 });
  assert.match(await page.innerText('#handoff'), /You have taken over\. The agent asked for: type the 2FA code/);
  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  await page.waitForSelector('#handoff[hidden]', { state: 'attached', timeout: 15000 });
  await context.close();
});

test('no data without the secret; foreign hosts and origins are refused', async () => {
  const api = `${server.origin}/api/executions`;
  assert.equal((await httpGet(api)).status, 404);
  assert.equal((await httpGet(api, { 'X-Agentty-Token': 'f'.repeat(64) })).status, 404);
  assert.equal((await httpGet(`${api}/${shell.id}`, { Authorization: `Bearer ${TOKEN.slice(0, 63)}${TOKEN.endsWith('0') ? '1' : '0'}` })).status, 404);
  const ok = await httpGet(api, { 'X-Agentty-Token': TOKEN });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers['cache-control'], 'no-store');
  assert.ok(JSON.parse(ok.body).executions.some((e) => e.execution_id === shell.id));
  const missing = await httpGet(api);
  assert.ok(!missing.body.includes(shell.id));

  const ws = `${server.origin}/ws/terminal/${shell.id}`;
  const good = ['agentty.v1', `agentty-token.${TOKEN}`];
  assert.deepEqual(await tryUpgrade(ws, { protocols: good }), { status: 101, protocol: 'agentty.v1' });
  assert.equal((await tryUpgrade(ws, { protocols: ['agentty.v1'] })).status, 404);
  assert.equal((await tryUpgrade(ws, { protocols: ['agentty.v1', 'agentty-token.wrong'] })).status, 404);
  assert.equal((await tryUpgrade(ws, { protocols: good, origin: 'http://evil.example' })).status, 403);
  assert.equal((await tryUpgrade(ws, { protocols: good, host: `rebound.example:${server.port}` })).status, 403);
  assert.equal((await tryUpgrade(`${server.origin}/ws/dashboard`, { protocols: ['agentty.v1'] })).status, 404);

  // Pages carry a CSP with no external source.
  const page = await httpGet(`${server.origin}/t/${shell.id}`);
  assert.equal(page.status, 200);
  assert.match(page.headers['content-security-policy'], /default-src 'self'/);
  assert.equal(page.headers['x-content-type-options'], 'nosniff');

  // A page on another origin that knows the secret still cannot connect or fetch.
  const foreign = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>foreign</title>');
  });
  await new Promise((resolve) => foreign.listen(0, '127.0.0.1', resolve));
  const context = await browser.newContext();
  const attacker = await context.newPage();
  await attacker.goto(`http://127.0.0.1:${foreign.address().port}/`);
  const outcome = await attacker.evaluate(async ({ origin, id, token }) => {
    const socket = await new Promise((resolve) => {
      const ws = new WebSocket(`${origin.replace('http', 'ws')}/ws/terminal/${id}`, ['agentty.v1', `agentty-token.${token}`]);
      ws.onopen = () => { ws.close(); resolve('open'); };
      ws.onerror = () => resolve('refused');
    });
    let fetched;
    try {
      const r = await fetch(`${origin}/api/executions`, { headers: { 'X-Agentty-Token': token } });
      fetched = `status ${r.status}`;
    } catch {
      fetched = 'blocked';
    }
    return { socket, fetched };
  }, { origin: server.origin, id: shell.id, token: TOKEN });
  assert.equal(outcome.socket, 'refused');
  assert.equal(outcome.fetched, 'blocked');
  await context.close();
  foreign.close();

  // The page without the secret in its fragment gets nothing and says why.
  const bare = await browser.newContext();
  const noToken = await bare.newPage();
  await noToken.goto(`${server.origin}/t/${shell.id}`);
  await noToken.waitForSelector('#message:not([hidden])', { timeout: 15000 });
  assert.match(await noToken.innerText('#message'), /#token=/);
  const wrongToken = await bare.newPage();
  await wrongToken.goto(`${server.origin}/t/${shell.id}#token=${'0'.repeat(64)}`);
  await wrongToken.waitForSelector('#message:not([hidden])', { timeout: 15000 });
  assert.match(await wrongToken.innerText('#message'), /Cannot connect/);
  assert.equal(await wrongToken.evaluate(() => window.__agentty.screenText().trim()), '');
  await bare.close();
});
