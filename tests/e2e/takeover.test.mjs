// End-to-end: a person takes over an agent's shell session in a real browser
// (Debian chromium through playwright-core) while the agent drives the same
// session through MCP (the official SDK client), then hands it back.
//
// What it proves: while held, everything that would type into or end the
// session is refused with held:true and says what to do; a handoff's
// wait(until="released") returns only once the person has taken over and
// released; what the person typed reaches the agent as `[human] $ ...` lines
// with their exit codes; a second taker is refused; and execute(session=)
// has exact exit codes again afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { agentAndBrowserForFile, watchPage, waitForLine } from './lib/web-helpers.mjs';

const PROMPT = 'human-test$ ';
// A low stream rate: the flood test's output is a flood however slowly a
// loaded machine runs it (at the default 4 MiB/s, a starved `seq` streamed).
const fixture = agentAndBrowserForFile(PROMPT, 'agentty-takeover-', { AGENTTY_WEB_STREAM_RATE: '65536' });
const { workDir } = fixture;

const call = (name, args) => fixture.agent.call(name, args);
const run = (session, command, extra = {}) =>
  call('execute', { session, command, side_effects: ['NONE'], ...extra });

async function openTerminal(context, url) {
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.setViewportSize({ width: 1000, height: 600 });
  await page.goto(url);
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await page.waitForFunction(() => Number(document.body.dataset.snapshots ?? 0) >= 1, null,
    { timeout: 15000 });
  return { page, problems };
}

// Types a line into the page's terminal as a person would.
async function typeLine(page, text) {
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

function assertHeldRefusal(result, what) {
  assert.equal(result.isError, true, `${what}: ${JSON.stringify(result)}`);
  assert.equal(result.held, true, `${what}: held`);
  assert.match(result.error, /^held: a human has taken over/, `${what}: message`);
  assert.match(result.error, /wait\(until="released"\)/, `${what}: says what to do`);
}

test('handoff, takeover, refusals while held, human commands in the agent view, release', async (t) => {
  const opened = await call('open', { name: 'takeover-shell', purpose: 'takeover e2e' });
  assert.equal(opened.isError, false, opened.error);
  assert.equal(opened.prompt_ready, true);
  const id = opened.execution_id;
  assert.match(opened.terminal_url, /\/t\/[^#]+#token=[0-9a-f]{64}$/);

  const before = await run(id, 'echo agent-before');
  assert.equal(before.exit_code, 0);
  assert.equal(before.output, 'agent-before\n');

  const context = await fixture.browser.newContext();
  const { page, problems } = await openTerminal(context, opened.terminal_url);
  await waitForLine(page, 'agent-before');

  // The agent asks for a person and waits for the hand-back. The wait must
  // not end before a person has taken over AND released (a handoff nobody has
  // answered yet is not a release).
  const handoff = await call('handoff', { execution_id: id, reason: 'run two commands for me' });
  assert.equal(handoff.requested, true);
  let waitSettled = false;
  const released = call('wait', {
    execution_id: id, until: 'released', timeout_ms: 55000, since_seq: before.latest_seq,
  }).finally(() => { waitSettled = true; });
  await page.waitForSelector('#handoff:not([hidden])', { timeout: 15000 });
  assert.match(await page.innerText('#handoff'), /asks you to take over: run two commands for me/);

  await page.click('#take-over');
  await page.waitForSelector('body[data-held="you"]', { timeout: 15000 });
  // Taken: the banner recalls what was asked instead of asking again.
  assert.match(await page.innerText('#handoff'), /You have taken over\. The agent asked for: run two commands for me/);
  const ps = await call('ps', {});
  const row = ps.executions.find((e) => e.execution_id === id);
  assert.equal(row.held, true);

  // Held: typing into or ending the session is refused, nothing happens.
  assertHeldRefusal(await run(id, 'echo agent-while-held'), 'execute(session=)');
  assertHeldRefusal(await call('write', { execution_id: id, input: 'echo agent-write', newline: true }), 'write');
  assertHeldRefusal(await call('stop', { execution_id: id }), 'stop');
  assertHeldRefusal(await call('close', { execution_id: id }), 'close');
  // Those four round trips went through the server after the wait was sent:
  // had the wait ended at once, its answer would already be here.
  assert.equal(waitSettled, false, 'wait(until=released) returned before the release');

  // A second person (another browser) can neither take it over nor type.
  const otherContext = await fixture.browser.newContext();
  const other = await openTerminal(otherContext, opened.terminal_url);
  await other.page.waitForSelector('body[data-held="other"]', { timeout: 15000 });
  assert.equal(await other.page.isDisabled('#take-over'), true);
  await other.page.evaluate(() => { document.getElementById('take-over').disabled = false; });
  await other.page.click('#take-over');
  await other.page.waitForSelector('#message:not([hidden])', { timeout: 15000 });
  assert.match(await other.page.innerText('#message'), /already held by browser .*release it first/);
  assert.equal(await other.page.getAttribute('body', 'data-held'), 'other');

  // The person types two commands and sees their output.
  await typeLine(page, 'echo typed-by-human');
  await waitForLine(page, 'typed-by-human');
  await typeLine(page, 'false');
  // `false` printed nothing: wait for the prompt after it.
  await page.waitForFunction((end) => window.__agentty.screenText().trimEnd().endsWith(end),
    `${PROMPT}false\n${PROMPT.trimEnd()}`, { timeout: 15000, polling: 50 });
  await waitForLine(other.page, 'typed-by-human');  // the watcher sees it live too
  const shot = path.join(workDir, 'takeover-terminal.png');
  await page.screenshot({ path: shot });
  assert.ok(statSync(shot).size > 1000);
  t.diagnostic(`screenshot: ${shot}`);
  assert.equal(waitSettled, false);

  await page.click('#release');
  await page.waitForSelector('body[data-held="no"]', { timeout: 15000 });
  assert.equal(await page.isHidden('#handoff'), true, 'answered: no banner after the release');
  const waited = await released;
  assert.equal(waited.wait_result, 'released');
  assert.equal(waited.held, false);
  const human = /\[human\] \$ echo typed-by-human\ntyped-by-human\n\[exit 0\]\n[^]*\[human\] \$ false\n\[exit 1\]\n/;
  assert.match(waited.output, human, 'the wait (since_seq, out of band) shows the human commands');

  // The agent's next read (its own cursor) shows what the person did.
  const read = await call('read', { execution_id: id });
  assert.match(read.output, human);
  assert.doesNotMatch(read.output, /agent-while-held|agent-write|133;/);
  // The note takes the place of the prompt and the echoed typing: said once.
  assert.equal(read.output.split('echo typed-by-human').length, 2, read.output);
  assert.doesNotMatch(read.output, /human-test\$ (echo typed-by-human|false)/);
  assert.equal(read.held, false);

  // The agent drives the session again, with exact exit codes.
  let r = await run(id, 'echo agent-after; (exit 3)');
  assert.equal(r.status, 'completed');
  assert.equal(r.output, 'agent-after\n');
  assert.equal(r.exit_code, 3);
  assert.equal(r.boundaries, 'exact');
  r = await run(id, 'true');
  assert.equal(r.exit_code, 0);
  assert.equal(r.output, '');
  await waitForLine(page, 'agent-after');
  const w = await call('write', { execution_id: id, input: 'echo written-again', newline: true });
  assert.equal(w.ok, true);

  assert.deepEqual(problems, []);
  assert.deepEqual(other.problems, []);
  await otherContext.close();
  await context.close();
  const closed = await call('close', { execution_id: id });
  assert.equal(closed.closed, true);
});

// Not takeover, but the same page: bulk output reaches viewers as 10 Hz
// snapshots (flood mode); once it ends, the snapshot brings back the lines it
// scrolled by, so the person can scroll back through them.
test('after a flood the page can scroll back through the flooded lines', async () => {
  const opened = await call('open', { name: 'flood-shell' });
  assert.equal(opened.prompt_ready, true);
  const id = opened.execution_id;
  const context = await fixture.browser.newContext();
  const { page, problems } = await openTerminal(context, opened.terminal_url);
  const r = await run(id, 'seq 1000000 1800000; echo flood-$((6*7))', { max_output_bytes: 1000 });
  assert.equal(r.exit_code, 0);
  await waitForLine(page, 'flood-42', 60000);
  // The page got snapshots (the flood) and its buffer holds lines far above the screen.
  await page.waitForFunction(() => {
    const lines = window.__agentty.screenText().split('\n').map((l) => l.trimEnd());
    const at = lines.indexOf('1799000');
    return at >= 0 && lines[at + 1] === '1799001' && lines.indexOf('1799970') > at;
  }, null, { timeout: 30000, polling: 100 });
  assert.ok(Number(await page.getAttribute('body', 'data-snapshots')) >= 2);
  assert.deepEqual(problems, []);
  await context.close();
  await call('close', { execution_id: id });
});
