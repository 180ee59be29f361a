// End-to-end: a handoff reaches the person in the agent's MCP client (URL
// elicitation, MCP 2025-11-25), with the official SDK client.
//
// What it proves: a client that declares elicitation.url gets
// elicitation/create (mode url, the execution's terminal_url, the reason and
// the command) when handoff is called, and notifications/elicitation/complete
// with the same elicitationId once a person took over and released over the
// WebSocket, or the execution ended; what the person answered reaches the
// agent (handoff_in_client; a decline ends wait(until="released") at once); a
// client that answers with an error is only recorded; a client without the
// capability, or a server without a web page, gets no request and handoff
// works as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ElicitRequestSchema, ElicitationCompleteNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startAgentty, tempDirForRun, WAIT_MS } from './lib/mcp-client.mjs';
import { loginUser, sshdSkip, startSshd } from './lib/sshd.mjs';
import { eventually } from './lib/web-helpers.mjs';
import { openTerminalSocket, takeOver, release } from './lib/terminal-viewer.mjs';

const REASON = 'Enter the sudo password';

// An agentty whose client takes URL elicitation (unless `capabilities` says
// otherwise) and answers each elicitation/create with `action` (none: the
// SDK answers with an error). `asked` and `completed` collect what came,
// `others` any other request (the SDK refuses those).
async function agentWithClient(t, { action, capabilities = { elicitation: { url: {} } }, args, env } = {}) {
  const agent = await startAgentty({ capabilities, args, env });
  t.after(() => agent.client.close());
  const asked = [];
  const completed = [];
  const others = [];
  let onAsked = () => {};
  let onCompleted = () => {};
  if (action && capabilities.elicitation) {
    agent.client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      onAsked();
      return { action };
    });
  }
  if (capabilities.elicitation) {
    agent.client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      completed.push(notification.params.elicitationId);
      onCompleted();
    });
  }
  // Any other request from the server (there must be none).
  agent.client.fallbackRequestHandler = async (request) => {
    others.push(request);
    throw new Error(`unexpected request ${request.method}`);
  };
  const nextAsk = () => new Promise((resolve) => { onAsked = () => resolve(asked.at(-1)); });
  const nextComplete = () => new Promise((resolve) => { onCompleted = () => resolve(completed.at(-1)); });
  return { ...agent, asked, completed, others, nextAsk, nextComplete };
}

async function startCat(agent) {
  const r = await agent.call('execute', { command: 'cat', side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.isError, false, r.error);
  assert.match(r.terminal_url, /^http:\/\/127\.0\.0\.1:\d+\/t\//);
  return r;
}

// A person takes the execution over on its terminal page and hands it back;
// resolves once the agent's wait(until="released") says so.
async function personTakesOverAndReleases(t, agent, execution) {
  const viewer = await openTerminalSocket(execution.terminal_url);
  t.after(() => viewer.close());
  await takeOver(viewer);
  const released = agent.call('wait', { execution_id: execution.execution_id, until: 'released', timeout_ms: WAIT_MS });
  await release(viewer);
  assert.equal((await released).wait_result, 'released');
}

test('handoff asks the person in the client with terminal_url and the reason; release completes it', async (t) => {
  const auditLog = join(tempDirForRun('agentty-elicit-audit-'), 'audit.jsonl');
  const agent = await agentWithClient(t, { action: 'accept', env: { AGENTTY_AUDIT_LOG: auditLog } });
  const cat = await startCat(agent);
  const asking = agent.nextAsk();
  const handed = await agent.call('handoff', { execution_id: cat.execution_id, reason: REASON });
  assert.equal(handed.isError, false, handed.error);
  assert.equal(handed.requested, true);
  assert.equal(handed.asked_in_client, true, JSON.stringify(handed));
  assert.equal(handed.handoff_in_client, 'asked');
  assert.match(handed.message, /MCP client was asked/);

  const params = await asking;
  assert.equal(params.mode, 'url');
  assert.equal(params.url, cat.terminal_url);
  assert.equal(typeof params.elicitationId, 'string');
  assert.ok(params.message.includes(REASON), params.message);
  assert.ok(params.message.includes('`cat`'), params.message);
  assert.equal(params.requestedSchema, undefined, 'URL mode carries no form');

  // The person takes over in the page the client sent them to.
  const viewer = await openTerminalSocket(params.url);
  t.after(() => viewer.close());
  const taken = await takeOver(viewer);
  assert.equal(taken.type, 'state', JSON.stringify(taken));
  const held = await agent.call('read', { execution_id: cat.execution_id });
  assert.equal(held.held, true);
  assert.equal(held.handoff_in_client, 'accepted', JSON.stringify(held));
  const listed = await agent.call('ps', {});
  const entry = listed.executions.find((e) => e.execution_id === cat.execution_id);
  assert.equal(entry.handoff_in_client, 'accepted', JSON.stringify(entry));
  // The operator's audit log shows the question and the answer.
  const elicitations = readFileSync(auditLog, 'utf8').trim().split('\n').map((line) => JSON.parse(line))
    .filter((record) => record.kind === 'client_elicitation');
  assert.deepEqual(elicitations.map(({ execution_id, elicitation_id, state }) => ({ execution_id, elicitation_id, state })), [
    { execution_id: cat.execution_id, elicitation_id: params.elicitationId, state: 'asked' },
    { execution_id: cat.execution_id, elicitation_id: params.elicitationId, state: 'accepted' },
  ]);
  assert.deepEqual(agent.completed, [], 'nothing is complete while the person holds it');

  const released = agent.call('wait', { execution_id: cat.execution_id, until: 'released', timeout_ms: WAIT_MS });
  const completing = agent.nextComplete();
  await release(viewer);
  assert.equal(await completing, params.elicitationId);
  const w = await released;
  assert.equal(w.wait_result, 'released', JSON.stringify(w));
  assert.equal(w.handoff_in_client, undefined, 'the handoff is over');
  assert.deepEqual(agent.completed, [params.elicitationId]);
  assert.deepEqual(agent.others, []);
});

test('a person who declines in the client is reported: wait(until="released") ends at once', async (t) => {
  const agent = await agentWithClient(t, { action: 'decline' });
  const cat = await startCat(agent);
  const asking = agent.nextAsk();
  const handed = await agent.call('handoff', { execution_id: cat.execution_id, reason: REASON });
  assert.equal(handed.asked_in_client, true);
  const params = await asking;
  const w = await agent.call('wait', { execution_id: cat.execution_id, until: 'released', timeout_ms: WAIT_MS });
  assert.equal(w.isError, false, w.error);
  assert.equal(w.wait_result, 'declined', JSON.stringify(w));
  assert.equal(w.handoff_in_client, 'declined');
  assert.match(w.message, /declined the handoff in your MCP client/);
  assert.ok(w.waited_ms < WAIT_MS, `waited ${w.waited_ms} ms`);

  // The execution ends: the elicitation is complete, before the wait's answer.
  const stopped = await agent.call('stop', { execution_id: cat.execution_id, signal: 'SIGKILL' });
  assert.equal(stopped.isError, false, stopped.error);
  const ended = await agent.call('wait', { execution_id: cat.execution_id, until: 'exit', timeout_ms: WAIT_MS });
  assert.equal(ended.wait_result, 'exited');
  assert.deepEqual(agent.completed, [params.elicitationId]);
});

test('a client that declared URL elicitation but answers with an error is only recorded', async (t) => {
  // No handler: the SDK answers elicitation/create with an error.
  const agent = await agentWithClient(t, {});
  const cat = await startCat(agent);
  const handed = await agent.call('handoff', { execution_id: cat.execution_id, reason: REASON });
  assert.equal(handed.asked_in_client, true);
  // No event tells the test that agentty read the client's error: ask it.
  const failed = await eventually(async () => {
    const r = await agent.call('read', { execution_id: cat.execution_id });
    return r.handoff_in_client === 'failed' && r;
  }, { what: 'the client\'s error to be recorded' });
  assert.equal(failed.held, false);
  // The handoff itself stands: a person can still take over and release.
  await personTakesOverAndReleases(t, agent, cat);
  assert.deepEqual(agent.completed, [], 'a refused request has nothing to complete');
});

test('a client without URL elicitation gets no request, and handoff works as before', async (t) => {
  const agent = await agentWithClient(t, { action: 'accept', capabilities: {} });
  const cat = await startCat(agent);
  const handed = await agent.call('handoff', { execution_id: cat.execution_id, reason: REASON });
  assert.equal(handed.isError, false, handed.error);
  assert.equal(handed.requested, true);
  assert.equal(handed.asked_in_client, false);
  assert.equal(handed.handoff_in_client, undefined);
  assert.match(handed.message, /Give the person terminal_url/);
  await personTakesOverAndReleases(t, agent, cat);
  // A request would have come before the handoff's answer (one stream, in order).
  assert.deepEqual(agent.asked, []);
  assert.deepEqual(agent.others, []);
});

test('without a web server there is no URL to send: nothing is asked, and the answer says why', async (t) => {
  const agent = await agentWithClient(t, { action: 'accept', args: ['--no-web'] });
  const r = await agent.call('execute', { command: 'cat', side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.isError, false, r.error);
  // Not stopped after `t`: closing the client (after `t`) ends agentty and it.
  assert.equal(r.terminal_url, undefined);
  const handed = await agent.call('handoff', { execution_id: r.execution_id, reason: REASON });
  assert.equal(handed.asked_in_client, false);
  assert.match(handed.message, /not asked: there is no terminal_url/);
  assert.deepEqual(agent.asked, []);
});

test('an SSH login held for a person asks the client too; the question ends with the execution', { skip: sshdSkip() }, async (t) => {
  const locked = await startSshd({ passwordAuth: true });
  t.after(() => locked.stop());
  const agent = await agentWithClient(t, {
    action: 'accept',
    env: {
      HOME: tempDirForRun('agentty-elicit-home-'), SSH_AUTH_SOCK: '',
      AGENTTY_SSH_KNOWN_HOSTS: locked.knownHosts, AGENTTY_SSH_CONFIG: locked.writeConfig(locked.wrongKey),
    },
  });
  const asking = agent.nextAsk();
  const host = `${loginUser}@127.0.0.1:${locked.port}`;
  const r = await agent.call('execute', { host, command: 'echo elicited', side_effects: ['NONE'], yield_ms: 0 });
  assert.equal(r.isError, false, r.error);
  assert.equal(r.held, true, JSON.stringify(r));
  assert.equal(r.handoff_in_client, 'asked', JSON.stringify(r));
  assert.match(r.message, /Your MCP client was asked to send them to terminal_url/);
  const params = await asking;
  assert.equal(params.mode, 'url');
  assert.equal(params.url, r.terminal_url);
  assert.ok(params.message.includes(r.handoff_reason), params.message);
  assert.ok(params.message.includes(`\`echo elicited\` on ${host}`), params.message);

  const completing = agent.nextComplete();
  const stopped = await agent.call('stop', { execution_id: r.execution_id, signal: 'SIGKILL' });
  assert.equal(stopped.isError, false, stopped.error);
  assert.equal(await completing, params.elicitationId);

  // open(host) held for the same login asks too, and its message says so.
  const askingAgain = agent.nextAsk();
  const session = await agent.call('open', { host });
  assert.equal(session.isError, false, session.error);
  assert.equal(session.held, true, JSON.stringify(session));
  assert.equal(session.handoff_in_client, 'asked', JSON.stringify(session));
  assert.match(session.message, /Your MCP client was asked to send them to terminal_url/);
  const again = await askingAgain;
  assert.equal(again.url, session.terminal_url);
  assert.notEqual(again.elicitationId, params.elicitationId);
  assert.ok(again.message.includes(`a shell session on ${host}`), again.message);
});
