// Audit 26: recordings and replay as a demanding operator uses them. What
// the recording keeps out (secrets in its title and markers), what the replay
// page does with a recording it cannot read, and that a replay shows what the
// live terminal showed. The real binary through the MCP SDK client; the
// replay page in Debian's chromium through playwright-core.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { startAgentty } from './lib/mcp-client.mjs';
import {
  TOKEN, launchBrowser, watchPage, parseUrl, eventually, openTerminal, screenText, waitForText,
} from './lib/web-helpers.mjs';
import { openFdTargets } from './lib/proc-stats.mjs';

const SECRET = `s26${randomBytes(12).toString('hex')}`;

let agent;
let browser;
let origin;

before(async () => {
  agent = await startAgentty({
    env: { AGENTTY_WEB_TOKEN: TOKEN, AGENTTY_REDACT_ENV_REGEX: '^AUDIT26_SECRET$', AUDIT26_SECRET: SECRET },
  });
  browser = await launchBrowser();
  const r = await agent.call('execute', { command: 'true', side_effects: ['NONE'] });
  origin = parseUrl(r.terminal_url).origin;
});

after(async () => {
  await browser?.close();
  await agent?.client.close();
});

const recordingsDir = () => path.join(agent.stateDir, 'recordings');
const castOf = (id) => readFileSync(path.join(recordingsDir(), `${id}.cast`), 'utf8');

async function run(command) {
  const r = await agent.call('execute', { command, side_effects: ['NONE'] });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  return r;
}

async function openReplay(id) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.setViewportSize({ width: 1100, height: 700 });
  await page.goto(`${origin}/r/${id}#token=${TOKEN}`);
  return { context, page, problems };
}

test('a secret in the command is kept out of the recording title also where the title is cut', async () => {
  // The title keeps the command's first 200 bytes: the secret straddles that
  // cut, its first 11 characters inside.
  const command = `: ${'x'.repeat(186)} ${SECRET}; true`;
  const r = await run(command);
  const header = JSON.parse(castOf(r.execution_id).split('\n')[0]);
  assert.ok(!header.title.includes(SECRET.slice(0, 10)), header.title);
  assert.ok(!castOf(r.execution_id).includes(SECRET.slice(0, 10)));
});

test('a title cut at 200 bytes keeps whole characters: no half of one becomes U+FFFD', async () => {
  // "é" is 2 bytes: it takes bytes 199 and 200, across the cut.
  const command = `: ${'a'.repeat(197)}\u00e9 more; true`;
  const r = await run(command);
  const header = JSON.parse(castOf(r.execution_id).split('\n')[0]);
  assert.equal(header.title, `: ${'a'.repeat(197)}`);
});

test('a secret in a handoff reason is kept out of the recording', async () => {
  const r = await agent.call('execute', { command: 'sleep 30', side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.isError, false, r.error);
  const asked = await agent.call('handoff', { execution_id: r.execution_id, reason: `type ${SECRET} at the prompt` });
  assert.equal(asked.isError, false, asked.error);
  await agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' });
  const cast = castOf(r.execution_id);
  assert.ok(!cast.includes(SECRET), cast);
  assert.match(cast, /handoff requested: type \[REDACTED:AUDIT26_SECRET\] at the prompt/);
});

test('a password typed with write at a prompt that does not echo is not recorded', async () => {
  const r = await agent.call('execute', {
    command: "read -rs -p 'Password: ' pw; echo; echo \"got ${#pw} characters\"", side_effects: ['NONE'], yield_ms: 500,
  });
  assert.equal(r.isError, false, r.error);
  const typed = await agent.call('write', { execution_id: r.execution_id, input: 'typed-pass-26', newline: true });
  assert.equal(typed.isError, false, typed.error);
  const done = await agent.call('wait', { execution_id: r.execution_id, until: 'exit', timeout_ms: 30000 });
  assert.equal(done.isError, false, done.error);
  const cast = castOf(r.execution_id);
  assert.match(cast, /got 13 characters/);
  assert.ok(!cast.includes('typed-pass'), cast);
  assert.match(cast, /"i", "\[hidden input\]"/);
});

test('recordings are private: the directory 0700, each file 0600', async () => {
  const r = await run('true');
  assert.equal(statSync(recordingsDir()).mode & 0o777, 0o700);
  assert.equal(statSync(path.join(recordingsDir(), `${r.execution_id}.cast`)).mode & 0o777, 0o600);
});

test('the replay page says what is wrong with a recording it cannot read instead of staying blank', async () => {
  const broken = {
    audit26empty: '',
    audit26cut: '{"version": 2, "width": 80, "hei',
    audit26notjson: 'this is not asciicast\n[0.1, "o", "x"]\n',
  };
  for (const [id, text] of Object.entries(broken)) {
    writeFileSync(path.join(recordingsDir(), `${id}.cast`), text, { mode: 0o600 });
    const { context, page, problems } = await openReplay(id);
    await page.waitForSelector('body[data-loaded="error"]', { timeout: 15000 });
    assert.match(await page.locator('#message').innerText(), /not an asciicast v2 recording/, id);
    assert.deepEqual(problems, [], id);
    await context.close();
  }
});

// The files of this file's own test recordings (audit26*) the server has open now.
function openRecordingFiles() {
  return openFdTargets(agent.transport.pid)
    .filter((target) => path.basename(target).startsWith('audit26') && target.endsWith('.cast'));
}

test('a replay page that refuses a recording too big for a tab lets go of the download', async () => {
  const file = path.join(recordingsDir(), 'audit26huge.cast');
  writeFileSync(file, '{"version": 2, "width": 80, "height": 24}\n', { mode: 0o600 });
  truncateSync(file, 80 * 1024 * 1024);  // sparse: over the page's 64 MB
  const { context, page, problems } = await openReplay('audit26huge');
  await page.waitForSelector('body[data-loaded="error"]', { timeout: 15000 });
  assert.match(await page.locator('#message').innerText(), /too big to replay in a browser tab/);
  // The tab stays open: the server must not keep sending it the file.
  await eventually(() => openRecordingFiles().length === 0, { timeout: 10000, what: 'the file closed' });
  assert.deepEqual(problems, []);
  await context.close();
});

// GETs `url` reading at most `bytesPerSecond`; resolves { status, length, received }.
function throttledGet(url, headers, bytesPerSecond) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let received = 0;
    const request = http.get(url, { headers }, (response) => {
      response.on('data', (chunk) => {
        received += chunk.length;
        const ahead = received / bytesPerSecond - (Date.now() - started) / 1000;
        if (ahead > 0) {
          response.pause();
          setTimeout(() => response.resume(), ahead * 1000);
        }
      });
      const done = () => resolve({ status: response.statusCode, length: Number(response.headers['content-length']), received });
      response.on('end', done);
      response.on('close', done);
    });
    request.on('error', reject);
  });
}

test('a recording downloads whole when that takes longer than the 30 s request timeout', async () => {
  const file = path.join(recordingsDir(), 'audit26slow.cast');
  writeFileSync(file, '{"version": 2, "width": 80, "height": 24}\n', { mode: 0o600 });
  truncateSync(file, 40 * 1024 * 1024);
  // 40 s at 1 MiB/s: the reader keeps up a steady pace, it never stalls.
  const got = await throttledGet(`${origin}/api/recordings/audit26slow`, { 'X-Agentty-Token': TOKEN }, 1024 * 1024);
  assert.equal(got.status, 200);
  assert.equal(got.received, got.length);
  assert.equal(got.length, 40 * 1024 * 1024);
});

// One request; resolves { status, headers, body } (the body as a string).
function request(url, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const sent = http.request(url, { method, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

test('a recording is served only to a holder of the secret on this Host and Origin; HEAD, Range and links', async () => {
  const r = await run("printf 'served\\n'");
  const url = `${origin}/api/recordings/${r.execution_id}`;
  const secret = { 'X-Agentty-Token': TOKEN };
  const whole = await request(url, { headers: secret });
  assert.equal(whole.status, 200);
  assert.equal(whole.body, castOf(r.execution_id));
  const head = await request(url, { method: 'HEAD', headers: secret });
  assert.equal(head.status, 200);
  assert.equal(Number(head.headers['content-length']), Buffer.byteLength(whole.body));
  assert.equal(head.body, '');
  // Ranges are not served: the whole file, as a 200.
  const ranged = await request(url, { headers: { ...secret, Range: 'bytes=0-9' } });
  assert.equal(ranged.status, 200);
  assert.equal(ranged.body, whole.body);
  assert.equal((await request(url)).status, 404);
  assert.equal((await request(url, { headers: { ...secret, Host: 'evil.example' } })).status, 403);
  assert.equal((await request(url, { headers: { ...secret, Origin: 'http://evil.example' } })).status, 403);
  assert.equal((await request(url, { method: 'POST', headers: secret })).status, 405);
  symlinkSync(path.join(recordingsDir(), `${r.execution_id}.cast`), path.join(recordingsDir(), 'audit26link.cast'));
  assert.equal((await request(`${origin}/api/recordings/audit26link`, { headers: secret })).status, 404);
  const listed = JSON.parse((await request(`${origin}/api/recordings`, { headers: secret })).body);
  assert.ok(!listed.recordings.some((e) => e.id === 'audit26link'));
});

test('a download the reader abandons halfway lets go of the file', async () => {
  const file = path.join(recordingsDir(), 'audit26abandoned.cast');
  writeFileSync(file, '{"version": 2, "width": 80, "height": 24}\n', { mode: 0o600 });
  truncateSync(file, 32 * 1024 * 1024);
  await new Promise((resolve, reject) => {
    const sent = http.get(`${origin}/api/recordings/audit26abandoned`, { headers: { 'X-Agentty-Token': TOKEN } }, (response) => {
      response.once('data', () => {
        sent.destroy();
        resolve();
      });
    });
    sent.on('error', (error) => (error.code === 'ECONNRESET' ? resolve() : reject(error)));
  });
  await eventually(() => openRecordingFiles().length === 0, { timeout: 10000, what: 'the file closed' });
});


// Plays recording `id` to its end and returns the replay's screen rows.
async function replayedRows(id) {
  const { context, page, problems } = await openReplay(id);
  await page.waitForSelector('body[data-loaded="yes"]', { timeout: 15000 });
  await page.click('#end');
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  const rows = (await page.evaluate(() => window.__agentty.viewportText())).split('\n').map((l) => l.trimEnd());
  assert.deepEqual(problems, []);
  await context.close();
  return rows;
}

test('a replay ends on the screen the program left: split and invalid UTF-8, wide characters, CR progress, alt screen, resize inside', async () => {
  const r = await run([
    "printf 'euro \\342'; sleep 0.2; printf '\\202\\254 sign\\n'",
    "printf 'bad \\377\\376 bytes\\n'",
    "printf 'cut \\342\\202X\\n'",
    "printf '\\346\\227\\245\\346\\234\\254 wide\\n'",
    "for i in 1 2 3; do printf '\\rprogress %d%%' $((i*33)); sleep 0.05; done; echo",
    "printf '\\033[?1049halt screen text\\033[?1049l'",
    "printf '\\033[31mred\\033[m plain\\n'",
    "stty cols 30; printf '%s\\n' 0123456789012345678901234567890123456789",
  ].join('; '));
  const live = await agent.call('screen', { execution_id: r.execution_id });
  assert.equal(live.isError, false, live.error);
  const rows = await replayedRows(r.execution_id);
  const liveRows = live.lines.map((l) => l.trimEnd());
  assert.deepEqual(rows.slice(0, 10), liveRows.slice(0, 10));
});

test('a session that ran many commands replays all of them', async (t) => {
  const opened = await agent.call('open', {});
  assert.equal(opened.isError, false, opened.error);
  for (let i = 1; i <= 5; i++) {
    const r = await agent.call('execute', { session: opened.execution_id, command: `echo command-${i}-ran`, side_effects: ['NONE'], yield_ms: 30000 });
    assert.equal(r.isError, false, r.error);
  }
  await agent.call('close', { execution_id: opened.execution_id });
  const rows = (await replayedRows(opened.execution_id)).join('\n');
  for (let i = 1; i <= 5; i++) assert.match(rows, new RegExp(`^command-${i}-ran$`, 'm'), rows);
});

test('a recording cut at AGENTTY_MAX_RECORDING_BYTES still replays, to the marker that says so', async (t) => {
  const capped = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN, AGENTTY_MAX_RECORDING_BYTES: '100000' } });
  t.after(() => capped.client.close());
  const r = await capped.call('execute', { command: 'seq 1 100000', side_effects: ['NONE'], max_output_bytes: 200 });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${parseUrl(r.terminal_url).origin}/r/${r.execution_id}#token=${TOKEN}`);
  await page.waitForSelector('body[data-loaded="yes"]', { timeout: 15000 });
  await page.click('#end');
  await page.waitForSelector('body[data-finished="yes"]', { timeout: 15000 });
  assert.match(await page.locator('#marker').innerText(), /recording stopped: size limit of 100000 bytes reached/);
  assert.match(await page.evaluate(() => window.__agentty.viewportText()), /^\d+$/m);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the live terminal page shows bytes that are not UTF-8 as its replay and the agent\'s screen do', async (t) => {
  const r = await agent.startCommand(t, {
    command: "read x; printf 'cut \\342\\202X bad \\377\\376 Y\\n'; read y", yield_ms: 300,
  });
  const context = await browser.newContext();
  t.after(() => context.close());
  const { page, problems } = await openTerminal(context, r.terminal_url);
  const typed = await agent.call('write', { execution_id: r.execution_id, input: '', newline: true });
  assert.equal(typed.isError, false, typed.error);
  await waitForText(page, ' Y');
  const live = (await screenText(page)).split('\n').find((l) => l.includes(' Y'));
  const screen = await agent.call('screen', { execution_id: r.execution_id });
  assert.equal(live.trimEnd(), screen.lines.find((l) => l.includes(' Y')).trimEnd());
  assert.equal(live.trimEnd(), 'cut \uFFFDX bad \uFFFD\uFFFD Y');
  assert.deepEqual(problems, []);
});

test('a replay page whose download breaks off says so instead of staying blank', async (t) => {
  // A server that promises 1 MB, sends a header line and hangs up.
  const broken = http.createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/x-asciicast', 'Content-Length': 1 << 20 });
    response.write('{"version": 2, "width": 80, "height": 24}\n', () => response.destroy());
  });
  await new Promise((resolve) => broken.listen(0, '127.0.0.1', resolve));
  t.after(() => broken.close());
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.route('**/api/recordings/audit26broken', (route) =>
    route.continue({ url: `http://127.0.0.1:${broken.address().port}/` }));
  await page.goto(`${origin}/r/audit26broken#token=${TOKEN}`);
  await page.waitForSelector('body[data-loaded="error"]', { timeout: 15000 });
  assert.match(await page.locator('#message').innerText(), /broke off/);
});

test('a replay follows a person\'s takeover at their window size, what they typed, and the release', async (t) => {
  const opened = await agent.call('open', {});
  assert.equal(opened.isError, false, opened.error);
  t.after(() => agent.call('close', { execution_id: opened.execution_id }));
  const context = await browser.newContext();
  t.after(() => context.close());
  const { page } = await openTerminal(context, opened.terminal_url, { width: 700, height: 400 });
  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  const held = await eventually(async () => {
    const screen = await agent.call('screen', { execution_id: opened.execution_id });
    return screen.cols !== 120 && screen;
  }, { what: 'the size of the taker\'s window' });
  await page.click('#terminal');
  await page.keyboard.type('echo "human-$((6*7)) $(tput cols)"\n');
  await waitForText(page, `human-42 ${held.cols}`);
  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  const after = await agent.call('execute', {
    session: opened.execution_id, command: 'echo "agent-$((6*7)) $(tput cols)"', side_effects: ['NONE'], yield_ms: 30000,
  });
  assert.equal(after.isError, false, after.error);
  await agent.call('close', { execution_id: opened.execution_id });
  const replay = (await replayedRows(opened.execution_id)).join('\n');
  assert.match(replay, new RegExp(`^human-42 ${held.cols}$`, 'm'), replay);
  assert.match(replay, /^agent-42 120$/m, replay);
  const cast = castOf(opened.execution_id);
  assert.match(cast, new RegExp(`"r", "${held.cols}x${held.rows}"`));
  assert.match(cast, /"m", "human input"/);
  assert.match(cast, /"m", "released by /);
});

test('a recording still being written is listed as running and replays as far as it goes', async (t) => {
  const r = await agent.startCommand(t, { command: "printf 'first part\\n'; sleep 60", yield_ms: 0 });
  await eventually(() => castOf(r.execution_id).includes('first part'), { what: 'the output recorded' });
  const list = JSON.parse((await request(`${origin}/api/recordings`, { headers: { 'X-Agentty-Token': TOKEN } })).body);
  const entry = list.recordings.find((e) => e.id === r.execution_id);
  assert.equal(entry.running, true);
  const replay = (await replayedRows(r.execution_id)).join('\n');
  assert.match(replay, /^first part$/m);
});
