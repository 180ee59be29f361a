// Audit 38: remote session parity. What audit 36 did for execute(host=...),
// for sessions: `open(host=...)` and then execute(session=), write, wait,
// read, screen, stop and close must answer as they do in a local `open()`
// session, except where SSH itself cannot (README, Remote hosts (SSH)). A
// real OpenSSH sshd on 127.0.0.1 (tests/e2e/lib/sshd.mjs), logged in as the
// user running the tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sshdAndAgentForFile, sshClientEnv } from './lib/sshd.mjs';
import { WAIT_MS, startAgentty } from './lib/mcp-client.mjs';

const ssh = sshdAndAgentForFile('agentty-audit38-home-');
const { skip } = ssh;

const brief = (r) => JSON.stringify({ ...r, raw: undefined });
const same = (r) => r.message.replaceAll(r.execution_id, 'ID');

// A session opened locally and one on the host, closed after the test `t`;
// `run(session, args)` calls a tool on either.
async function bothSessions(t) {
  const open = async (where) => {
    const r = await ssh.agent.call('open', { ...where });
    assert.equal(r.prompt_ready, true, brief(r));
    t.after(() => ssh.agent.call('close', { execution_id: r.execution_id }));
    return r.execution_id;
  };
  return [await open({}), await open({ host: ssh.sshd.host })];
}

const execute = (session, command, extra = {}) =>
  ssh.agent.call('execute', { session, command, side_effects: ['NONE'], yield_ms: WAIT_MS, ...extra });
const write = (id, args) => ssh.agent.call('write', { execution_id: id, yield_ms: 5000, ...args });

// The session's own shell at its builtin `read` holds the terminal's
// foreground: its marks still come, so boundaries stay exact and there is
// no nested shell to rearm. On a host the probe's answer did not say whose
// the foreground was, and the answer advised write(action="rearm") for "a
// nested shell" and said boundaries heuristic.
test('read -p in a session on a host: the same answer as locally, no rearm advice', { skip }, async (t) => {
  const answers = [];
  for (const session of await bothSessions(t)) {
    const r = await execute(session, 'read -p "Name? " n; echo "hi $n"');
    assert.equal(r.status, 'backgrounded', brief(r));
    assert.equal(r.waiting_for_input, true, brief(r));
    assert.equal(r.boundaries, 'exact', brief(r));
    assert.doesNotMatch(r.message, /rearm/, brief(r));
    answers.push(r);
  }
  const [local, remote] = answers;
  assert.equal(same(remote), same(local), brief(remote));
});

// python's REPL prints `>>> ` after each answer. A local session's write
// said waiting_for_input true there and the next execute(session=) typed
// its line into the REPL; on a host the write answered before the host's
// probe had and said false, and execute(session=) right after it refused
// with "a command is still running in this session".
test('a REPL in a session on a host: write says it waits, and the next execute types into it', { skip }, async (t) => {
  for (const session of await bothSessions(t)) {
    const started = await execute(session, 'python3 -q');
    assert.equal(started.waiting_for_input, true, brief(started));
    const answered = await write(session, { input: '1+2', newline: true });
    assert.match(answered.output, /3\r?\n>>> $/, brief(answered));
    assert.equal(answered.waiting_for_input, true, brief(answered));
    const typed = await execute(session, 'print(40+2)');
    assert.equal(typed.isError, false, brief(typed));
    assert.match(typed.output, /^print\(40\+2\)\n42\n>>> $/, brief(typed));
    const ended = await execute(session, 'exit()');
    assert.equal(ended.status, 'completed', brief(ended));
    assert.equal(ended.exit_code, 0, brief(ended));
  }
});

// The command rules check a line written to a shell started inside a
// session (`bash`, not yet rearmed), as it runs what it reads. Locally the
// foreground's argv in /proc shows that shell; on a host nothing was known,
// so a nested bash on a host ran a line the deny pattern refuses locally.
test('write to a nested shell in a session on a host is checked by the command rules, as locally', { skip }, async (t) => {
  const agent = await startAgentty({
    env: { ...sshClientEnv(ssh.sshd, ssh.home), AGENTTY_DENY_COMMAND_REGEX: String.raw`\bforbidden-ran\b` },
  });
  t.after(() => agent.client.close());  // its sessions with it
  for (const where of [{}, { host: ssh.sshd.host }]) {
    const opened = await agent.call('open', where);
    assert.equal(opened.prompt_ready, true, brief(opened));
    const id = opened.execution_id;
    // An answer to the session's own `read` is no command, here or there.
    await agent.call('write', { execution_id: id, input: 'read -p "word? " w; echo "got <$w>"', newline: true });
    const asked = await agent.call('wait', { execution_id: id, until: 'input', timeout_ms: WAIT_MS });
    assert.equal(asked.wait_result, 'waiting_for_input', brief(asked));
    const answer = await agent.call('write', { execution_id: id, input: 'forbidden-ran', newline: true });
    assert.equal(answer.ok, true, brief(answer));
    assert.match(answer.output, /got <forbidden-ran>/, brief(answer));
    const nested = await agent.call('execute', {
      session: id, command: 'bash --norc --noprofile', side_effects: ['NONE'], yield_ms: WAIT_MS,
    });
    assert.equal(nested.waiting_for_input, true, brief(nested));
    const refused = await agent.call('write', { execution_id: id, input: 'echo forbidden-ran', newline: true });
    assert.equal(refused.ok, false, brief(refused));
    assert.match(refused.error, /deny pattern AGENTTY_DENY_COMMAND_REGEX/, brief(refused));
  }
});
