// Audit 16: hostile and odd clients of the web server, on raw sockets (a
// minimal hand-written WebSocket framer below, so every frame can be wrong on
// purpose) while the agent runs programs over MCP: control messages of every
// wrong shape, protocol violations, a read-only viewer that types, takeover
// races, a holder that vanishes without a close frame, a viewer that never
// reads during a flood, viewers of a removed execution, the dashboard socket,
// and odd HTTP. Each refusal must be clear (a `refused` message or a close
// code with a reason), and the agent's side (held, writes) must stay true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import crypto from 'node:crypto';
import { startAgentty, WAIT_MS } from './lib/mcp-client.mjs';
import {
  TOKEN, parseUrl, eventually, launchBrowser, openTerminal, waitForLine,
} from './lib/web-helpers.mjs';
import { openFds, rssKb } from './lib/proc-stats.mjs';

const protocols = ['agentty.v1', `agentty-token.${TOKEN}`];
const OP = { cont: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 };

// One WebSocket frame, masked as a client's must be unless told otherwise.
function frame(opcode, payload = '', { fin = true, mask = true, rsv = 0 } = {}) {
  const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const sizeBytes = data.length < 126 ? 0 : data.length < 65536 ? 2 : 8;
  const header = Buffer.alloc(2 + sizeBytes);
  header[0] = (fin ? 0x80 : 0) | (rsv << 4) | opcode;
  header[1] = sizeBytes === 0 ? data.length : sizeBytes === 2 ? 126 : 127;
  if (sizeBytes === 2) header.writeUInt16BE(data.length, 2);
  if (sizeBytes === 8) header.writeBigUInt64BE(BigInt(data.length), 2);
  if (!mask) return Buffer.concat([header, data]);
  header[1] |= 0x80;
  const key = crypto.randomBytes(4);
  return Buffer.concat([header, key, Buffer.from(data.map((byte, i) => byte ^ key[i & 3]))]);
}

function closePayload(code, reason = '') {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(code);
  return Buffer.concat([bytes, Buffer.from(reason)]);
}

// A viewer on a raw socket: `texts` holds every text message (parsed),
// `binaryBytes` counts the binary ones, `closeFrame` is the server's close
// ({ code, reason }), `ended` says the TCP connection is gone.
class RawViewer {
  constructor(port, target, { headers = [`Sec-WebSocket-Protocol: ${protocols.join(', ')}`] } = {}) {
    Object.assign(this, { port, target, headers });
    this.texts = [];
    this.binary = [];
    this.binaryBytes = 0;
    this.keepBinary = true;
    this.closeFrame = null;
    this.ended = false;
    this.waiters = new Set();
    this.pending = Buffer.alloc(0);
    this.fragments = null;
  }

  // Resolves once the server answered the upgrade (`status`, and `body` unless 101).
  open() {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.port, '127.0.0.1', () => {
        socket.write([`GET ${this.target} HTTP/1.1`, `Host: 127.0.0.1:${this.port}`,
          'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13',
          `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}`, ...this.headers,
          '', ''].join('\r\n'));
      });
      this.socket = socket;
      let head = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        if (this.status !== undefined) return this.status === 101 ? this.onBytes(chunk) : undefined;
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return undefined;
        this.status = Number(head.subarray(0, end).toString('latin1').split(' ')[1]);
        this.body = this.status === 101 ? '' : head.subarray(end + 4).toString();
        resolve(this);
        if (this.status === 101) this.onBytes(head.subarray(end + 4));
        return undefined;
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        this.ended = true;
        this.notify();
        if (this.status === undefined) reject(new Error(`${this.target}: closed before an answer`));
      });
    });
  }

  onBytes(chunk) {
    this.pending = Buffer.concat([this.pending, chunk]);
    for (;;) {
      const b = this.pending;
      if (b.length < 2) break;
      let length = b[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (b.length < 4) break;
        length = b.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (b.length < 10) break;
        length = Number(b.readBigUInt64BE(2));
        offset = 10;
      }
      if (b.length < offset + length) break;
      this.onFrame((b[0] & 0x80) !== 0, b[0] & 0x0f, b.subarray(offset, offset + length));
      this.pending = b.subarray(offset + length);
    }
    this.notify();
  }

  onFrame(fin, opcode, payload) {
    if (opcode === OP.ping) {
      if (!this.socket.destroyed) this.socket.write(frame(OP.pong, payload));
    } else if (opcode === OP.close) {
      this.closeFrame = payload.length >= 2
        ? { code: payload.readUInt16BE(0), reason: payload.subarray(2).toString() }
        : { code: 1005, reason: '' };
    } else if (opcode !== OP.pong) {
      if (opcode !== OP.cont) this.fragments = { opcode, parts: [] };
      this.fragments.parts.push(Buffer.from(payload));
      if (!fin) return;
      const data = Buffer.concat(this.fragments.parts);
      if (this.fragments.opcode === OP.text) {
        this.texts.push(JSON.parse(data.toString()));
      } else {
        this.binaryBytes += data.length;
        if (this.keepBinary) this.binary.push(data);
      }
      this.fragments = null;
    }
  }

  notify() {
    for (const waiter of [...this.waiters]) waiter();
  }

  // Resolves `check()`'s first truthy value, re-checked on every frame.
  until(check, what, timeout = WAIT_MS) {
    return new Promise((resolve, reject) => {
      const done = (settle, value) => {
        clearTimeout(timer);
        this.waiters.delete(poll);
        settle(value);
      };
      const poll = () => {
        const value = check();
        if (value) return done(resolve, value);
        if (this.ended) done(reject, new Error(`connection ended waiting for ${what}`));
        return undefined;
      };
      const timer = setTimeout(() => done(reject, new Error(`timed out waiting for ${what}`)), timeout);
      this.waiters.add(poll);
      poll();
    });
  }

  // The first text message from index `from` on that `match` accepts.
  message(match, what, from = 0) {
    return this.until(() => this.texts.slice(from).find(match), what);
  }

  // The answer to what is sent by `send`: the next `refused` or `state`.
  async answer(send) {
    const from = this.texts.length;
    send();
    return this.message((m) => m.type === 'refused' || m.type === 'state', 'an answer', from);
  }

  closed(timeout = WAIT_MS) {
    return this.until(() => this.ended && { frame: this.closeFrame }, 'the connection to end', timeout);
  }

  send(opcode, payload, options) { this.socket.write(frame(opcode, payload, options)); }
  sendJson(object) { this.send(OP.text, JSON.stringify(object)); }
  raw(bytes) { this.socket.write(bytes); }
  destroy() { this.socket.destroy(); }
}

// A viewer of `path`, upgraded and past its first state message; destroyed after `t`.
async function viewer(t, port, path) {
  const v = new RawViewer(port, path);
  t.after(() => v.destroy());
  await v.open();
  assert.equal(v.status, 101, `upgrade of ${path}: ${v.status} ${v.body}`);
  if (path.startsWith('/ws/terminal/')) await v.message((m) => m.type === 'state', 'the first state');
  return v;
}

// An agentty with the test secret whose stderr (its log) is kept.
async function startLogged(t, env = {}) {
  const agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN, ...env } });
  t.after(() => agent.client.close());
  let stderr = '';
  agent.transport.stderr.on('data', (chunk) => { stderr += chunk; });
  agent.stderr = () => stderr;
  agent.pid = agent.transport.pid;
  return agent;
}

// Starts `command` and returns { id, port, path } of its terminal socket.
async function started(t, agent, command, extra = {}) {
  // Not stopped after `t`: closing the agent's client (after `t`) ends it.
  const r = await agent.call('execute', { command, side_effects: ['NONE'], yield_ms: 0, ...extra });
  assert.equal(r.isError, false, r.error);
  const { port } = parseUrl(r.terminal_url);
  return { id: r.execution_id, port, path: `/ws/terminal/${r.execution_id}` };
}

const psEntry = async (agent, id) =>
  (await agent.call('ps', {})).executions.find((e) => e.execution_id === id);
const sizeOf = async (agent, id) => {
  const screen = await agent.call('screen', { execution_id: id });
  return [screen.cols, screen.rows];
};

test('control messages of every wrong shape are refused with what is wrong, and the viewer stays', async (t) => {
  const agent = await startLogged(t);
  const { id, port, path } = await started(t, agent, 'cat');
  const v = await viewer(t, port, path);
  const cases = [
    ['hello', /not valid JSON/],
    ['', /not valid JSON/],
    ['{"type":"resize","cols":NaN,"rows":24}', /not valid JSON/],
    ['[1,2]', /not a JSON object/],
    ['{"cols":80}', /no "type"/],
    ['{"type":5}', /no "type"/],
    ['{"type":"explode"}', /unknown message type "explode"/],
    ['{"type":"resize","cols":0,"rows":0}', /cols 1\.\.1000, rows 1\.\.500/],
    ['{"type":"resize","cols":65535,"rows":1}', /cols 1\.\.1000/],
    ['{"type":"resize","cols":-1,"rows":24}', /cols 1\.\.1000/],
    ['{"type":"resize","cols":1e9,"rows":24}', /must be integers/],
    ['{"type":"resize","cols":80.5,"rows":24}', /must be integers/],
    ['{"type":"resize","cols":"80","rows":24}', /must be integers/],
    ['{"type":"take_over","cols":80}', /must be integers/],
    ['{"type":"take_over","client":"root"}', /"client" must be "browser" or "attach"/],
    // Once taken for a browser: a client of another type is as wrong as an unknown name.
    ['{"type":"take_over","client":5}', /"client" must be "browser" or "attach"/],
    ['{"type":"take_over","client":null}', /"client" must be "browser" or "attach"/],
    [`${'['.repeat(20000)}${']'.repeat(20000)}`, /not a JSON object/],
  ];
  for (const [text, expected] of cases) {
    const answer = await v.answer(() => v.send(OP.text, text));
    assert.equal(answer.type, 'refused', `${text.slice(0, 60)}: ${JSON.stringify(answer)}`);
    assert.equal(answer.action, 'message');
    assert.match(answer.message, expected, text.slice(0, 60));
  }
  // A message split in fragments with a ping between them is one message.
  const fragmented = await v.answer(() => v.raw(Buffer.concat([
    frame(OP.text, '{"type":', { fin: false }), frame(OP.ping, 'p'), frame(OP.cont, '"bogus"}')])));
  assert.match(fragmented.message, /unknown message type "bogus"/);
  // Unknown fields are ignored; nothing above took the execution.
  const extra = await v.answer(() => v.sendJson({ type: 'release', extra: [1, { a: 2 }] }));
  assert.equal(extra.message, 'you do not hold this execution');
  assert.equal((await psEntry(agent, id)).held, false);
  const taken = await v.answer(() => v.sendJson({ type: 'take_over', client: 'browser' }));
  assert.equal(taken.held_by_you, true, JSON.stringify(taken));
  assert.equal(v.ended, false);
});

test('protocol violations end only that viewer, with the close code that names them', async (t) => {
  const agent = await startLogged(t);
  const { id, port, path } = await started(t, agent, 'cat');
  const watcher = await viewer(t, port, path);
  const violations = [
    ['invalid UTF-8 in a text frame', (v) => v.send(OP.text, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 1007],
    ['a 70 KB text message', (v) => v.send(OP.text, 'x'.repeat(70000)), 1009],
    ['a frame length of 2^48', (v) => {
      const b = Buffer.alloc(14);  // header, 64-bit length, mask key
      b[0] = 0x82;
      b[1] = 0x80 | 127;
      b.writeBigUInt64BE(1n << 48n, 2);
      v.raw(b);
    }, 1009],
    ['an unmasked frame', (v) => v.raw(frame(OP.text, '{"type":"pause"}', { mask: false })), 1002],
    ['a reserved bit', (v) => v.raw(frame(OP.text, '{"type":"pause"}', { rsv: 4 })), 1002],
    ['a reserved opcode', (v) => v.raw(frame(3, 'x')), 1002],
    ['a 200-byte ping', (v) => v.raw(frame(OP.ping, Buffer.alloc(200))), 1002],
    ['a fragmented ping', (v) => v.raw(frame(OP.ping, 'x', { fin: false })), 1002],
    ['a continuation with nothing to continue', (v) => v.raw(frame(OP.cont, 'x')), 1002],
    ['a new message inside a fragmented one', (v) => v.raw(Buffer.concat([
      frame(OP.text, '{"type":', { fin: false }), frame(OP.text, '{}')])), 1002],
    ['close code 999', (v) => v.raw(frame(OP.close, closePayload(999))), 1002],
    ['close code 1005 sent on the wire', (v) => v.raw(frame(OP.close, closePayload(1005))), 1002],
    ['a 1-byte close payload', (v) => v.raw(frame(OP.close, Buffer.from([3]))), 1002],
    ['a close reason that is not UTF-8', (v) => v.raw(frame(OP.close,
      Buffer.concat([closePayload(1000), Buffer.from([0xff])]))), 1002],
    ['a normal close', (v) => v.raw(frame(OP.close, closePayload(1000, 'bye'))), 1000],
    ['a private close code', (v) => v.raw(frame(OP.close, closePayload(4999))), 4999],
  ];
  for (const [what, send, code] of violations) {
    const v = await viewer(t, port, path);
    send(v);
    const { frame: closing } = await v.closed();
    assert.equal(closing?.code, code, `${what}: ${JSON.stringify(closing)}`);
  }
  // The others watch on; the agent and the program were never touched.
  await agent.call('write', { execution_id: id, input: 'still-here', newline: true });
  await watcher.until(() => Buffer.concat(watcher.binary).includes('still-here'), 'the output');
  assert.equal(watcher.ended, false);
  assert.equal((await psEntry(agent, id)).status, 'running');
});

test('a read-only viewer\'s keystrokes, resize and release are refused and change nothing', async (t) => {
  const agent = await startLogged(t);
  const { id, port, path } = await started(t, agent, 'cat', { cols: 90, rows: 30 });
  const v = await viewer(t, port, path);
  const input = await v.answer(() => v.send(OP.binary, 'sneaky-input\r'));
  assert.deepEqual([input.action, input.message],
    ['input', 'read-only: take over to type into this terminal']);
  const resize = await v.answer(() => v.sendJson({ type: 'resize', cols: 1, rows: 1 }));
  assert.deepEqual([resize.action, resize.message], ['resize', 'only the viewer holding it sets the size']);
  const release = await v.answer(() => v.sendJson({ type: 'release' }));
  assert.deepEqual([release.action, release.message], ['release', 'you do not hold this execution']);
  // A pause is only about what this viewer is sent; it answers nothing.
  v.sendJson({ type: 'pause' });
  v.sendJson({ type: 'resume' });
  await agent.call('write', { execution_id: id, input: 'agent-line', newline: true });
  await v.until(() => Buffer.concat(v.binary).includes('agent-line'), 'the agent\'s line');
  const read = await agent.call('read', { execution_id: id, tail_lines: 20 });
  assert.doesNotMatch(read.output, /sneaky/);
  assert.equal((await psEntry(agent, id)).held, false);
  assert.deepEqual(await sizeOf(agent, id), [90, 30]);
});

test('a holder that vanishes without a close frame gives the execution back to the agent at once', async (t) => {
  const agent = await startLogged(t, { AGENTTY_LOG_LEVEL: 'info' });
  const { id, port, path } = await started(t, agent, 'cat', { cols: 90, rows: 30 });
  const holder = await viewer(t, port, path);
  const taken = await holder.answer(() => holder.sendJson({ type: 'take_over', cols: 50, rows: 10 }));
  assert.equal(taken.held_by_you, true);
  const refused = await agent.call('write', { execution_id: id, input: 'agent', newline: true });
  assert.equal(refused.isError, true);
  assert.match(refused.error, /^held: .*wait\(until="released"\)/);
  assert.equal((await psEntry(agent, id)).held, true);
  holder.send(OP.binary, 'typed-by-holder\r');
  await holder.until(() => Buffer.concat(holder.binary).includes('typed-by-holder'), 'the echo');
  const released = agent.call('wait', { execution_id: id, until: 'released', timeout_ms: WAIT_MS });
  holder.socket.resetAndDestroy();  // TCP reset: no close frame, no FIN
  const w = await released;
  assert.equal(w.held, false, JSON.stringify(w));
  const written = await agent.call('write', { execution_id: id, input: 'agent-again', newline: true });
  assert.equal(written.isError, false, written.error);
  // The agent's size is back.
  assert.deepEqual(await sizeOf(agent, id), [90, 30]);
  assert.match(agent.stderr(), /release of \w+ by browser 127\.0\.0\.1:\d+: viewer disconnected/);
});

test('two viewers race to take over while the agent writes: one holds, the other is told by whom', async (t) => {
  const agent = await startLogged(t);
  const { id, port, path } = await started(t, agent, 'cat');
  const a = await viewer(t, port, path);
  const b = await viewer(t, port, path);
  const fromA = a.texts.length;
  const fromB = b.texts.length;
  a.sendJson({ type: 'take_over' });
  b.sendJson({ type: 'take_over' });
  const agentWrite = agent.call('write', { execution_id: id, input: 'agent-racing', newline: true });
  const answerOf = (v, from) => v.message((m) => m.type === 'refused' || (m.type === 'state' && m.held),
    'the takeover\'s answer', from);
  const [answerA, answerB] = await Promise.all([answerOf(a, fromA), answerOf(b, fromB)]);
  const [winner, loser, lost] = answerA.held_by_you ? [a, b, answerB] : [b, a, answerA];
  assert.equal([answerA, answerB].filter((m) => m.held_by_you).length, 1);
  const holderName = winner.texts.findLast((m) => m.type === 'state').held_by;
  if (lost.type === 'refused') {
    assert.equal(lost.message, `already held by ${holderName}; ask them to release it first.`);
  } else {
    assert.equal(lost.held_by, holderName);
  }
  // The agent's write came before the takeover or was refused for it, whole either way.
  const written = await agentWrite;
  if (written.isError) assert.match(written.error, /^held: /);
  // The holder's keys and its release arrive in order; what follows the release is refused.
  const fromWinner = winner.texts.length;
  const beforeRelease = loser.texts.length;
  winner.raw(Buffer.concat([frame(OP.binary, 'typed-while-held\r'),
    frame(OP.text, '{"type":"release"}'), frame(OP.binary, 'typed-after-release\r')]));
  await winner.message((m) => m.type === 'refused' && m.action === 'input', 'the late input refused', fromWinner);
  await loser.message((m) => m.type === 'state' && !m.held, 'the release', beforeRelease);
  const fromLoser = loser.texts.length;
  loser.sendJson({ type: 'take_over' });
  const taken = await loser.message((m) => m.type === 'refused' || (m.type === 'state' && m.held),
    'the second takeover', fromLoser);
  assert.equal(taken.held_by_you, true, JSON.stringify(taken));
  // The terminal's echo and cat's copy come back in their own time (a read
  // at once found nothing yet on a loaded machine): waited for.
  const echoed = await agent.call('wait', { execution_id: id, pattern: '(?s)typed-while-held.*typed-while-held', timeout_ms: WAIT_MS });
  assert.equal(echoed.wait_result, 'matched', JSON.stringify(echoed));
  const read = await agent.call('read', { execution_id: id, tail_lines: 50 });
  assert.match(read.output, /typed-while-held/);
  assert.doesNotMatch(read.output, /typed-after-release/);
  assert.equal((await psEntry(agent, id)).held_by, taken.held_by);
});

test('an execution that ends while a viewer holds it is nobody\'s: the holder is told, and takeovers are refused', async (t) => {
  const agent = await startLogged(t);
  const { id, port, path } = await started(t, agent, 'cat');
  const holder = await viewer(t, port, path);
  const watcher = await viewer(t, port, path);
  const taken = await holder.answer(() => holder.sendJson({ type: 'take_over' }));
  assert.equal(taken.held_by_you, true);
  const from = holder.texts.length;
  holder.send(OP.binary, '\x04');  // end of input: cat exits
  const ended = await holder.message((m) => m.type === 'state' && m.status !== 'running', 'the end', from);
  assert.deepEqual([ended.status, ended.held, ended.held_by], ['completed', false, null]);
  const entry = await psEntry(agent, id);
  assert.deepEqual([entry.status, entry.held], ['completed', false]);
  for (const v of [holder, watcher]) {
    const again = await v.answer(() => v.sendJson({ type: 'take_over' }));
    assert.equal(again.type, 'refused', JSON.stringify(again));
    assert.equal(again.message, `execution ${id} has ended; nothing to take over.`);
  }
  // Keys for an ended program are refused for that reason, not with "take over to type".
  const input = await holder.answer(() => holder.send(OP.binary, 'too late\r'));
  assert.deepEqual([input.action, input.message],
    ['input', `execution ${id} has ended (completed); nothing was typed into it.`]);
  assert.equal(holder.ended || watcher.ended, false);
});

test('a viewer that never reads during a flood costs bounded memory; the program, other viewers and the agent go on', async (t) => {
  const agent = await startLogged(t);
  // Faster than the web's stream rate at times: both streaming and flood snapshots happen.
  const { id, port, path } = await started(t, agent,
    'while :; do seq -f "%030g" 1 200000; sleep 0.2; done');
  const fdsBefore = openFds(agent.pid);
  const stuck = await viewer(t, port, path);
  stuck.socket.pause();
  const stuckDashboard = await viewer(t, port, '/ws/dashboard');
  stuckDashboard.socket.pause();
  const reader = await viewer(t, port, path);
  reader.keepBinary = false;
  const rssBefore = rssKb(agent.pid);
  // Hundreds of viewers come and go meanwhile, half of them with a TCP reset.
  for (let round = 0; round < 30; round++) {
    const batch = await Promise.all(Array.from({ length: 10 }, async (_, k) => {
      const v = new RawViewer(port, k % 3 ? path : '/ws/dashboard');
      await v.open();
      assert.equal(v.status, 101);
      return v;
    }));
    batch.forEach((v, k) => (k % 2 ? v.socket.resetAndDestroy() : v.raw(frame(OP.close, closePayload(1000)))));
  }
  const bytesBefore = reader.binaryBytes;
  await reader.until(() => reader.binaryBytes > bytesBefore + (1 << 20), 'a megabyte more for the reader');
  const asked = Date.now();
  assert.equal((await agent.call('ps', {})).isError, false);
  const mcpMs = Date.now() - asked;
  assert.ok(mcpMs < 5000, `ps took ${mcpMs} ms during the flood`);
  // The stuck viewer's queue is bounded (1 MiB of output, then a resync).
  const grown = rssKb(agent.pid) - rssBefore;
  assert.ok(grown < 64 * 1024, `agentty grew by ${grown} KiB`);
  assert.equal(reader.ended, false);
  await agent.call('stop', { execution_id: id, signal: 'SIGKILL' });
  for (const v of [stuck, stuckDashboard, reader]) v.destroy();
  await eventually(() => openFds(agent.pid) <= fdsBefore, { what: 'the fds to be closed' });
});

test('viewers of an execution whose record is removed are closed with a reason, not left open', async (t) => {
  const agent = await startLogged(t);
  const done = await agent.call('execute', { command: 'echo removed-soon', side_effects: ['NONE'] });
  assert.equal(done.status, 'completed');
  const { port } = parseUrl(done.terminal_url);
  const path = `/ws/terminal/${done.execution_id}`;
  const first = await viewer(t, port, path);
  const second = await viewer(t, port, path);
  const fdsWatching = openFds(agent.pid);
  const cleaned = await agent.call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  assert.ok(cleaned.removed >= 1, JSON.stringify(cleaned));
  for (const v of [first, second]) {
    const { frame: closing } = await v.closed();
    assert.equal(closing?.code, 4404, JSON.stringify(closing));
    assert.equal(closing.reason,
      `execution ${done.execution_id} was removed (cleanup or record retention); nothing more to show`);
  }
  // A reconnect finds nothing, as the page then explains.
  const again = new RawViewer(port, path);
  t.after(() => again.destroy());
  await again.open();
  assert.equal(again.status, 404);
  await eventually(() => openFds(agent.pid) < fdsWatching, { what: 'the viewers\' fds to be closed' });
});

test('a terminal page of an execution that cleanup removes says its link is outdated at once', async (t) => {
  const agent = await startLogged(t);
  const done = await agent.call('execute', { command: 'echo page-of-removed', side_effects: ['NONE'] });
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const context = await browser.newContext();
  const { page, problems } = await openTerminal(context, done.terminal_url);
  await waitForLine(page, 'page-of-removed');
  await agent.call('cleanup', { completed_older_than_ms: 0, stopped_older_than_ms: 0 });
  await page.waitForSelector('body[data-connected="gone"]', { timeout: 15000 });
  assert.match(await page.innerText('#message'), /outdated.*removed after it ended/s);
  // WebSocket failures the page expected (the 404 of its API check) aside, no errors.
  assert.deepEqual(problems.filter((p) => !/404/.test(p)), []);
});

test('the dashboard socket ignores what a viewer sends it and keeps its list current', async (t) => {
  const agent = await startLogged(t);
  const { port } = await started(t, agent, 'cat');
  const dashboard = await viewer(t, port, '/ws/dashboard');
  await dashboard.message((m) => m.type === 'executions', 'the first list');
  for (const bytes of [frame(OP.text, 'junk'), frame(OP.binary, Buffer.alloc(60000)),
    frame(OP.text, '{"type":"take_over"}'), frame(OP.text, ''), frame(OP.ping, 'x')]) {
    dashboard.raw(bytes);
  }
  const next = await started(t, agent, 'sleep 60', { name: 'dashboard-sees-me' });
  await dashboard.message((m) => m.type === 'executions' &&
    m.executions.some((e) => e.execution_id === next.id && e.name === 'dashboard-sees-me'), 'the new execution');
  dashboard.send(OP.text, Buffer.from([0xc3, 0x28]));
  const { frame: closing } = await dashboard.closed();
  assert.equal(closing?.code, 1007);
});

// Raw HTTP on its own connection; resolves every status line the server sent
// and whether it closed the connection within `ms`.
function rawHttp(port, request, ms = 2000) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    const finish = (closed) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ statuses: [...data.matchAll(/^HTTP\/1\.\d (\d+)/gm)].map((m) => Number(m[1])), closed, data });
    };
    const timer = setTimeout(() => finish(false), ms);
    socket.on('data', (chunk) => { data += chunk.toString('latin1'); });
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
  });
}

test('odd HTTP: methods, pipelining, the secret in the wrong place, smuggling, and huge paths', async (t) => {
  const agent = await startLogged(t);
  const { id, port, path } = await started(t, agent, 'cat');
  const host = `Host: 127.0.0.1:${port}`;
  const token = `X-Agentty-Token: ${TOKEN}`;
  const upgrade = (target, extra = []) => [`GET ${target} HTTP/1.1`, host, 'Connection: Upgrade',
    'Upgrade: websocket', 'Sec-WebSocket-Version: 13',
    `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}`, ...extra, '', ''].join('\r\n');
  const cases = [
    ['DELETE', `DELETE / HTTP/1.1\r\n${host}\r\n\r\n`, [405]],
    ['an upgrade by POST', upgrade('/ws/dashboard', [`Sec-WebSocket-Protocol: ${protocols.join(', ')}`])
      .replace(/^GET/, 'POST'), [405]],
    ['three pipelined requests, answered in order',
      `GET / HTTP/1.1\r\n${host}\r\n\r\nGET /api/executions HTTP/1.1\r\n${host}\r\n${token}\r\n\r\n` +
      `GET /nope HTTP/1.1\r\n${host}\r\n\r\n`, [200, 200, 404]],
    ['the secret in the query', `GET /api/executions?token=${TOKEN} HTTP/1.1\r\n${host}\r\n\r\n`, [404]],
    ['the secret in a cookie', `GET /api/executions HTTP/1.1\r\n${host}\r\nCookie: token=${TOKEN}\r\n\r\n`, [404]],
    ['an upgrade with the secret in the query', upgrade(`${path}?token=${TOKEN}`,
      ['Sec-WebSocket-Protocol: agentty.v1']), [404]],
    ['an upgrade offering only the secret header', upgrade(path, [token]), [400]],
    ['percent-encoded dot segments', `GET /assets/%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\n${host}\r\n\r\n`, [404]],
    ['Content-Length with Transfer-Encoding', `GET / HTTP/1.1\r\n${host}\r\nContent-Length: 4\r\n` +
      `Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/executions HTTP/1.1\r\n${host}\r\n${token}\r\n\r\n`, []],
  ];
  for (const [what, request, statuses] of cases) {
    const answer = await rawHttp(port, request);
    assert.deepEqual(answer.statuses, statuses, `${what}: ${answer.data.slice(0, 200)}`);
  }
  // A refused upgrade of an 8 KB path of odd bytes is logged as one short line. (The pattern
  // needs the run of a's: an execution id is hex and may itself start with an 'a'.)
  const odd = `${'a'.repeat(6000)}\u00ff%%`;
  const refused = await rawHttp(port, Buffer.from(upgrade(`/ws/terminal/${odd}`,
    [`Sec-WebSocket-Protocol: ${protocols.join(', ')}`]), 'latin1'));
  assert.deepEqual(refused.statuses, [404]);
  const line = await eventually(() => agent.stderr().split('\n').find((l) => /refused GET \/ws\/terminal\/a{20}/.test(l)),
    { what: 'the refusal in the log' });
  assert.ok(line.length < 400, `a ${line.length}-character log line`);
  assert.match(line, /path check \(no execution a{100}\.\.\.\)/);
  assert.equal((await psEntry(agent, id)).status, 'running');
});

test('with every connection taken by viewers, a new page is told the limit and what to do', async (t) => {
  const agent = await startLogged(t);
  const { port, path } = await started(t, agent, 'cat');
  const viewers = [];
  t.after(() => viewers.forEach((v) => v.destroy()));
  for (let i = 0; i < 64; i++) {
    const v = new RawViewer(port, i % 8 ? path : '/ws/dashboard');
    viewers.push(v);
    await v.open();
    assert.equal(v.status, 101, `viewer ${i}`);
  }
  const page = await rawHttp(port, `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  assert.deepEqual(page.statuses, [503], page.data);
  assert.match(page.data, /at its limit of 64 connections \(terminal pages, dashboards, agentty attach\); close some of them/);
  const upgrade = new RawViewer(port, path);
  t.after(() => upgrade.destroy());
  await upgrade.open();
  assert.equal(upgrade.status, 503);
  // One place freed: the next one is served.
  viewers.pop().socket.resetAndDestroy();
  await eventually(async () => (await rawHttp(port, `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)).statuses[0] === 200,
    { what: 'a place for the page' });
  assert.equal((await agent.call('ps', {})).isError, false);
});
