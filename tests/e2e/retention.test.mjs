// What an ended execution keeps while it is retained for later reads: no
// open recording (a server at a low fd limit ran out after ~100 of them),
// yet its output and screen read back whole, whether or not anyone looked
// at the screen while it ran.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serverForFile } from './lib/mcp-client.mjs';
import { openFdTargets, rssKb } from './lib/proc-stats.mjs';

const server = serverForFile();

function openRecordings() {
  return openFdTargets(server.agent.transport.pid).filter((target) => target.endsWith('.cast'));
}

const run = async (command) => {
  const r = await server.call('execute', { command, side_effects: ['NONE'], max_output_bytes: 200 });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  return r;
};

test('ended executions hold no open recording', async () => {
  for (let i = 0; i < 5; i++) await run(`echo run ${i}`);
  assert.deepEqual(openRecordings(), []);
});

test('the screen of an ended execution nobody looked at is rebuilt from its output', async () => {
  const r = await run("printf 'first\\nsecond \\033[1mbold\\033[m\\n'");
  const screen = await server.call('screen', { execution_id: r.execution_id });
  assert.equal(screen.isError, false, screen.error);
  assert.deepEqual(screen.lines.slice(0, 2), ['first', 'second bold']);
});

test('after a flood the screen and the whole output of an ended execution read back', async () => {
  const r = await run('seq 1 300000');  // 2 MB: a spool file, a skipped flood
  const screen = await server.call('screen', { execution_id: r.execution_id });
  assert.equal(screen.isError, false, screen.error);
  const lines = screen.lines.filter((line) => line !== '');
  assert.equal(lines.at(-1), '300000');
  assert.equal(lines.at(-2), '299999');
  const tail = await server.call('read', { execution_id: r.execution_id, tail_lines: 2 });
  assert.equal(tail.output, '299999\n300000\n');
  const head = await server.call('read', { execution_id: r.execution_id, since_seq: 1, max_output_bytes: 14 });
  assert.equal(head.output, '1\n2\n3\n4\n');  // 14 raw bytes (CR LF): four whole lines
});

// Up to 200 ended records stay for reads, so what each keeps adds up: a long
// output's record kept ~0.8 MB (a 64 KiB read buffer, an alternate screen
// nothing had drawn on, 10000 scrollback lines as separate strings), 165 MB
// at 200 records; then ~0.3 MB (libvterm's main screen and the lines), now
// ~0.12 MB (an ended screen is frozen: libvterm is freed).
test('a retained record of a long output keeps under 0.2 MB of agentty\'s memory', async () => {
  const pid = server.agent.transport.pid;
  for (let i = 0; i < 5; i++) await run('seq 1 200000');  // warm: pools, the first spool files
  // The growth over two stretches of records; the smaller one counts. A
  // heap that has not given a passing peak back (a loaded machine reads in
  // bigger chunks) lifts one stretch, what every record keeps lifts both.
  const records = 20;
  const growthKb = [];
  for (let stretch = 0; stretch < 2; stretch++) {
    const before = rssKb(pid);
    for (let i = 0; i < records; i++) await run('seq 1 200000');
    growthKb.push(rssKb(pid) - before);
  }
  const perRecordKb = Math.min(...growthKb) / records;
  assert.ok(perRecordKb < 0.2 * 1024,
    `${perRecordKb.toFixed(0)} KiB per retained record (growth ${growthKb.join(', ')} KiB per ${records})`);
});
