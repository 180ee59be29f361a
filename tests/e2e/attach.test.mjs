// End-to-end: `agentty attach` as a real terminal client inside tmux, against
// the binary serving MCP (official SDK client) and the web terminal.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentty, agenttyBin } from './lib/mcp-client.mjs';
import { TOKEN, Tmux, eventually } from './lib/web-helpers.mjs';

let agent;
let tmux;
let shell;

before(async () => {
  agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN } });
  const r = await agent.call('execute', {
    command: 'bash --norc --noprofile', side_effects: ['NONE'], yield_ms: 300, name: 'attach-shell',
    cols: 100, rows: 29,
  });
  assert.equal(r.status, 'backgrounded');
  shell = { id: r.execution_id, url: r.terminal_url };
  tmux = new Tmux();
});

after(async () => {
  tmux?.kill();
  await agent?.client.close();
});

const pane = () => tmux.capture('main');
const paneHas = (text) => eventually(() => pane().includes(text), { what: `"${text}" in the tmux pane` });

test('attach: watch, take over, type, detach', async () => {
  await agent.call('write', { execution_id: shell.id, input: 'echo before-$((40+1))', newline: true });
  tmux.run('new-session', '-d', '-s', 'main', '-x', '100', '-y', '30',
    `${agenttyBin} attach '${shell.url}'; echo attach-exit-$?; sleep 600`);
  await paneHas('Ctrl-] t: take over');
  await paneHas('before-41');  // the snapshot of the screen

  // Read-only: the agent's writes show up live; local keys are not sent.
  await agent.call('write', { execution_id: shell.id, input: 'echo live-$((40+2))', newline: true });
  await paneHas('live-42');
  tmux.run('send-keys', '-t', 'main', '-l', 'echo ignored-key');
  tmux.run('send-keys', '-t', 'main', 'Enter');

  // Ctrl-] t takes over: the agent is refused and our keys reach the shell.
  tmux.run('send-keys', '-t', 'main', 'C-]', 't');
  await paneHas('you hold it now');
  const held = await eventually(async () => {
    const r = await agent.call('write', { execution_id: shell.id, input: 'echo agent-refused', newline: true });
    return r.held === true ? r : null;
  }, { what: 'held=true from write' });
  assert.notEqual(held.ok, true);
  tmux.run('send-keys', '-t', 'main', '-l', 'echo typed-$((6*7))-here');
  tmux.run('send-keys', '-t', 'main', 'Enter');
  await paneHas('typed-42-here');
  // The PTY took the attached terminal's size (tmux pane: 100x30).
  const screen = await agent.call('screen', { execution_id: shell.id });
  assert.deepEqual([screen.cols, screen.rows], [100, 30]);
  assert.ok(!pane().includes('ignored-key'.concat('\n')));
  const read = await agent.call('read', { execution_id: shell.id, since_seq: 1, format: 'text' });
  assert.ok(!read.output.includes('ignored-key'), 'keys typed while read-only never reached the PTY');
  assert.ok(!read.output.includes('agent-refused'));

  // Ctrl-] d detaches, which releases the execution.
  tmux.run('send-keys', '-t', 'main', 'C-]', 'd');
  await paneHas('attach-exit-0');
  assert.match(pane(), /agentty attach: detached/);
  const after = await eventually(async () => {
    const r = await agent.call('write', { execution_id: shell.id, input: 'echo agent-back', newline: true });
    return r.ok === true ? r : null;
  }, { what: 'the agent writing again after detach' });
  assert.notEqual(after.held, true);
  const size = await agent.call('screen', { execution_id: shell.id });
  assert.deepEqual([size.cols, size.rows], [100, 29]);  // the agent's size again
});

test('attach: a wrong secret or an unknown execution is refused with a clear message', async () => {
  const wrong = shell.url.replace(/token=[0-9a-f]+/, `token=${'0'.repeat(64)}`);
  tmux.run('new-session', '-d', '-s', 'wrong', '-x', '100', '-y', '10',
    `${agenttyBin} attach '${wrong}'; echo attach-exit-$?; sleep 600`);
  await eventually(() => tmux.capture('wrong').includes('attach-exit-1'), { what: 'attach to fail' });
  assert.match(tmux.capture('wrong'), /refused/);
  tmux.run('new-session', '-d', '-s', 'noserver', '-x', '100', '-y', '10',
    `${agenttyBin} attach ${shell.id}; echo attach-exit-$?; sleep 600`);
  await eventually(() => tmux.capture('noserver').includes('attach-exit-2'), { what: 'attach to fail' });
  assert.match(tmux.capture('noserver'), /AGENTTY_WEB_URL/);
});
