// Round-trip latency of execute(echo hi) over stdio with the official SDK,
// interleaved with batches of posix_spawn+waitpid baselines (see mcp_latency.sh).
import { execFileSync } from 'node:child_process';
import { startAgentty } from '../tests/e2e/lib/mcp-client.mjs';

const N = Number(process.env.N || 500);
const BATCH = 50;
const baseline = (argv) =>
  JSON.parse(execFileSync(process.env.BASELINE_BIN, [String(BATCH), ...argv], { encoding: 'utf8' }))
    .samples_us.map((us) => us / 1000);

const agent = await startAgentty({ args: ['--no-web'] });
for (let i = 0; i < 20; i++) await agent.call('execute', { command: 'echo hi', side_effects: ['NONE'] });
const ms = [];
const echo = [];
const bash = [];
const batchMedians = [];
for (let done = 0; done < N; done += BATCH) {
  const batch = [];
  for (let i = 0; i < BATCH; i++) {
    const start = process.hrtime.bigint();
    const r = await agent.call('execute', { command: 'echo hi', side_effects: ['NONE'] });
    batch.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r.output !== 'hi\n') throw new Error('unexpected output ' + JSON.stringify(r.output));
  }
  ms.push(...batch);
  batchMedians.push(median(batch));
  echo.push(...baseline(['/bin/echo', 'hi']));
  bash.push(...baseline(['/bin/bash', '-c', 'echo hi']));
}
await agent.call('cleanup', { completed_older_than_ms: 0 });
await agent.client.close();

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
function p99(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * 0.99)];
}
const m = median(ms);
console.log(`MCP execute(echo hi) round trip over stdio, ${N} calls (batches of ${BATCH}, interleaved with the baselines)`);
console.log(`  agentty median ${m.toFixed(2)} ms, p99 ${p99(ms).toFixed(2)} ms; batch medians first ${batchMedians[0].toFixed(2)} ms, last ${batchMedians.at(-1).toFixed(2)} ms`);
console.log(`  posix_spawn+waitpid /bin/echo hi: median ${median(echo).toFixed(2)} ms, p99 ${p99(echo).toFixed(2)} ms`);
console.log(`  posix_spawn+waitpid bash -c 'echo hi': median ${median(bash).toFixed(2)} ms, p99 ${p99(bash).toFixed(2)} ms`);
console.log(`  ratio median/echo spawn: ${(m / median(echo)).toFixed(2)}x (target <= 3x, median <= 5 ms); median/bash spawn: ${(m / median(bash)).toFixed(2)}x`);
