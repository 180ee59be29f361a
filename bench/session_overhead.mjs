// Per-command overhead of execute(session=) against the same commands typed
// into bash under tmux and timed by the prompt returning.
//
//   node bench/session_overhead.mjs [N]      (AGENTTY_BIN=path/to/agentty)
//
// Rows (median and p90 over N calls, default 1000):
//   agentty execute(session, "true")  - MCP call, typed into bash, answered at the next prompt
//   agentty read (no shell work)      - the MCP round trip alone, for reference
//   tmux send-keys + wait-for         - bash under tmux; PROMPT_COMMAND signals `tmux wait-for -S`
// The tmux row pays two tmux client processes per command (send-keys and
// wait-for) plus the one in PROMPT_COMMAND, so it is a ceiling on "the shell's
// own time", not a floor.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAgentty } from '../tests/e2e/lib/mcp-client.mjs';

const N = Number(process.argv[2] || 1000);
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p90: s[Math.floor(s.length * 0.9)] };
};

async function agentty() {
  const home = mkdtempSync(path.join(tmpdir(), 'agentty-bench-home-'));
  const a = await startAgentty({ env: { HOME: home } });
  const open = await a.call('open', {});
  const id = open.execution_id;
  const exec = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    const r = await a.call('execute', { session: id, command: 'true', side_effects: ['NONE'] });
    exec.push(ms(t0));
    if (r.exit_code !== 0) throw new Error(`call ${i}: ${JSON.stringify(r)}`);
  }
  const read = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    await a.call('read', { execution_id: id });
    read.push(ms(t0));
  }
  await a.call('close', { execution_id: id });
  await a.client.close();
  return { exec: stats(exec), read: stats(read) };
}

function tmux() {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentty-bench-tmux-'));
  const sock = `agentty-bench-${process.pid}`;
  const rc = path.join(dir, 'rc');
  writeFileSync(rc, `PS1='$ '\nPROMPT_COMMAND='tmux -L ${sock} wait-for -S p'\n`);
  const t = (...args) => execFileSync('tmux', ['-L', sock, ...args]);
  t('-f', '/dev/null', 'new-session', '-d', '-s', 'b', '-x', '120', '-y', '40', `bash --rcfile ${rc} -i`);
  try {
    t('wait-for', 'p');  // first prompt
    const times = [];
    for (let i = 0; i < N; i++) {
      const t0 = process.hrtime.bigint();
      t('send-keys', '-t', 'b', 'true', 'Enter');
      t('wait-for', 'p');
      times.push(ms(t0));
    }
    return stats(times);
  } finally {
    spawnSync('tmux', ['-L', sock, 'kill-server']);
  }
}

const a = await agentty();
const b = tmux();
const row = (name, s) => `| ${name.padEnd(38)} | ${s.median.toFixed(2).padStart(8)} | ${s.p90.toFixed(2).padStart(8)} |`;
console.log(`per-command wall time, N=${N} (ms)`);
console.log(`| ${'what'.padEnd(38)} | ${'median'.padStart(8)} | ${'p90'.padStart(8)} |`);
console.log(`| ${'-'.repeat(38)} | ${'-'.repeat(8)} | ${'-'.repeat(8)} |`);
console.log(row('agentty execute(session, "true")', a.exec));
console.log(row('agentty read (MCP round trip only)', a.read));
console.log(row('tmux send-keys + wait-for (prompt)', b));
console.log(`session overhead above the MCP round trip: ${(a.exec.median - a.read.median).toFixed(2)} ms (median)`);
console.log(`agentty execute(session) minus tmux: ${(a.exec.median - b.median).toFixed(2)} ms (median)`);
