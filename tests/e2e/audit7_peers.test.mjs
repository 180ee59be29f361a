// End-to-end: an agent that knows the peer shell servers (YieldShell, a Go
// PTY session manager, ai-device-bash) and calls agentty the way it called
// them. Each test names the peer behaviour it holds agentty to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startAgentty } from './lib/mcp-client.mjs';

// A server for one test, closed (and its state dir removed) after it; closing
// it stops whatever the test left running.
async function server(t, options = {}) {
  const agent = await startAgentty(options);
  t.after(async () => {
    await agent.client.close();
    rmSync(agent.stateDir, { recursive: true, force: true });
  });
  return agent;
}

const scriptFiles = (stateDir) => {
  const dir = path.join(stateDir, 'scripts');
  return existsSync(dir) ? readdirSync(dir) : [];
};

// ai-device-bash: "script" is a bash script, checked by `bash -n` and run by
// that same bash. --shell only chooses what runs `command` strings.
test('a script is run by bash, the shell that checked it, even when --shell is sh', async (t) => {
  const { call } = await server(t, { env: { AGENTTY_SHELL: '/bin/sh' } });
  const r = await call('execute', {
    script: 'words=(a b c)\n[[ ${#words[@]} == 3 ]] && echo "array of ${#words[@]}"\n',
    side_effects: ['NONE'],
  });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.exit_code, 0, r.output);
  assert.equal(r.output, 'array of 3\n');
});

// ai-device-bash removes the managed script file when the execution is done;
// agentty keeps it while its record lives ($0 names it) and no longer.
test('a checked script file goes with its record, and a refused script leaves none', async (t) => {
  const { call, stateDir } = await server(t, { env: { AGENTTY_DENY_COMMAND_REGEX: 'forbidden' } });
  const r = await call('execute', { script: 'echo "running $0"\n', side_effects: ['NONE'] });
  assert.equal(r.exit_code, 0, r.output);
  assert.equal(scriptFiles(stateDir).length, 1, 'kept while the record lives');
  assert.ok(r.output.includes(scriptFiles(stateDir)[0]), r.output);

  const cleaned = await call('cleanup', { completed_older_than_ms: 0 });
  assert.equal(cleaned.removed, 1);
  assert.deepEqual(scriptFiles(stateDir), []);

  const refused = await call('execute', { script: 'echo forbidden\n', side_effects: ['NONE'] });
  assert.equal(refused.status, 'failed_to_start');
  assert.match(refused.error, /AGENTTY_DENY_COMMAND_REGEX/);
  const bad = await call('execute', { script: 'if true; then\n', side_effects: ['NONE'] });
  assert.match(bad.error, /^script: bash -n found a syntax error/);
  assert.deepEqual(scriptFiles(stateDir), []);
});
