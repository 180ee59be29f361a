// End-to-end: replaying an execution's recording in a real browser (Debian
// chromium through playwright-core): the recordings API, the dashboard's
// list of recordings and the replay page, against the real binary driven
// through MCP (the official SDK client).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentty } from './lib/mcp-client.mjs';
import { TOKEN, launchBrowser, watchPage, parseUrl, screenText, httpGet } from './lib/web-helpers.mjs';

let agent;
let browser;
let origin;

before(async () => {
  agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await agent?.client.close();
});

async function run(command) {
  const r = await agent.call('execute', { command, side_effects: ['NONE'] });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  origin = parseUrl(r.terminal_url).origin;
  return r;
}

async function openReplay(context, id, fragment = `#token=${TOKEN}`) {
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.setViewportSize({ width: 1100, height: 700 });
  await page.goto(`${origin}/r/${id}${fragment}`);
  return { page, problems };
}

test('the recordings API lists each recording with its command and serves the file, only with the secret', async () => {
  const r = await run("printf 'recorded line\\n'");
  const api = `${origin}/api/recordings`;
  const secret = { 'X-Agentty-Token': TOKEN };
  assert.equal((await httpGet(api)).status, 404);
  assert.equal((await httpGet(`${api}/${r.execution_id}`)).status, 404);
  const listed = await httpGet(api, secret);
  assert.equal(listed.status, 200);
  assert.equal(listed.headers['cache-control'], 'no-store');
  const entry = JSON.parse(listed.body).recordings.find((e) => e.id === r.execution_id);
  assert.ok(entry, listed.body);
  assert.equal(entry.title, "printf 'recorded line\\n'");
  assert.equal(entry.cols, 120);
  assert.equal(entry.rows, 40);
  assert.ok(entry.bytes > 0);
  assert.equal(entry.terminal_path, `/t/${r.execution_id}`);
  assert.equal(entry.running, false);

  const file = await httpGet(`${api}/${r.execution_id}`, secret);
  assert.equal(file.status, 200);
  assert.equal(file.headers['content-type'], 'application/x-asciicast');
  const [header, ...events] = file.body.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(header.version, 2);
  assert.ok(events.some(([, kind, data]) => kind === 'o' && data.includes('recorded line')), file.body);
  assert.equal(Number(file.headers['content-length']), Buffer.byteLength(file.body));

  // Nothing but a recording's own file: no paths, no other files of the state dir.
  for (const bad of ['..%2Faudit.jsonl', '../audit.jsonl', '.hidden', 'missing', `${r.execution_id}.cast`, `${r.execution_id}/x`]) {
    assert.equal((await httpGet(`${api}/${bad}`, secret)).status, 404, bad);
  }
});

test('the replay page plays a recording to its end, with long pauses shortened, and End shows the end at once', async () => {
  // The wait before the first line is a pause too (the clock starts when the
  // program does): longer than the 2 s limit, so it plays as exactly 2 s
  // however late a loaded machine starts the shell (1 s late showed 0:03).
  const r = await run("sleep 2.5; printf 'before the pause\\n'; sleep 3; printf 'after the pause\\n'");
  const context = await browser.newContext();
  const { page, problems } = await openReplay(context, r.execution_id);
  await page.waitForSelector('body[data-loaded="yes"]', { timeout: 15000 });
  // Played by itself: the 2.5 s and 3 s pauses take 2 s each of the replay.
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  assert.match(await screenText(page), /before the pause\n(.*\n)*after the pause/);
  assert.match(await page.locator('#time').innerText(), /^0:04 \/ 0:04$/);
  assert.equal(await page.locator('#title').innerText(), "sleep 2.5; printf 'before the pause\\n'; sleep 3; printf 'after the pause\\n'");
  // From the start again, then End at once.
  await page.click('#restart');
  await page.waitForSelector('body[data-finished="no"]');
  await page.click('#end');
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  await page.waitForFunction(() => window.__agentty.screenText().includes('after the pause'), null, { timeout: 15000 });
  assert.equal(await page.locator('#play').innerText(), 'Play');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the seek bar jumps forward and back to any moment; a paused replay stays paused', async () => {
  // Each pause, the one before the first line included (the clock starts
  // when the program does), is longer than the page's 2 s idle limit, so each
  // plays as exactly 2 s and the lines come at 2, 4 and 6 s. With pauses of
  // exactly 2 s it came out at 3.99 s on a loaded machine (the first line was
  // read late), so the clock showed 0:03 / 0:03; with no pause before the
  // first line, a shell started 1 s late would have moved every line by 1 s.
  const r = await run("sleep 2.5; printf 'first line\\n'; sleep 2.5; printf 'second line\\n'; sleep 2.5; printf 'third line\\n'");
  const context = await browser.newContext();
  const { page, problems } = await openReplay(context, r.execution_id);
  await page.waitForSelector('body[data-loaded="yes"]', { timeout: 15000 });
  // Paused (in one task of the page, so no tick runs between the look and the click).
  await page.evaluate(() => {
    const play = document.getElementById('play');
    if (play.textContent === 'Pause') play.click();
  });
  assert.equal(await page.locator('#play').innerText(), 'Play');
  assert.equal(Number(await page.locator('#seek').getAttribute('max')) > 5.9, true);
  const seek = (seconds) => page.evaluate((value) => {
    const bar = document.getElementById('seek');
    bar.value = String(value);
    bar.dispatchEvent(new Event('input'));
    bar.dispatchEvent(new Event('change'));
  }, seconds);
  const shown = () => page.evaluate(() => window.__agentty.screenText());

  await seek(5);  // between the second and the third line
  await page.waitForFunction(() => window.__agentty.screenText().includes('second line'), null, { timeout: 15000 });
  assert.doesNotMatch(await shown(), /third line/);
  assert.match(await page.locator('#time').innerText(), /^0:05 \/ 0:06$/);

  await seek(3);  // back: only the first line was there then
  await page.waitForFunction(() => !window.__agentty.screenText().includes('second line'), null, { timeout: 15000 });
  assert.match(await shown(), /first line/);
  assert.equal(await page.locator('#play').innerText(), 'Play', 'a seek does not start playback');
  assert.equal(await page.evaluate(() => document.body.dataset.finished), 'no');

  await seek(6.5);  // past the end: the last screen, finished
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  assert.match(await shown(), /first line\n(.*\n)*second line\n(.*\n)*third line/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the dashboard lists recordings, each a link to its replay; the terminal page links its own', async () => {
  const r = await run("printf 'listed on the dashboard\\n'");
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${origin}/#token=${TOKEN}`);
  const row = page.locator(`tr[data-recording-id="${r.execution_id}"]`);
  await row.waitFor({ timeout: 15000 });
  assert.match(await row.innerText(), /printf 'listed on the dashboard/);
  assert.match(await row.innerText(), /ended: its terminal/);
  await row.locator('a.replay-link').click();
  await page.waitForURL(`${origin}/r/${r.execution_id}#token=${TOKEN}`);
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  assert.match(await screenText(page), /listed on the dashboard/);

  await page.goto(r.terminal_url);
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  assert.equal(await page.locator('#replay').getAttribute('href'), `/r/${r.execution_id}#token=${TOKEN}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a replay link without the secret, or of no recording, says why instead of playing', async () => {
  const r = await run('true');
  const context = await browser.newContext();
  for (const [id, fragment] of [[r.execution_id, ''], ['0123456789ab', `#token=${TOKEN}`]]) {
    const { page } = await openReplay(context, id, fragment);
    await page.waitForSelector('body[data-loaded="error"]', { timeout: 15000 });
    const message = await page.locator('#message').innerText();
    assert.match(message, new RegExp(`No recording ${id} here`));
    assert.match(message, /secret/);
    assert.match(message, /AGENTTY_MAX_RECORDINGS/);
  }
  await context.close();
});
