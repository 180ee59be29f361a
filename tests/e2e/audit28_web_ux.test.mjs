// End-to-end (audit 28): the dashboard, terminal and replay pages as a person
// uses them, in a real browser (Debian chromium through playwright-core)
// against the real binary driven through MCP: on a phone-sized window, with
// the keyboard only, as a screen reader sees them, and the contrast of their
// text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentty } from './lib/mcp-client.mjs';
import { TOKEN, launchBrowser, openPage, parseUrl } from './lib/web-helpers.mjs';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
// Long enough to need three lines on a phone, with no space to break at in
// its middle (a path).
const LONG_COMMAND = "printf '%s\\n' done-with-a-long-command " +
  '/very/long/path/to/some/directory/that/goes/on/and/on/and/on/file-name-at-the-end.txt';

let agent;
let browser;
let origin;
let finished;  // an execution that ran LONG_COMMAND

before(async () => {
  agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  browser = await launchBrowser();
  finished = await agent.call('execute', { command: LONG_COMMAND, side_effects: ['NONE'], name: 'long-one' });
  assert.equal(finished.status, 'completed', JSON.stringify(finished));
  origin = parseUrl(finished.terminal_url).origin;
});

after(async () => {
  await browser?.close();
  await agent?.client.close();
});

async function openDashboard(context, viewport) {
  const opened = await openPage(context, `${origin}/#token=${TOKEN}`, viewport);
  await opened.page.locator(`#executions tr[data-execution-id="${finished.execution_id}"]`).waitFor({ timeout: 15000 });
  await opened.page.locator(`#recordings tr[data-recording-id="${finished.execution_id}"]`).waitFor({ timeout: 15000 });
  return opened;
}

// Where each cell of a row is and whether its text is cut off.
const cellsOf = (page, selector) => page.locator(selector).evaluate((row) => Array.from(row.cells, (cell) => {
  const box = cell.getBoundingClientRect();
  return {
    text: cell.innerText.trim(), label: getComputedStyle(cell, '::before').content,
    left: box.left, right: box.right, width: box.width, clipped: cell.scrollWidth > cell.clientWidth + 1,
  };
}));

test('on a phone the dashboard shows each execution and recording whole, each value named, with no sideways scrolling', async () => {
  const context = await browser.newContext();
  const { page, problems } = await openDashboard(context, PHONE);
  const overflow = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth - window.innerWidth,
    tables: Array.from(document.querySelectorAll('.table-scroll'), (s) => s.scrollWidth - s.clientWidth),
  }));
  assert.deepEqual(overflow, { page: 0, tables: [0, 0, 0] }, 'something is off to the side');
  for (const selector of [`#executions tr[data-execution-id="${finished.execution_id}"]`,
    `#recordings tr[data-recording-id="${finished.execution_id}"]`]) {
    const cells = await cellsOf(page, selector);
    for (const cell of cells) {
      if (cell.width === 0) continue;  // an empty value is left out
      assert.ok(cell.left >= 0 && cell.right <= PHONE.width + 0.5 && !cell.clipped,
        `${selector}: a cell is cut off or off-screen: ${JSON.stringify(cell)}`);
    }
    const command = cells.find((cell) => cell.text === LONG_COMMAND);
    assert.ok(command, `${selector}: the whole command is shown: ${JSON.stringify(cells)}`);
    assert.match(command.label, /command/, 'the value says which column it is');
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test('on a desktop the dashboard is a table whose long commands wrap instead of being cut off; its tab names the server', async () => {
  const context = await browser.newContext();
  const { page, problems } = await openDashboard(context, DESKTOP);
  // Every agent's server has a dashboard: their tabs were all "agentty".
  assert.equal(await page.title(), `agentty dashboard ${new URL(origin).host}`);
  const row = `#executions tr[data-execution-id="${finished.execution_id}"]`;
  assert.equal(await page.locator(row).evaluate((r) => getComputedStyle(r).display), 'table-row');
  for (const selector of [row, `#recordings tr[data-recording-id="${finished.execution_id}"]`]) {
    const command = (await cellsOf(page, selector)).find((cell) => cell.text === LONG_COMMAND);
    assert.ok(command && !command.clipped, `${selector}: ${JSON.stringify(await cellsOf(page, selector))}`);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

// Chrome's own accessibility tree (what a screen reader gets), not a guess
// from the markup: a table shown as cards must still be a table.
async function accessibleTables(page) {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  const byId = new Map(nodes.map((n) => [n.nodeId, n]));
  const tables = [];
  for (const node of nodes) {
    if (node.ignored || node.role?.value !== 'table') continue;
    const headers = [];
    const walk = (n) => {
      if (n.role?.value === 'columnheader') headers.push(n.name?.value);
      for (const child of n.childIds ?? []) if (byId.has(child)) walk(byId.get(child));
    };
    walk(node);
    tables.push({ name: node.name?.value ?? '', headers });
  }
  await cdp.detach();
  return tables;
}

test('a screen reader finds the dashboard tables by name, with their column headers, on a desktop and on a phone', async () => {
  const context = await browser.newContext();
  const { page, problems } = await openDashboard(context, DESKTOP);
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    const tables = await accessibleTables(page);
    const named = (name) => tables.find((t) => t.name === name);
    assert.deepEqual(named('executions')?.headers,
      ['name', 'id', 'status', 'command', 'purpose', 'idle', 'state', 'handoff'], JSON.stringify(tables));
    assert.deepEqual(named('Recordings')?.headers, ['command', 'started', 'size', 'execution'], JSON.stringify(tables));
    assert.deepEqual(named('Agentty servers on this machine')?.headers, ['kind', 'pid', 'started', 'dashboard'],
      JSON.stringify(tables));
  }
  assert.deepEqual(problems, []);
  await context.close();
});

const activeElement = (page) => page.evaluate(() => {
  const e = document.activeElement;
  return e.id || e.className || e.tagName;
});

// Presses Tab until the element with `id` has the focus; fails after `limit` presses.
async function tabTo(page, id, limit = 12) {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (await activeElement(page) === id) return;
  }
  assert.fail(`Tab never reached #${id}`);
}

test('keyboard only: take over with Enter, type, leave the terminal with Ctrl+], release with Enter; the holder is announced', async (t) => {
  const shell = await agent.call('open', { name: 'keyboard-shell' });
  assert.equal(shell.isError, false, shell.error);
  t.after(() => agent.call('close', { execution_id: shell.execution_id }));
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, shell.terminal_url, { width: 1000, height: 600 });
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  const xtermInput = 'xterm-helper-textarea';

  // A watcher who tabbed into the terminal gets out with Tab (nothing they
  // type goes anywhere).
  await page.locator(`.${xtermInput}`).focus();
  await page.keyboard.press('Shift+Tab');
  assert.notEqual(await activeElement(page), xtermInput, 'Shift+Tab kept the focus in a read-only terminal');
  await page.locator(`.${xtermInput}`).focus();
  await page.keyboard.press('Tab');
  assert.notEqual(await activeElement(page), xtermInput, 'Tab kept the focus in a read-only terminal');

  await page.locator('body').focus();
  await tabTo(page, 'take-over');
  assert.equal(await page.evaluate(() => document.activeElement.matches(':focus-visible')), true);
  await page.keyboard.press('Enter');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  assert.equal(await activeElement(page), xtermInput, 'the keys go to the terminal once taken over');
  // The page's heading is the execution; the way back says where it leads.
  assert.equal(await page.getByRole('heading', { level: 1, name: 'keyboard-shell' }).count(), 1);
  assert.equal(await page.getByRole('link', { name: 'all executions', exact: true }).count(), 1);
  const announced = page.getByRole('status').filter({ hasText: /You hold this terminal/ });
  assert.equal(await announced.count(), 1, 'the takeover is in a live region');
  assert.match(await announced.innerText(), /Ctrl\+\] leaves it/);

  // The holder's Tab is the program's (completion), Ctrl+] gets out.
  // (Completing "kb-" finds no file: bash leaves the line as it is.)
  await page.keyboard.type('echo kb-');
  await page.keyboard.press('Tab');
  assert.equal(await activeElement(page), xtermInput, "a holder's Tab stays in the terminal");
  await page.keyboard.type('$((6*7))');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.__agentty.screenText().includes('kb-42'), null, { timeout: 15000 });
  await page.keyboard.press('Control+BracketRight');
  assert.equal(await activeElement(page), 'release');
  await page.keyboard.press('Enter');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  await page.waitForFunction(() => document.activeElement?.id === 'take-over', null, { timeout: 15000 });
  assert.equal(await page.getByRole('status').filter({ hasText: /^Read-only$/ }).count(), 1);
  assert.deepEqual(problems, []);
  await context.close();
});

test('keyboard only on the replay page: every control is reached with Tab and named, the seek bar moves with keys, the terminal lets go', async () => {
  const command = "printf 'first part\\n'; sleep 1; printf 'second part\\n'";
  const r = await agent.call('execute', { command, side_effects: ['NONE'] });
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, `${origin}/r/${r.execution_id}#token=${TOKEN}`, DESKTOP);
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  assert.equal(await page.title(), `${command} - agentty replay`);
  for (const [role, name] of [['link', 'all executions'], ['heading', command], ['slider', 'position in the replay'], ['button', 'Restart'],
    ['button', 'Play'], ['combobox', 'speed'], ['button', 'End'], ['checkbox', 'screen reader']]) {
    assert.equal(await page.getByRole(role, { name, exact: true }).count(), 1, `${role} "${name}"`);
  }
  await page.locator('body').focus();
  for (const id of ['all-executions', 'terminal-page', 'screen-reader', 'seek', 'restart', 'play', 'speed', 'end']) await tabTo(page, id, 1);

  // Home: back to the start (only the first part); End: the end again.
  await page.locator('#seek').focus();
  await page.keyboard.press('Home');
  await page.waitForFunction(() => !window.__agentty.screenText().includes('second part'), null, { timeout: 15000 });
  // Read out as a time, not as raw seconds: what the page shows next to it.
  const spoken = async () => [await page.locator('#seek').getAttribute('aria-valuetext'),
    (await page.locator('#time').innerText()).replace(' / ', ' of ')];
  const [atStart, shownAtStart] = await spoken();
  assert.equal(atStart, shownAtStart);
  assert.match(atStart, /^0:00 of 0:0[12]$/);
  await page.keyboard.press('End');
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  await page.waitForFunction(() => window.__agentty.screenText().includes('second part'), null, { timeout: 15000 });
  const [atEnd, shownAtEnd] = await spoken();
  assert.equal(atEnd, shownAtEnd);
  assert.match(atEnd, /^0:0([12]) of 0:0\1$/);

  await page.locator('.xterm-helper-textarea').focus();
  await page.keyboard.press('Shift+Tab');
  assert.equal(await activeElement(page), 'end', 'Shift+Tab leaves the replayed terminal');
  await page.locator('.xterm-helper-textarea').focus();
  await page.keyboard.press('Control+BracketRight');
  assert.equal(await activeElement(page), 'play');
  assert.deepEqual(problems, []);
  await context.close();
});

// Every visible piece of text against what is behind it, as drawn (opacity
// of its ancestors included), per WCAG 2 (AA: 4.5:1). xterm.js's own canvas
// and disabled buttons (exempt) are left out.
function lowContrastText() {
  const rgba = (text) => {
    const [r, g, b, a = 1] = text.match(/[\d.]+/g).map(Number);
    return { r, g, b, a };
  };
  const over = (top, bottom, alpha) => ({
    r: top.r * alpha + bottom.r * (1 - alpha), g: top.g * alpha + bottom.g * (1 - alpha),
    b: top.b * alpha + bottom.b * (1 - alpha), a: 1,
  });
  const luminance = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const ratio = (x, y) => {
    const [a, b] = [luminance(x), luminance(y)].sort((p, q) => q - p);
    return (a + 0.05) / (b + 0.05);
  };
  const opacityUpTo = (element, stop) => {
    let product = 1;
    for (let e = element; e && e !== stop; e = e.parentElement) product *= Number(getComputedStyle(e).opacity);
    return product;
  };
  const pageBackground = rgba(getComputedStyle(document.body).backgroundColor);
  const found = [];
  for (const element of document.body.querySelectorAll('*')) {
    if (element.closest('.xterm') || element.disabled) continue;
    const text = Array.from(element.childNodes).filter((n) => n.nodeType === 3).map((n) => n.data).join('').trim();
    if (!text || element.getClientRects().length === 0 || getComputedStyle(element).visibility !== 'visible') continue;
    let behind = element;
    while (behind && rgba(getComputedStyle(behind).backgroundColor).a === 0) behind = behind.parentElement;
    const background = behind ? rgba(getComputedStyle(behind).backgroundColor) : pageBackground;
    const color = rgba(getComputedStyle(element).color);
    // Opacity between the text and its background, then of the group both are in.
    let foreground = over(color, background, color.a * opacityUpTo(element, behind));
    const groupOpacity = behind ? opacityUpTo(behind, null) : 1;
    const shownBackground = over(background, pageBackground, groupOpacity);
    foreground = over(foreground, pageBackground, groupOpacity);
    const contrast = ratio(foreground, shownBackground);
    if (contrast < 4.5) found.push(`${contrast.toFixed(2)}: ${element.tagName}.${element.className} "${text.slice(0, 40)}"`);
  }
  return found;
}

test('text on every page has at least 4.5:1 contrast, also on a dashboard that lost its server', async (t) => {
  const shell = await agent.call('open', { name: 'contrast-shell', purpose: 'a purpose shown in grey' });
  t.after(() => agent.call('close', { execution_id: shell.execution_id }));
  await agent.call('handoff', { execution_id: shell.execution_id, reason: 'a reason in the banner' });
  const context = await browser.newContext();
  const { page: dashboard, problems } = await openDashboard(context, DESKTOP);
  await dashboard.locator(`#executions tr.handoff[data-execution-id="${shell.execution_id}"]`).waitFor({ timeout: 15000 });
  assert.deepEqual(await dashboard.evaluate(lowContrastText), [], 'the dashboard');
  // As the page shows the list while it reconnects (dimmed: "as last seen").
  await dashboard.evaluate(() => { document.body.dataset.connected = 'no'; });
  assert.deepEqual(await dashboard.evaluate(lowContrastText), [], 'the dashboard, disconnected');
  await dashboard.setViewportSize(PHONE);
  assert.deepEqual(await dashboard.evaluate(lowContrastText), [], 'the dashboard on a phone');

  const terminal = (await openPage(context, shell.terminal_url, DESKTOP)).page;
  await terminal.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await terminal.waitForSelector('#handoff:not([hidden])', { timeout: 15000 });
  assert.deepEqual(await terminal.evaluate(lowContrastText), [], 'the terminal page');
  const replay = (await openPage(context, `${origin}/r/${finished.execution_id}#token=${TOKEN}`, DESKTOP)).page;
  await replay.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  assert.deepEqual(await replay.evaluate(lowContrastText), [], 'the replay page');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a terminal page whose agentty stops says so and no longer shows the program as waiting for input', async (t) => {
  const other = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => other.client.close());
  const shell = await other.call('open', { name: 'stopping-server-shell' });
  assert.equal(shell.isError, false, shell.error);
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, shell.terminal_url, { width: 1000, height: 600 });
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await page.waitForSelector('#waiting:not([hidden])', { timeout: 15000 });
  await other.client.close();
  await page.waitForFunction(() => /agentty is not running/.test(document.getElementById('message').textContent),
    null, { timeout: 30000 });
  assert.equal(await page.locator('#status').innerText(), 'disconnected');
  assert.equal(await page.locator('#waiting').isHidden(), true, 'a stale "waiting for input" is shown');
  // The refused reconnects are the browser's console errors, expected here.
  assert.deepEqual(problems.filter((p) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(p)), []);
  await context.close();
});

test('a screen reader reads the terminal once its mode is turned on with the keyboard; the choice is kept', async () => {
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, finished.terminal_url, DESKTOP);
  await page.waitForFunction(() => Number(document.body.dataset.snapshots ?? 0) >= 1, null, { timeout: 15000 });
  const readable = () => page.evaluate(
    () => document.querySelector('.xterm-accessibility-tree')?.textContent ?? '');
  assert.doesNotMatch(await readable(), /done-with-a-long-command/, 'off unless asked for (it costs in a flood)');
  await page.locator('body').focus();
  await tabTo(page, 'screen-reader');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('.xterm-accessibility-tree')?.textContent
    .includes('done-with-a-long-command'), null, { timeout: 15000 });
  await page.reload();
  await page.waitForFunction(() => Number(document.body.dataset.snapshots ?? 0) >= 1, null, { timeout: 15000 });
  assert.equal(await page.locator('#screen-reader').isChecked(), true);
  await page.waitForFunction(() => document.querySelector('.xterm-accessibility-tree')?.textContent
    .includes('done-with-a-long-command'), null, { timeout: 15000 });
  assert.deepEqual(problems, []);
  await context.close();
});
