// Helpers for the browser and attach end-to-end tests: Debian's chromium via
// playwright-core, the terminal page's test hooks, raw HTTP/WebSocket probes
// and tmux.
import { chromium } from 'playwright-core';
import http from 'node:http';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { after, before } from 'node:test';
import { startAgentty, tempDirForRun } from './mcp-client.mjs';
import path from 'node:path';

export const TOKEN = crypto.randomBytes(32).toString('hex');

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_BIN || '/usr/bin/chromium',
    headless: true,
    // playwright gives every launch a fresh --user-data-dir of its own.
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

// Collects console errors and CSP violations of a page (checked at the end).
export function watchPage(page) {
  const problems = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  return problems;
}

export function parseUrl(url) {
  const u = new URL(url);
  return { origin: u.origin, host: u.host, port: Number(u.port), path: u.pathname, hash: u.hash };
}

// The text xterm.js shows: whole buffer or just the visible rows.
// Opens any page in `context` at the given window size, with `initScript`
// (a function or source) run before the page's own scripts; `problems`
// collects what its console and network complain of.
export async function openPage(context, url, { width = 1000, height = 600, initScript } = {}) {
  const page = await context.newPage();
  const problems = watchPage(page);
  if (initScript) await page.addInitScript(initScript);
  await page.setViewportSize({ width, height });
  await page.goto(url);
  return { page, problems };
}

// openPage() of a terminal page, once it is connected and has drawn its
// first snapshot.
export async function openTerminal(context, url, options = {}) {
  const { page, problems } = await openPage(context, url, options);
  await page.waitForSelector('body[data-connected="yes"]', { timeout: 15000 });
  await page.waitForFunction(() => Number(document.body.dataset.snapshots ?? 0) >= 1, null,
    { timeout: 15000 });
  return { page, problems };
}

export const screenText = (page) => page.evaluate(() => window.__agentty.screenText());
export const viewportText = (page) => page.evaluate(() => window.__agentty.viewportText());

export async function waitForScreen(page, predicateSource, arg, timeout = 15000) {
  await page.waitForFunction(
    ([source, value]) => new Function('text', 'value', `return (${source})(text, value);`)(
      window.__agentty.screenText(), value),
    [predicateSource, arg], { timeout, polling: 50 });
}

// Waits until some line of the buffer, trimmed, equals `line`.
export async function waitForLine(page, line, timeout = 15000) {
  await page.waitForFunction(
    (wanted) => window.__agentty.screenText().split('\n').some((l) => l.trimEnd() === wanted),
    line, { timeout, polling: 50 });
}

export async function waitForText(page, text, timeout = 15000) {
  await page.waitForFunction((wanted) => window.__agentty.screenText().includes(wanted), text,
    { timeout, polling: 50 });
}

// GET with optional headers; resolves { status, headers, body }.
export function httpGet(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body }));
    });
    request.on('error', reject);
  });
}

// A raw WebSocket upgrade request: resolves the HTTP status (101 when accepted).
export function tryUpgrade(url, { protocols, origin, host } = {}) {
  return new Promise((resolve, reject) => {
    const headers = {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'),
    };
    if (protocols) headers['Sec-WebSocket-Protocol'] = protocols.join(', ');
    if (origin) headers.Origin = origin;
    if (host) headers.Host = host;
    const request = http.request(url, { headers });
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode, protocol: response.headers['sec-websocket-protocol'] });
    });
    request.on('response', (response) => {
      response.resume();
      resolve({ status: response.statusCode });
    });
    request.on('error', reject);
    request.end();
  });
}

// Polls `check` (async) until it returns a truthy value; for conditions that
// have no event to wait on (another process's terminal, an MCP-side state).
export async function eventually(check, { timeout = 15000, interval = 50, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await new Promise((r) => setTimeout(r, interval));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// A private tmux server (own socket) for driving a real terminal client.
export class Tmux {
  constructor() {
    this.dir = tempDirForRun('agentty-tmux-');
    this.socket = path.join(this.dir, 'socket');
  }
  // -u: without a UTF-8 locale (LANG unset, as on a fresh Debian) tmux would
  // print what it reports (display -p: tabs, a title's emoji) as '_'.
  run(...args) {
    return execFileSync('tmux', ['-u', '-S', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  }
  capture(target = 'main') {
    return this.run('capture-pane', '-p', '-J', '-t', target);
  }
  kill() {
    try { this.run('kill-server'); } catch { /* already gone */ }
  }
}

// For a whole test file: an agentty with the test secret whose sessions' bash
// prompt is `prompt` (HOME is a fresh directory in `workDir`; `env` is added
// to its environment), and a browser.
// `fixture.agent` and `fixture.browser` exist once the file's tests run.
export function agentAndBrowserForFile(prompt, prefix, env = {}) {
  const workDir = tempDirForRun(prefix);
  const home = path.join(workDir, 'home');
  const fixture = { workDir, home, agent: undefined, browser: undefined };
  before(async () => {
    mkdirSync(home);
    writeFileSync(path.join(home, '.bashrc'), `PS1='${prompt}'\nHISTFILE=${home}/history\n`);
    fixture.agent = await startAgentty({ env: { AGENTTY_WEB_TOKEN: TOKEN, HOME: home, ...env } });
    fixture.browser = await launchBrowser();
  });
  after(async () => {
    await fixture.browser?.close();
    await fixture.agent?.client.close();
  });
  return fixture;
}
