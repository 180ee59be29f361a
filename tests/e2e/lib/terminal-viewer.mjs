// A person's terminal page reduced to its WebSocket: connects to the socket
// of a terminal_url (its secret from the URL's #token=) and sends control
// messages such as take_over and release, and keys (sendKeys). `texts`
// holds every text message (parsed), `output` every binary one (what the
// terminal shows); `message(match)` resolves with the first from `from` on
// that `match` accepts, re-checked on every message (no polling).
import crypto from 'node:crypto';
import http from 'node:http';
import { WAIT_MS } from './mcp-client.mjs';

// A masked frame, as a client must send (payloads under 64 KiB): text
// (opcode 1) for messages, binary (2) for keystrokes.
function maskedFrame(opcode, text) {
  const data = Buffer.from(text);
  const first = 0x80 | opcode;
  const header = data.length < 126 ? Buffer.from([first, 0x80 | data.length])
    : Buffer.from([first, 0x80 | 126, data.length >> 8, data.length & 0xff]);
  const key = crypto.randomBytes(4);
  return Buffer.concat([header, key, Buffer.from(data.map((byte, i) => byte ^ key[i & 3]))]);
}

export function openTerminalSocket(terminalUrl) {
  const id = new URL(terminalUrl).pathname.split('/').pop();
  return openViewerSocket(terminalUrl, `/ws/terminal/${id}`);
}

// The dashboard's socket of the server a terminal_url (or the dashboard URL)
// belongs to: `texts` receives its `executions` lists.
export function openDashboardSocket(agenttyUrl) {
  return openViewerSocket(agenttyUrl, '/ws/dashboard');
}

function openViewerSocket(agenttyUrl, path) {
  const url = new URL(agenttyUrl);
  const token = new URLSearchParams(url.hash.slice(1)).get('token');
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: url.hostname, port: url.port, path,
      headers: {
        Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'),
        'Sec-WebSocket-Protocol': `agentty.v1, agentty-token.${token}`,
        Origin: url.origin, Host: url.host,
      },
    });
    // `head`: bytes that came in the same read as the 101 answer (a loaded
    // machine coalesces the answer and the server's first frames); they are
    // not emitted as 'data', so they are parsed first or the first message
    // (the state, the snapshot) is lost.
    request.on('upgrade', (response, socket, head) => {
      const waiters = new Set();
      const viewer = {
        socket,
        texts: [],
        output: [],  // binary frames: the terminal's output and snapshot redraws
        ended: false,
        sendJson: (object) => socket.write(maskedFrame(1, JSON.stringify(object))),
        // Typing, as a person at the page does (only the holder's keys are taken).
        sendKeys: (text) => socket.write(maskedFrame(2, text)),
        message(match, what, from = 0) {
          return new Promise((done, fail) => {
            const check = () => {
              const found = viewer.texts.slice(from).find(match);
              if (found || viewer.ended) {
                clearTimeout(timer);
                waiters.delete(check);
                if (found) done(found); else fail(new Error(`connection ended waiting for ${what}`));
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`timed out waiting for ${what}`));
            }, WAIT_MS);
            waiters.add(check);
            check();
          });
        },
        close: () => socket.destroy(),
      };
      let pending = Buffer.alloc(0);
      const received = (data) => {
        pending = Buffer.concat([pending, data]);
        for (;;) {
          if (pending.length < 2) break;
          let length = pending[1] & 127;
          let offset = 2;
          if (length === 126) { if (pending.length < 4) break; length = pending.readUInt16BE(2); offset = 4; }
          if (length === 127) { if (pending.length < 10) break; length = Number(pending.readBigUInt64BE(2)); offset = 10; }
          if (pending.length < offset + length) break;
          const payload = pending.subarray(offset, offset + length);
          if ((pending[0] & 15) === 1) viewer.texts.push(JSON.parse(payload.toString()));
          if ((pending[0] & 15) === 2) viewer.output.push(Buffer.from(payload));
          pending = pending.subarray(offset + length);
        }
        for (const check of [...waiters]) check();
      };
      if (head.length > 0) received(head);
      socket.on('data', received);
      socket.on('close', () => {
        viewer.ended = true;
        for (const check of [...waiters]) check();
      });
      socket.on('error', () => {});
      resolve(viewer);
    });
    request.on('response', (response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
    request.on('error', reject);
    request.end();
  });
}

// Takes the execution over as a person would, and resolves once it is theirs.
export async function takeOver(viewer) {
  const from = viewer.texts.length;
  viewer.sendJson({ type: 'take_over' });
  return viewer.message((m) => m.type === 'refused' || (m.type === 'state' && m.held_by_you), 'the takeover', from);
}

// Hands it back, and resolves once the page is told it is no longer held.
export async function release(viewer) {
  const from = viewer.texts.length;
  viewer.sendJson({ type: 'release' });
  return viewer.message((m) => m.type === 'refused' || (m.type === 'state' && !m.held), 'the release', from);
}
