// Round-trip latency of execute(echo hi) over stdio with the official SDK.
import { startAgentty } from '../tests/e2e/lib/mcp-client.mjs';

const N = Number(process.env.N || 500);
const baseline = JSON.parse(process.env.BASELINE || '{"median_us":0,"p99_us":0}');
const agent = await startAgentty({ args: ['--no-web'] });
for (let i = 0; i < 20; i++) await agent.call('execute', { command: 'echo hi', side_effects: ['NONE'] });
const ms = [];
for (let i = 0; i < N; i++) {
  const start = process.hrtime.bigint();
  const r = await agent.call('execute', { command: 'echo hi', side_effects: ['NONE'] });
  ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  if (r.output !== 'hi\n') throw new Error('unexpected output ' + JSON.stringify(r.output));
}
await agent.call('cleanup', { completed_older_than_ms: 0 });
await agent.client.close();
ms.sort((a, b) => a - b);
const median = ms[Math.floor(ms.length / 2)];
const p99 = ms[Math.floor(ms.length * 0.99)];
const spawn = baseline.median_us / 1000;
console.log('MCP execute(echo hi) round trip over stdio, ' + N + ' calls');
console.log(`  agentty median ${median.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
console.log(`  posix_spawn+waitpid /bin/echo median ${spawn.toFixed(2)} ms, p99 ${(baseline.p99_us / 1000).toFixed(2)} ms`);
console.log(`  ratio median/spawn: ${(median / spawn).toFixed(2)}x (target <= 3x, median <= 5 ms)`);
