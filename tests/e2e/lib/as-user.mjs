// agentty started by root as another user (setpriv), for what only a user
// other than root meets: set-user-ID programs (su, sudo, passwd) it may not
// look at, and password prompts, which root never gets. It runs from a copy
// of the build's agentty and agentty-supervisor that the user can reach (a
// checkout under /root, mode 700 on Debian, is neither a cwd nor a path for
// it), in `home` (its HOME and cwd) with a state dir it owns.
import { chmodSync, chownSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import { agenttyBin, startAgentty, tempDirForRun } from './mcp-client.mjs';

export const isRoot = process.getuid?.() === 0;

// Closed after the test `t`, which stops what it runs.
export async function startAgenttyAs(t, { uid, gid, home, env = {} }) {
  const stateDir = tempDirForRun('agentty-as-user-state-');
  chownSync(stateDir, uid, gid);
  const binDir = tempDirForRun('agentty-as-user-bin-');
  chmodSync(binDir, 0o755);
  for (const name of ['agentty', 'agentty-supervisor']) {
    copyFileSync(path.join(path.dirname(agenttyBin), name), path.join(binDir, name));
  }
  const agent = await startAgentty({
    stateDir,
    env: { HOME: home, XDG_STATE_HOME: '', ...env },
    cwd: home,
    bin: path.join(binDir, 'agentty'),
    runAs: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'],
  });
  t.after(() => agent.client.close());
  return agent;
}
