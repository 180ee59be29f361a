// agentty on raw stdio, for tests of what the SDK client would never send
// (broken JSON, reused ids, floods): `send` writes a line (string, object or
// Buffer), `messages` collects every message it answers, `waitFor(pred)`
// waits until one matches, `reply(id)` takes the answer with that id (or an
// error with a null id). It initializes with `protocolVersion` (2025-06-18)
// unless `initialize` is false. The child is killed after the test `t`.
import { spawn } from 'node:child_process';
import { agenttyBin, tempDirForRun } from './mcp-client.mjs';

export function rawAgentty(t, { env = {}, stateDir, protocolVersion = '2025-06-18', initialize = true } = {}) {
  stateDir ??= tempDirForRun('agentty-raw-');
  const child = spawn(agenttyBin, ['mcp', '--state-dir', stateDir, '--no-web'], {
    stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, AGENTTY_LOG_LEVEL: 'warn', ...env },
  });
  t.after(() => child.kill('SIGKILL'));
  let buffer = '';
  const messages = [];
  const waiters = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (data) => {
    buffer += data;
    for (let nl; (nl = buffer.indexOf('\n')) >= 0;) {
      messages.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
    for (const w of waiters.splice(0)) w();
  });
  // Resolves at the next message, or after 200 ms (the deadline is checked then).
  const nextMessage = () => new Promise((resolve) => { waiters.push(resolve); setTimeout(resolve, 200); });
  const waitFor = async (predicate, timeout = 15000) => {
    const deadline = Date.now() + timeout;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(messages).slice(0, 2000)}`);
      await nextMessage();
    }
  };
  const reply = async (id, timeout = 10000) => {
    const deadline = Date.now() + timeout;
    for (;;) {
      const found = messages.findIndex((m) => m.id === id || (m.id === null && 'error' in m));
      if (found >= 0) return messages.splice(found, 1)[0];
      if (Date.now() > deadline) return undefined;
      await nextMessage();
    }
  };
  const send = (line) => child.stdin.write(Buffer.isBuffer(line) ? Buffer.concat([line, Buffer.from('\n')])
    : `${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
  if (initialize) {
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }
  return { child, send, messages, waitFor, reply, stateDir };
}
