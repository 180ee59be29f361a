// End-to-end: every agentty server of one user finds the others through
// STATE_DIR/servers. `agentty serve` (what `make run` starts) must list the
// agent's own `agentty mcp` server, with a working link to its dashboard, and
// drop it once it exits, whether cleanly or killed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { agenttyBin, startAgentty, tempDirForRun } from './lib/mcp-client.mjs';
import { launchBrowser, watchPage, parseUrl, httpGet, eventually } from './lib/web-helpers.mjs';

const stateDir = tempDirForRun('agentty-servers-');
const serversDir = path.join(stateDir, 'servers');
let serve;     // { child, url, origin, token, output }
let browser;

// Starts `agentty serve` and resolves once its start-up text is complete.
function startServe() {
  const child = spawn(agenttyBin, ['serve', '--state-dir', stateDir, '--web-listen', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, AGENTTY_LOG_LEVEL: 'warn' },
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (!output.includes('Stop with Ctrl-C')) return;
      const url = output.match(/http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]+/)[0];
      const u = new URL(url);
      resolve({ child, url, origin: u.origin, token: u.hash.slice('#token='.length), output });
    });
    child.on('exit', (code) => reject(new Error(`agentty serve exited (${code}): ${output}`)));
  });
}

const tokenOf = (url) => new URL(url).hash.slice('#token='.length);

async function listServers(origin = serve.origin, token = serve.token) {
  const r = await httpGet(`${origin}/api/servers`, { 'X-Agentty-Token': token });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['cache-control'], 'no-store');
  return JSON.parse(r.body).servers;
}

before(async () => {
  serve = await startServe();
});

after(async () => {
  await browser?.close();
  if (serve && serve.child.exitCode === null) {
    const exited = new Promise((resolve) => serve.child.once('exit', resolve));
    serve.child.kill('SIGTERM');
    await exited;
  }
});

test("serve's start-up text says agents' servers appear on its dashboard", () => {
  assert.match(serve.output, /Agentty servers on this\s+machine/);
  assert.ok(serve.output.includes(stateDir), serve.output);
});

test("serve's dashboard lists the agent's MCP server with a working link, until it exits", async (t) => {
  const agent = await startAgentty({ stateDir });
  t.after(() => agent.client.close());
  const agentPid = agent.transport.pid;
  const run = await agent.call('execute', { command: 'echo listed', side_effects: ['NONE'], name: 'from-the-agent' });
  assert.equal(run.isError, false, run.error);

  const servers = await listServers();
  assert.deepEqual(servers.map((s) => [s.kind, s.self]).sort(), [['mcp', false], ['serve', true]]);
  const mcp = servers.find((s) => s.kind === 'mcp');
  assert.equal(mcp.pid, agentPid);
  assert.equal(servers.find((s) => s.self).pid, serve.child.pid);
  assert.equal(mcp.dashboard_url, new URL(run.terminal_url).origin + '/#token=' + tokenOf(run.terminal_url));
  assert.equal(mcp.port, parseUrl(mcp.dashboard_url).port);
  assert.ok(Math.abs(mcp.started_at - Date.now()) < 120000, String(mcp.started_at));

  // The link leads to the agent's executions.
  const link = parseUrl(mcp.dashboard_url);
  const executions = await httpGet(`${link.origin}/api/executions`, { 'X-Agentty-Token': tokenOf(mcp.dashboard_url) });
  assert.equal(executions.status, 200);
  assert.ok(JSON.parse(executions.body).executions.some((e) => e.execution_id === run.execution_id));
  // The agent's own server lists serve too, marking itself.
  const seenByAgent = await listServers(link.origin, tokenOf(mcp.dashboard_url));
  assert.deepEqual(seenByAgent.map((s) => [s.kind, s.self]).sort(), [['mcp', true], ['serve', false]]);

  // Private files, one per server.
  assert.equal(statSync(serversDir).mode & 0o777, 0o700);
  const files = readdirSync(serversDir).sort();
  assert.deepEqual(files, [`${agentPid}.json`, `${serve.child.pid}.json`].sort());
  for (const f of files) assert.equal(statSync(path.join(serversDir, f)).mode & 0o777, 0o600);

  // In the page: the row, its link, and the agent's dashboard behind it.
  browser = await launchBrowser();
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(serve.url);
  const row = page.locator(`#servers-body tr[data-pid="${agentPid}"]`);
  await row.waitFor({ timeout: 15000 });
  assert.match(await row.innerText(), /mcp/);
  assert.match(await page.locator(`#servers-body tr[data-pid="${serve.child.pid}"]`).innerText(), /this dashboard/);
  const a = row.locator('a.server-link');
  assert.equal(await a.getAttribute('href'), mcp.dashboard_url);
  await a.click();
  await page.locator(`tr[data-execution-id="${run.execution_id}"]`).waitFor({ timeout: 15000 });
  assert.equal(page.url(), mcp.dashboard_url);
  await page.goto(serve.url);
  await row.waitFor({ timeout: 15000 });

  // A clean exit withdraws the entry; the page drops the row on its next poll.
  await agent.client.close();
  assert.equal(existsSync(path.join(serversDir, `${agentPid}.json`)), false);
  assert.deepEqual((await listServers()).map((s) => s.kind), ['serve']);
  await row.waitFor({ state: 'detached', timeout: 15000 });
  assert.deepEqual(problems, []);
  await context.close();
});

test('a killed MCP server is dropped and its file removed by the next listing', async (t) => {
  const agent = await startAgentty({ stateDir });
  t.after(() => agent.client.close());
  const pid = agent.transport.pid;
  assert.ok((await listServers()).some((s) => s.pid === pid));
  const file = path.join(serversDir, `${pid}.json`);
  assert.equal(existsSync(file), true);
  process.kill(pid, 'SIGKILL');
  // No event tells this process when the kernel has reaped another's child.
  await eventually(async () => !(await listServers()).some((s) => s.pid === pid), { what: 'the killed server to drop' });
  assert.equal(existsSync(file), false);
});

test('the servers endpoint needs the secret and this server\'s Host', async () => {
  assert.equal((await httpGet(`${serve.origin}/api/servers`)).status, 404);
  assert.equal((await httpGet(`${serve.origin}/api/servers`, { 'X-Agentty-Token': 'f'.repeat(64) })).status, 404);
  const foreignHost = await httpGet(`${serve.origin}/api/servers`, { 'X-Agentty-Token': serve.token, Host: 'evil.example:80' });
  assert.notEqual(foreignHost.status, 200);
  const foreignOrigin = await httpGet(`${serve.origin}/api/servers`, { 'X-Agentty-Token': serve.token, Origin: 'http://evil.example' });
  assert.notEqual(foreignOrigin.status, 200);
});

test('web-url names the last server started, and goes when that server stops', async () => {
  // It kept naming a server that had exited (a dead port and secret).
  const file = path.join(stateDir, 'web-url');
  const first = await startAgentty({ stateDir });
  const firstUrl = readFileSync(file, 'utf8').trim();
  const second = await startAgentty({ stateDir });
  const secondUrl = readFileSync(file, 'utf8').trim();
  assert.notEqual(secondUrl, firstUrl);
  await first.client.close();
  assert.equal(readFileSync(file, 'utf8').trim(), secondUrl, 'a later server\'s URL is left alone');
  await second.client.close();
  assert.equal(existsSync(file), false);
});
