// End-to-end (audit 30): the terminal and replay pages as a demanding person
// uses them, in a real browser (Debian chromium through playwright-core)
// against the real binary driven through MCP: a wide terminal watched on a
// phone stays readable and scrolls, a swipe reaches the history, and the
// replay page answers a video player's keys.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentty } from './lib/mcp-client.mjs';
import { TOKEN, launchBrowser, openPage, watchPage, parseUrl, waitForLine } from './lib/web-helpers.mjs';

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
// The smallest font the pages use (xterm_view.ts' MIN_FONT_SIZE).
const MIN_FONT_SIZE = 10;
// 100 lines as wide as execute's default 120 columns, the last column marked.
const WIDE_LINES = "for i in $(seq 1 100); do printf 'line-%03d %0106d|\\n' $i 0; done";

let agent;
let browser;
let origin;
let wide;  // an execution that printed WIDE_LINES

before(async () => {
  agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  browser = await launchBrowser();
  wide = await agent.call('execute', { command: WIDE_LINES, side_effects: ['NONE'], name: 'wide-lines' });
  assert.equal(wide.status, 'completed', JSON.stringify(wide));
  origin = parseUrl(wide.terminal_url).origin;
});

after(async () => {
  await browser?.close();
  await agent?.client.close();
});

async function openWatched(context, url, viewport) {
  const opened = await openPage(context, url, viewport);
  await opened.page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await opened.page.waitForFunction(() => Number(document.body.dataset.snapshots ?? 0) >= 1, null, { timeout: 15000 });
  return opened;
}

// The terminal's font, its size, and how it sits in the page's scrolling box.
const layout = (page) => page.evaluate(() => {
  const main = document.querySelector('main');
  const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
  return {
    font: window.__agentty.term.options.fontSize,
    cols: window.__agentty.term.cols,
    screenWidth: screen.width,
    mainWidth: main.clientWidth,
    sideways: main.scrollWidth - main.clientWidth,
  };
});

// Scrolls the page's box all the way right: the last column is then in view.
const lastColumnInView = (page) => page.evaluate(() => {
  const main = document.querySelector('main');
  main.scrollLeft = main.scrollWidth;
  const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
  return screen.right <= main.getBoundingClientRect().right + 0.5 && screen.right > 0;
});

test('on a phone a watched 120-column terminal keeps a readable font and scrolls sideways; a desktop still shows it whole at full size', async () => {
  const context = await browser.newContext();
  const { page, problems } = await openWatched(context, wide.terminal_url, PHONE);
  await waitForLine(page, `line-100 ${'0'.repeat(106)}|`);
  const phone = await layout(page);
  assert.equal(phone.cols, 120, 'a watcher keeps the PTY size');
  assert.ok(phone.font >= MIN_FONT_SIZE, `the font is unreadably small: ${JSON.stringify(phone)}`);
  assert.ok(phone.sideways > 0 && phone.screenWidth > phone.mainWidth, `nothing to scroll to: ${JSON.stringify(phone)}`);
  assert.equal(await lastColumnInView(page), true, 'the last column can be scrolled into view');

  await page.setViewportSize(DESKTOP);
  await page.waitForFunction(() => window.__agentty.term.options.fontSize === 14, null, { timeout: 15000 });
  const desktop = await layout(page);
  assert.equal(desktop.sideways, 0, `a desktop window scrolls sideways: ${JSON.stringify(desktop)}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('on a phone the replay keeps a readable font and scrolls sideways', async () => {
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, `${origin}/r/${wide.execution_id}#token=${TOKEN}`, PHONE);
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  const phone = await layout(page);
  assert.equal(phone.cols, 120);
  assert.ok(phone.font >= MIN_FONT_SIZE, `the font is unreadably small: ${JSON.stringify(phone)}`);
  assert.ok(phone.sideways > 0, `nothing to scroll to: ${JSON.stringify(phone)}`);
  assert.equal(await lastColumnInView(page), true);
  assert.deepEqual(problems, []);
  await context.close();
});

// The heading's height in lines of its own text, and whether it says it all.
const heading = (page) => page.evaluate(() => {
  const title = document.querySelector('h1.title');
  const line = parseFloat(getComputedStyle(title).lineHeight) || 17;
  return { lines: Math.round(title.getBoundingClientRect().height / line), tooltip: title.title };
});

test('on a phone a long command heads the terminal and replay pages in two lines; a tap shows all of it', async () => {
  // Under the 200 bytes of a recording's title, so both pages head with all of it.
  const words = Array.from({ length: 18 }, (_, i) => `word-${i}`).join(' ');
  const command = `echo ${words} > /dev/null; echo long-heading-done`;
  const r = await agent.call('execute', { command, side_effects: ['NONE'] });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  const context = await browser.newContext();
  for (const url of [r.terminal_url, `${origin}/r/${r.execution_id}#token=${TOKEN}`]) {
    const { page, problems } = await openPage(context, url, PHONE);
    await waitForLine(page, 'long-heading-done');
    const clamped = await heading(page);
    assert.ok(clamped.lines <= 2, `${url}: the heading takes ${clamped.lines} lines`);
    assert.equal(clamped.tooltip, command, 'the full command is the tooltip');
    await page.locator('h1.title').click();
    const expanded = await heading(page);
    assert.ok(expanded.lines > 2, `${url}: a tap did not show the whole command (${expanded.lines} lines)`);
    await page.locator('h1.title').click();
    assert.equal((await heading(page)).lines, clamped.lines, 'a second tap did not clamp it again');
    // A desktop window shows the heading whole.
    await page.setViewportSize(DESKTOP);
    await page.waitForFunction(() => getComputedStyle(document.querySelector('h1.title')).display !== '-webkit-box');
    assert.deepEqual(problems, []);
    await page.close();
  }
  await context.close();
});

test('on a phone, who takes over types at full size in a terminal the width of the phone', async (t) => {
  const shell = await agent.call('open', { name: 'phone-shell' });
  assert.equal(shell.isError, false, shell.error);
  t.after(() => agent.call('close', { execution_id: shell.execution_id }));
  const context = await browser.newContext();
  const { page, problems } = await openWatched(context, shell.terminal_url, PHONE);
  assert.ok((await layout(page)).font >= MIN_FONT_SIZE);
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  await page.waitForFunction(() => window.__agentty.term.cols < 120, null, { timeout: 15000 });
  const held = await layout(page);
  assert.equal(held.font, 14);
  assert.ok(held.screenWidth <= held.mainWidth, `the holder's terminal is wider than the phone: ${JSON.stringify(held)}`);
  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  assert.deepEqual(problems, []);
  await context.close();
});

// A one-finger swipe from (x0, y0) to (x1, y1), as a touch screen sends it.
async function swipe(cdp, [x0, y0], [x1, y1]) {
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: x0, y: y0 }] });
  for (let i = 1; i <= 10; i++) {
    await cdp.send('Input.dispatchTouchEvent', {
      type: 'touchMove', touchPoints: [{ x: x0 + ((x1 - x0) * i) / 10, y: y0 + ((y1 - y0) * i) / 10 }],
    });
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

test('on a touch screen a downward swipe over the terminal scrolls back its history, a sideways one its columns', async () => {
  const context = await browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(wide.terminal_url);
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await waitForLine(page, `line-100 ${'0'.repeat(106)}|`);
  const position = () => page.evaluate(() => {
    const buffer = window.__agentty.term.buffer.active;
    return { linesUp: buffer.baseY - buffer.viewportY, left: document.querySelector('main').scrollLeft };
  });
  assert.deepEqual(await position(), { linesUp: 0, left: 0 });
  const box = await page.locator('.xterm-screen').boundingBox();
  const cdp = await context.newCDPSession(page);
  // Down by 20 rows of the terminal's font: 20 lines back.
  const rowHeight = box.height / 40;
  const x = box.x + 100;
  await swipe(cdp, [x, box.y + 50], [x, box.y + 50 + 20 * rowHeight]);
  await page.waitForFunction(() => {
    const buffer = window.__agentty.term.buffer.active;
    return buffer.baseY - buffer.viewportY > 0;
  }, null, { timeout: 15000 });
  const back = await position();
  assert.ok(back.linesUp >= 15 && back.linesUp <= 20, JSON.stringify(back));
  assert.equal(back.left, 0, 'a vertical swipe moved the page sideways');
  // Right to left: the columns off to the right come into view.
  await swipe(cdp, [box.x + 300, box.y + 100], [box.x + 50, box.y + 100]);
  await page.waitForFunction(() => document.querySelector('main').scrollLeft > 100, null, { timeout: 15000 });
  assert.equal((await position()).linesUp, back.linesUp, 'a sideways swipe scrolled the history');
  await cdp.detach();
  assert.deepEqual(problems, []);
  await context.close();
});

// A recording of 8 steps 1.5 s apart: about 12 s to replay, room for 5 s seeks.
const STEPS = "for i in 1 2 3 4 5 6 7 8; do echo step-$i; sleep 1.5; done";

const seekValue = (page) => page.locator('#seek').evaluate((bar) => Number(bar.value));
const seekMax = (page) => page.locator('#seek').evaluate((bar) => Number(bar.max));
const playLabel = (page) => page.locator('#play').innerText();
const activeId = (page) => page.evaluate(() => document.activeElement?.id ?? '');

test('the replay page answers a video player\'s keys (Space/k, Left/Right 5 s, Home/End) and says so on the page', async () => {
  const r = await agent.call('execute', { command: STEPS, side_effects: ['NONE'], yield_ms: 60000 });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, `${origin}/r/${r.execution_id}#token=${TOKEN}`, DESKTOP);
  await page.waitForSelector('body[data-loaded="yes"]', { timeout: 15000 });
  // The keys are stated where a person looks: on the page and on the controls.
  assert.match(await page.locator('#keys').innerText(), /Space.*play\/pause.*5 s.*Home\/End/);
  assert.equal(await page.locator('#play').getAttribute('aria-keyshortcuts'), 'Space k');

  // It starts playing; Space pauses it, k plays it again, k pauses it.
  assert.equal(await playLabel(page), 'Pause');
  await page.locator('body').focus();
  await page.keyboard.press('Space');
  assert.equal(await playLabel(page), 'Play');
  await page.keyboard.press('k');
  assert.equal(await playLabel(page), 'Pause');
  await page.keyboard.press('k');
  assert.equal(await playLabel(page), 'Play');

  // End: the last screen; Left: 5 s before it; Right: the end again.
  await page.keyboard.press('End');
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  await waitForLine(page, 'step-8');
  const total = await seekMax(page);
  assert.ok(total > 10, `the recording is shorter than its steps: ${total} s`);
  assert.ok(Math.abs(await seekValue(page) - total) < 0.01);
  await page.keyboard.press('ArrowLeft');
  assert.ok(Math.abs(await seekValue(page) - (total - 5)) < 0.01, `${await seekValue(page)} of ${total}`);
  assert.equal(await page.getAttribute('body', 'data-finished'), 'no');
  await page.waitForFunction(() => !window.__agentty.screenText().includes('step-8'), null, { timeout: 15000 });
  await page.keyboard.press('ArrowLeft');
  assert.ok(Math.abs(await seekValue(page) - (total - 10)) < 0.01, `${await seekValue(page)} of ${total}`);
  await page.keyboard.press('ArrowRight');
  assert.ok(Math.abs(await seekValue(page) - (total - 5)) < 0.01, `${await seekValue(page)} of ${total}`);
  await page.keyboard.press('Home');
  assert.equal(await seekValue(page), 0);
  await page.waitForFunction(() => !window.__agentty.screenText().includes('step-2'), null, { timeout: 15000 });
  // On the seek bar the arrows are these 5 s too, not a percent of the recording.
  await page.locator('#seek').focus();
  await page.keyboard.press('ArrowRight');
  assert.ok(Math.abs(await seekValue(page) - 5) < 0.01, `${await seekValue(page)} of ${total}`);
  assert.equal(await playLabel(page), 'Play', 'seeking while paused stays paused');

  // Keys that belong elsewhere stay there: Space on a button presses it and
  // arrows in the speed list choose a speed. In the terminal (nothing is typed
  // into a replay) they are the player's, as after a click on a video, and
  // Ctrl+] leaves it.
  await page.locator('#end').focus();
  await page.keyboard.press('Space');
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  assert.equal(await playLabel(page), 'Play');
  await page.locator('#speed').focus();
  await page.keyboard.press('ArrowLeft');
  assert.ok(Math.abs(await seekValue(page) - total) < 0.01, 'an arrow in the speed list seeked');
  await page.locator('.xterm-helper-textarea').focus();
  await page.keyboard.press('ArrowLeft');
  assert.ok(Math.abs(await seekValue(page) - (total - 5)) < 0.01, `in the terminal: ${await seekValue(page)} of ${total}`);
  await page.keyboard.press('End');
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  await page.keyboard.press('Space');
  assert.equal(await playLabel(page), 'Pause', 'Space in the terminal plays');
  await page.keyboard.press('k');
  assert.equal(await playLabel(page), 'Play', 'k in the terminal pauses');
  assert.ok(await page.evaluate(() => document.activeElement?.classList.contains('xterm-helper-textarea')),
    'the keys moved the focus out of the terminal');
  await page.keyboard.press('Control+BracketRight');
  assert.equal(await activeId(page), 'play');
  await page.keyboard.press('Space');  // the focused Play button's own Space
  assert.equal(await playLabel(page), 'Pause');
  assert.deepEqual(problems, []);
  await context.close();
});

// Where the cursor's row is in the page's scrolling box, and whether it shows.
const cursorInView = (page) => page.evaluate(() => {
  const main = document.querySelector('main');
  const term = window.__agentty.term;
  const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
  const height = screen.height / term.rows;
  const top = screen.top - main.getBoundingClientRect().top + term.buffer.active.cursorY * height;
  return {
    font: term.options.fontSize, scrollTop: main.scrollTop, top,
    visible: top >= -0.5 && top + height <= main.clientHeight + 0.5,
    overflows: main.scrollHeight > main.clientHeight,
  };
});

test('in a short window (a phone held sideways) the readable terminal keeps the cursor row in view, unless the person scrolled away', async (t) => {
  const LANDSCAPE = { width: 844, height: 390 };
  const context = await browser.newContext();
  // A short output: its first lines, at the top, are where the cursor is.
  const short = await agent.call('execute', { command: 'echo only-line; exit 3', side_effects: ['NONE'] });
  let { page, problems } = await openWatched(context, short.terminal_url, LANDSCAPE);
  await waitForLine(page, 'only-line');
  let seen = await cursorInView(page);
  assert.ok(seen.font >= MIN_FONT_SIZE && seen.overflows, JSON.stringify(seen));
  assert.ok(seen.visible && seen.scrollTop === 0, JSON.stringify(seen));
  assert.deepEqual(problems, []);

  // A shell that prints more than the window holds: its prompt, at the
  // bottom, is followed down.
  const shell = await agent.call('open', { name: 'short-window-shell' });
  assert.equal(shell.isError, false, shell.error);
  t.after(() => agent.call('close', { execution_id: shell.execution_id }));
  ({ page, problems } = await openWatched(context, shell.terminal_url, LANDSCAPE));
  await agent.call('execute', { session: shell.execution_id, command: 'seq 1 60', side_effects: ['NONE'] });
  await waitForLine(page, '60');
  await page.waitForFunction(() => document.querySelector('main').scrollTop > 0, null, { timeout: 15000 });
  seen = await cursorInView(page);
  assert.ok(seen.visible, `the prompt is below the fold: ${JSON.stringify(seen)}`);

  // Scrolled back up by the person: more output leaves them there.
  await page.evaluate(() => new Promise((resolve) => {
    const main = document.querySelector('main');
    main.addEventListener('scroll', resolve, { once: true });
    main.scrollTop = 0;
  }));
  await agent.call('execute', { session: shell.execution_id, command: 'echo more-output', side_effects: ['NONE'] });
  await waitForLine(page, 'more-output');
  assert.equal((await cursorInView(page)).scrollTop, 0, 'the page pulled the person back to the cursor');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a program that exited non-zero is shown as failed, an ended one says why it cannot be taken over, the dashboard counts them', async (t) => {
  // Its own server: the counts are of every execution it has.
  const own = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => own.client.close());
  const ok = await own.call('execute', { command: 'true', side_effects: ['NONE'] });
  const bad = await own.call('execute', { command: 'exit 3', side_effects: ['NONE'] });
  assert.equal(bad.status, 'completed', JSON.stringify(bad));
  // Ended with its server, after the test.
  const running = await own.call('execute', { command: 'sleep 600', side_effects: ['NONE'], yield_ms: 10 });
  assert.equal(running.isError, false, running.error);
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, `${parseUrl(ok.terminal_url).origin}/#token=${TOKEN}`, DESKTOP);
  await page.locator(`#executions tr[data-execution-id="${running.execution_id}"]`).waitFor({ timeout: 15000 });
  const statusColor = (id) => page.locator(`#executions tr[data-execution-id="${id}"] td.status`)
    .evaluate((cell) => getComputedStyle(cell).color);
  assert.equal(await statusColor(bad.execution_id), 'rgb(255, 143, 143)', 'exit 3 looks like a success');
  assert.notEqual(await statusColor(ok.execution_id), 'rgb(255, 143, 143)');
  await page.waitForFunction(() => document.getElementById('counts')?.textContent === '3 executions, 1 running, 1 failed',
    null, { timeout: 15000 });

  const terminal = (await openWatched(context, bad.terminal_url, DESKTOP)).page;
  assert.equal(await terminal.locator('#status').evaluate((e) => getComputedStyle(e).backgroundColor), 'rgb(107, 31, 31)');
  assert.equal(await terminal.locator('#holder').innerText(), 'Read-only: the program has ended');
  assert.equal(await terminal.locator('#take-over').isHidden(), true, 'a button that can never work is offered');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a replay links to its execution\'s terminal page while agentty has the execution', async () => {
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, `${origin}/r/${wide.execution_id}#token=${TOKEN}`, DESKTOP);
  await page.waitForSelector('body[data-loaded="yes"]', { timeout: 15000 });
  const link = page.getByRole('link', { name: 'terminal', exact: true });
  assert.equal(await link.count(), 1, 'no way from the replay to the execution');
  await link.click();
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  assert.equal(new URL(page.url()).pathname, `/t/${wide.execution_id}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('between Take over and the answer (a slow link) the page says it is taking over and the button cannot be pressed twice', async (t) => {
  const shell = await agent.call('open', { name: 'slow-link-shell' });
  assert.equal(shell.isError, false, shell.error);
  t.after(() => agent.call('close', { execution_id: shell.execution_id }));
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  // The terminal's socket goes through the test, which holds agentty's
  // answers back once the page has asked to take over.
  let holding = false;
  const held = [];
  let toPage;
  await page.routeWebSocket(/\/ws\/terminal\//, (ws) => {
    const server = ws.connectToServer();
    toPage = ws;
    ws.onMessage((message) => {
      if (typeof message === 'string' && JSON.parse(message).type === 'take_over') holding = true;
      server.send(message);
    });
    server.onMessage((message) => (holding ? held.push(message) : ws.send(message)));
  });
  await page.setViewportSize(DESKTOP);
  await page.goto(shell.terminal_url);
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await page.waitForSelector('#take-over:not([disabled])', { timeout: 15000 });
  await page.click('#take-over');
  await page.waitForFunction(() => document.getElementById('holder').textContent === 'Taking over…', null, { timeout: 15000 });
  assert.equal(await page.isDisabled('#take-over'), true);
  assert.equal(await page.getAttribute('body', 'data-held'), 'no');
  // The answer arrives: the page holds the terminal.
  holding = false;
  for (const message of held.splice(0)) toPage.send(message);
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  assert.match(await page.locator('#holder').innerText(), /You hold this terminal/);
  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  assert.equal(await page.locator('#holder').innerText(), 'Read-only');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the dashboard lists the newest first, counts a silent program idle from its start, and colours a stopped one', async (t) => {
  const own = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  t.after(() => own.client.close());
  const first = await own.call('execute', { command: 'true', side_effects: ['NONE'] });
  const stopped = await own.call('execute', { command: 'sleep 600', side_effects: ['NONE'], yield_ms: 10 });
  assert.equal((await own.call('stop', { execution_id: stopped.execution_id })).isError, false);
  await own.call('wait', { execution_id: stopped.execution_id, until: 'exit', timeout_ms: 15000 });
  // Ended with its server, after the test: prints nothing.
  const silent = await own.call('execute', { command: 'sleep 600', side_effects: ['NONE'], yield_ms: 10 });
  assert.equal(silent.isError, false, silent.error);
  const context = await browser.newContext();
  const { page, problems } = await openPage(context, `${parseUrl(first.terminal_url).origin}/#token=${TOKEN}`, DESKTOP);
  const row = (id) => page.locator(`#executions tr[data-execution-id="${id}"]`);
  await row(silent.execution_id).waitFor({ timeout: 15000 });
  assert.deepEqual(await page.locator('#executions tr[data-execution-id]').evaluateAll((rows) => rows.map((r) => r.dataset.executionId)),
    [silent.execution_id, stopped.execution_id, first.execution_id], 'newest first, as ps lists them');
  // Quiet since it started: a duration, not an empty cell.
  await page.waitForFunction((id) => /\d/.test(document.querySelector(`tr[data-execution-id="${id}"] td.idle`)?.textContent ?? ''),
    silent.execution_id, { timeout: 15000 });
  const color = await row(stopped.execution_id).locator('td.status').evaluate((cell) => getComputedStyle(cell).color);
  const plain = await row(first.execution_id).locator('td.status').evaluate((cell) => getComputedStyle(cell).color);
  assert.notEqual(color, plain, 'stopped looks like completed');
  assert.notEqual(color, 'rgb(255, 143, 143)', 'stopped looks like a failure');
  assert.deepEqual(problems, []);
  await context.close();
});
