// Round-trip latency of execute(echo hi) over stdio with the official SDK,
// interleaved with batches of posix_spawn+waitpid baselines (see mcp_latency.sh).
// Also, in the same batches: execute(argv=["/bin/echo","hi"]) (no shell: what
// agentty adds to the bare process) and execute(echo hi) on a second server
// started with --no-spare-terminal (what the spare supervisor saves).
// Back-to-back calls leave the server no idle moment to prepare the next
// spare, so a second series gives each call THINK_MS (default 50) of idle
// time first, as an agent's own thinking does between tool calls; the
// round trip timed is the call alone.
import { execFileSync } from 'node:child_process';
import { startAgentty } from '../tests/e2e/lib/mcp-client.mjs';

const N = Number(process.env.N || 500);
const BATCH = 50;
const baseline = (argv) =>
  JSON.parse(execFileSync(process.env.BASELINE_BIN, [String(BATCH), ...argv], { encoding: 'utf8' }))
    .samples_us.map((us) => us / 1000);

const agent = await startAgentty({ args: ['--no-web'] });
const noSpare = await startAgentty({ args: ['--no-web', '--no-spare-terminal'] });
const shellCall = { command: 'echo hi', side_effects: ['NONE'] };
const argvCall = { argv: ['/bin/echo', 'hi'], side_effects: ['NONE'] };

const THINK_MS = Number(process.env.THINK_MS || 50);
const idle = () => new Promise((resolve) => setTimeout(resolve, THINK_MS));

async function timeCalls(server, args, count, think = false) {
  const samples = [];
  for (let i = 0; i < count; i++) {
    if (think) await idle();
    const start = process.hrtime.bigint();
    const r = await server.call('execute', args);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r.output !== 'hi\n') throw new Error('unexpected output ' + JSON.stringify(r.output));
  }
  return samples;
}

for (const server of [agent, noSpare]) await timeCalls(server, shellCall, 20);
await timeCalls(agent, argvCall, 20);
const ms = [];
const argvMs = [];
const noSpareMs = [];
const echo = [];
const bash = [];
const batchMedians = [];
const thinkMs = [];
const thinkNoSpareMs = [];
for (let done = 0; done < N; done += BATCH) {
  const batch = await timeCalls(agent, shellCall, BATCH);
  ms.push(...batch);
  batchMedians.push(median(batch));
  argvMs.push(...(await timeCalls(agent, argvCall, BATCH)));
  noSpareMs.push(...(await timeCalls(noSpare, shellCall, BATCH)));
  if (done < N / 5) {
    // A fifth as many: each waits THINK_MS first.
    thinkMs.push(...(await timeCalls(agent, shellCall, BATCH, true)));
    thinkNoSpareMs.push(...(await timeCalls(noSpare, shellCall, BATCH, true)));
  }
  echo.push(...baseline(['/bin/echo', 'hi']));
  bash.push(...baseline(['/bin/bash', '-c', 'echo hi']));
}
for (const server of [agent, noSpare]) {
  await server.call('cleanup', { completed_older_than_ms: 0 });
  await server.client.close();
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
function p99(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * 0.99)];
}
const line = (label, values) =>
  console.log(`  ${label}: median ${median(values).toFixed(2)} ms, p99 ${p99(values).toFixed(2)} ms`);
const m = median(ms);
console.log(`MCP execute round trips over stdio, ${N} calls each (batches of ${BATCH}, interleaved with the baselines)`);
console.log(`  agentty execute(echo hi): median ${m.toFixed(2)} ms, p99 ${p99(ms).toFixed(2)} ms; batch medians first ${batchMedians[0].toFixed(2)} ms, last ${batchMedians.at(-1).toFixed(2)} ms`);
line('agentty execute(argv=[/bin/echo, hi]), no shell', argvMs);
line('agentty --no-spare-terminal execute(echo hi)', noSpareMs);
line('posix_spawn+waitpid /bin/echo hi', echo);
line("posix_spawn+waitpid bash -c 'echo hi'", bash);
console.log(`  ratio median/echo spawn: ${(m / median(echo)).toFixed(2)}x (target <= 3x, median <= 5 ms); median/bash spawn: ${(m / median(bash)).toFixed(2)}x`);
line(`agentty execute(echo hi) after ${THINK_MS} ms idle`, thinkMs);
line(`agentty --no-spare-terminal execute(echo hi) after ${THINK_MS} ms idle`, thinkNoSpareMs);
console.log(`  after idle: ${(median(thinkMs) / median(echo)).toFixed(2)}x echo spawn, spare saves ${(median(thinkNoSpareMs) - median(thinkMs)).toFixed(2)} ms`);
console.log(`  argv execute/echo spawn: ${(median(argvMs) / median(echo)).toFixed(2)}x; spare saves ${(median(noSpareMs) - m).toFixed(2)} ms`);
