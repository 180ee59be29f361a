// The labels an agent gives an execution (`name`, `purpose`) are shown as
// text in ps, the dashboard and recordings: trimmed of the blanks a model
// adds around them, and refused when they hold a control character that
// would draw where a person reads them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agenttyWithStderr } from './lib/mcp-client.mjs';

test('name and purpose are trimmed; a purpose keeps its inner newlines and tabs', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const r = await agent.run({ command: 'echo hi', name: '  build\n', purpose: ' line one\n\tline two\n' });
  assert.equal(r.status, 'completed', JSON.stringify(r));
  const ps = await agent.call('ps', { include_completed: true });
  const item = ps.executions.find((e) => e.execution_id === r.execution_id);
  assert.equal(item.name, 'build');
  assert.equal(item.purpose, 'line one\n\tline two');
});

test('a name with an escape sequence or a C1 control is refused before anything starts', async (t) => {
  const agent = await agenttyWithStderr(t, { args: ['--no-web'] });
  const escape = await agent.run({ command: 'touch started', name: 'red\u001b[31mname' });
  assert.equal(escape.isError, true, JSON.stringify(escape));
  assert.equal(escape.status, 'failed_to_start');
  assert.match(escape.error, /^name: contains the control character U\+001B at byte 3, .* Nothing was started\. name is a one-line label; give printable text/);
  const c1 = await agent.call('open', { name: 'x\u009by' });
  assert.equal(c1.isError, true, JSON.stringify(c1));
  assert.match(c1.error, /^name: contains the control character U\+009B at byte 1/);
  const newline = await agent.run({ command: 'echo hi', name: 'two\nlines' });
  assert.match(newline.error, /^name: contains the control character U\+000A at byte 3/);
  const purpose = await agent.run({ command: 'echo hi', purpose: 'ok\rcovered' });
  assert.match(purpose.error, /^purpose: contains the control character U\+000D at byte 2, .*newlines and tabs are kept/);
  const ps = await agent.call('ps', { include_completed: true });
  assert.equal(ps.executions.length, 0, JSON.stringify(ps.executions));
});
