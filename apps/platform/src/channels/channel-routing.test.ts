import { newWebhookSecret, signWebhook } from '@agent-platform/net';
import { startTelegramPeer, startWebhookPeer, type WebhookPeer } from '@agent-platform/channels/testing';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkflowPlatform, type WorkflowPlatform } from '../testing/workflow-harness.ts';

// Channels in the all-in-one (docs/channels.md): the bridge runs the webhook adapters, the worker
// routes inbound messages BY CHANNEL ID to their agent or workflow, replies go back signed to
// each channel's own peer, and each (channel, conversation) keeps its transcript.
let platform: WorkflowPlatform;
let peerA: WebhookPeer;
let peerB: WebhookPeer;
let alpha: string;
let beta: string;
const secrets = { a: newWebhookSecret(), b: newWebhookSecret(), w: newWebhookSecret() };

const call = (method: string, path: string, body?: unknown) =>
  platform.api.request(method, path, { token: platform.token, ...(body === undefined ? {} : { body }) });

function send(channel: string, secret: string, message: Record<string, unknown>, webhookId = `w-${Math.random()}`) {
  const text = JSON.stringify(message);
  return platform.api.request('POST', `/channels/${channel}/inbound`, {
    body: text,
    headers: { 'content-type': 'application/json', ...signWebhook(secret, webhookId, Math.floor(Date.now() / 1000), text) },
  });
}

beforeAll(async () => {
  platform = await startWorkflowPlatform({ agents: ['alpha', 'beta'], key: { role: 'admin' }, config: { network: { allow_private_targets: true } } });
  [peerA, peerB] = await Promise.all([startWebhookPeer(), startWebhookPeer()]);
  for (const name of ['alpha', 'beta']) {
    const res = await call('POST', '/catalog/install', { path: `${platform.shelf.dir}/${name}`, activate: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  const agents = (await call('GET', '/agents')).body.agents as Array<{ id: string; name: string }>;
  alpha = agents.find((a) => a.name === 'alpha')!.id;
  beta = agents.find((a) => a.name === 'beta')!.id;
  expect((await call('POST', '/channels', { id: 'web-a', kind: 'webhook', config: { secret: secrets.a, url: peerA.url }, default_agent: alpha })).status).toBe(201);
  expect((await call('POST', '/channels', { id: 'web-b', kind: 'webhook', config: { secret: secrets.b, url: peerB.url }, default_agent: beta })).status).toBe(201);
  await waitUntil(async () => (await call('GET', '/channels')).body.channels.every((c: { status: unknown }) => c.status === 'Connected'), {
    timeoutMs: 10_000,
    message: 'both channels Connected',
  });
}, 60_000);
afterAll(async () => {
  await platform?.close();
  await Promise.all([peerA?.close(), peerB?.close()]);
});

const systemPromptOf = (text: string): string =>
  String(platform.model.server.requests.find((r) => JSON.stringify(r.body).includes(text))?.body?.messages?.[0]?.content ?? '');

describe('two channels of one kind, two agents', () => {
  it('each agent gets only its own traffic and each reply goes, signed, to its own channel', async () => {
    expect((await send('web-a', secrets.a, { id: 'a-1', conversation: 'ann', text: 'for-alpha one' })).status).toBe(202);
    expect((await send('web-b', secrets.b, { id: 'b-1', conversation: 'bob', thread: 't-9', text: 'for-beta one' })).status).toBe(202);
    await waitUntil(() => peerA.received.length === 1 && peerB.received.length === 1, { timeoutMs: 15_000, message: 'one reply at each peer' });
    const [replyA, replyB] = [peerA.received[0]!, peerB.received[0]!];
    expect(replyA.body).toMatchObject({ channel_id: 'web-a', conversation: 'ann', thread: null, in_reply_to: 'a-1' });
    expect(String(replyA.body['text'])).toContain('for-alpha one');
    expect(replyB.body).toMatchObject({ channel_id: 'web-b', conversation: 'bob', thread: 't-9', in_reply_to: 'b-1' });
    expect(peerA.verified(replyA, secrets.a)).toBe(true);
    expect(peerB.verified(replyB, secrets.b)).toBe(true);
    expect(peerA.verified(replyA, secrets.b)).toBe(false);
    expect(systemPromptOf('for-alpha one')).toContain('You are alpha.');
    expect(systemPromptOf('for-beta one')).toContain('You are beta.');
  });

  it('answers a duplicate inbound message once, sent again and concurrently', async () => {
    const before = peerA.received.length;
    const message = { id: 'a-dup', conversation: 'ann', text: 'dup-check' };
    const answers = await Promise.all([send('web-a', secrets.a, message), send('web-a', secrets.a, message), send('web-a', secrets.a, message)]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    await waitUntil(() => peerA.received.length === before + 1, { timeoutMs: 15_000, message: 'the reply' });
    expect((await send('web-a', secrets.a, message)).status).toBe(202);
    // A later message is answered after it: the duplicate produced nothing in between.
    await send('web-a', secrets.a, { id: 'a-after', conversation: 'ann', text: 'after-dup' });
    await waitUntil(() => peerA.received.some((r) => String(r.body['text']).includes('after-dup')), { timeoutMs: 15_000, message: 'the next reply' });
    expect(peerA.received.filter((r) => String(r.body['text']).includes('dup-check'))).toHaveLength(1);
    expect(platform.model.calls('dup-check')).toBe(1);
  });

  it('refuses a forged or replayed request with nothing delivered', async () => {
    const forged = await send('web-a', secrets.b, { id: 'a-forged', conversation: 'ann', text: 'forged-msg' });
    expect(forged.status).toBe(401);
    const text = JSON.stringify({ id: 'a-old', conversation: 'ann', text: 'replayed-msg' });
    const replayed = await platform.api.request('POST', '/channels/web-a/inbound', {
      body: text,
      headers: { 'content-type': 'application/json', ...signWebhook(secrets.a, 'w-old', Math.floor(Date.now() / 1000) - 3600, text) },
    });
    expect(replayed.status).toBe(401);
    await send('web-a', secrets.a, { id: 'a-marker', conversation: 'ann', text: 'marker-msg' });
    await waitUntil(() => peerA.received.some((r) => String(r.body['text']).includes('marker-msg')), { timeoutMs: 15_000, message: 'the marker reply' });
    expect(platform.model.calls('forged-msg') + platform.model.calls('replayed-msg')).toBe(0);
  });
});

describe('transcripts', () => {
  it('keeps one per (channel, conversation); session/reset keeps them, DELETE history removes them', async () => {
    await send('web-a', secrets.a, { id: 'a-carl', conversation: 'carl', text: 'carl-msg' });
    await waitUntil(() => peerA.received.some((r) => String(r.body['text']).includes('carl-msg')), { timeoutMs: 15_000, message: 'the reply to carl' });
    const list = (await call('GET', `/agents/${alpha}/transcripts`)).body.transcripts as Array<{ channel_id: string; conversation: string; turns: number }>;
    expect(list.map((t) => `${t.channel_id}/${t.conversation}`).sort()).toEqual(['web-a/ann', 'web-a/carl']);
    expect(list.find((t) => t.conversation === 'carl')!.turns).toBe(2);
    const carl = await call('GET', `/agents/${alpha}/transcripts/web-a?conversation=carl`);
    expect(carl.body.turns.map((t: { role: string }) => t.role)).toEqual(['user', 'assistant']);
    expect(carl.body.turns[0].content).toBe('carl-msg');
    expect((await call('GET', `/agents/${beta}/transcripts`)).body.transcripts.map((t: { channel_id: string }) => t.channel_id)).toEqual(['web-b']);
    expect((await call('GET', `/agents/${alpha}/transcripts/web-b?conversation=ann`)).status).toBe(404);

    expect((await call('POST', `/agents/${alpha}/session/reset`)).status).toBe(200);
    expect((await call('GET', `/agents/${alpha}/transcripts`)).body.transcripts).toHaveLength(2);
    expect((await call('DELETE', `/agents/${alpha}/history`)).status).toBe(204);
    expect((await call('GET', `/agents/${alpha}/transcripts`)).body.transcripts).toEqual([]);
    expect((await call('GET', `/agents/${beta}/transcripts`)).body.transcripts).toHaveLength(1);
  });
});

describe('telegram', () => {
  it("threads the agent's reply under the user's message: reply_parameters.message_id is the message's own id", async () => {
    const peer = await startTelegramPeer();
    try {
      const config = { bot_token: peer.botToken, api_base_url: peer.apiBaseUrl, poll_timeout_secs: 1 };
      expect((await call('POST', '/channels', { id: 'tg-a', kind: 'telegram', config, default_agent: alpha })).status).toBe(201);
      await waitUntil(async () => (await call('GET', '/channels/tg-a')).body.status === 'Connected', { timeoutMs: 10_000, message: 'tg-a Connected' });
      // Another message first, so the user's message id differs from its update's position.
      peer.injectMessage({ chat_id: 5, text: 'tg-first' });
      const update = peer.injectMessage({ chat_id: 5, text: 'tg-threaded', message_thread_id: 77 });
      await waitUntil(() => peer.sent.some((m) => m.text.includes('tg-threaded')), { timeoutMs: 15_000, message: 'the reply at the Bot API' });
      expect(peer.sent.find((m) => m.text.includes('tg-threaded'))).toMatchObject({ chat_id: '5', message_thread_id: 77, reply_to_message_id: update.message.message_id });
    } finally {
      await call('DELETE', '/channels/tg-a');
      await peer.close();
    }
  });
});

describe('default_workflow', () => {
  it('starts a run with the message as input and sends its output back to the conversation', async () => {
    const workflowId = await platform.wf.install('intake', { agents_required: ['alpha'], steps: [{ name: 'only', agent: 'alpha', prompt: 'wf-step {{input}}' }] });
    const peer = await startWebhookPeer();
    try {
      expect((await call('POST', '/channels', { id: 'web-w', kind: 'webhook', config: { secret: secrets.w, url: peer.url }, default_workflow: workflowId })).status).toBe(201);
      await waitUntil(async () => (await call('GET', '/channels/web-w')).body.status === 'Connected', { timeoutMs: 10_000, message: 'web-w Connected' });
      expect((await send('web-w', secrets.w, { id: 'w-1', conversation: 'dana', text: 'claim 42' })).status).toBe(202);
      await waitUntil(() => peer.received.length === 1, { timeoutMs: 20_000, message: 'the run output at the peer' });
      expect(peer.received[0]!.body).toMatchObject({ channel_id: 'web-w', conversation: 'dana', in_reply_to: 'w-1' });
      expect(String(peer.received[0]!.body['text'])).toContain('wf-step claim 42');
      const runs = await platform.api.deps.workflows.runs({ workflow_id: workflowId, limit: 10 });
      expect(runs.map((r) => [r.input, r.state])).toEqual([['claim 42', 'Completed']]);
    } finally {
      await peer.close();
    }
  });
});

describe('status and lifecycle without a restart', () => {
  it('disable stops the adapter (replies wait), enable starts it again, delete stops it', async () => {
    expect((await call('POST', '/channels/web-b/disable')).status).toBe(200);
    expect((await call('GET', '/channels/web-b')).body.status).toBe('Disabled');
    expect((await send('web-b', secrets.b, { id: 'b-off', conversation: 'bob', text: 'while-off' })).status).toBe(409);
    expect((await call('POST', '/channels/web-b/enable')).status).toBe(200);
    await waitUntil(async () => (await call('GET', '/channels/web-b')).body.status === 'Connected', { timeoutMs: 10_000, message: 'web-b Connected again' });
    expect((await send('web-b', secrets.b, { id: 'b-on', conversation: 'bob', text: 'while-on' })).status).toBe(202);
    await waitUntil(() => peerB.received.some((r) => String(r.body['text']).includes('while-on')), { timeoutMs: 15_000, message: 'the reply after enable' });
    // PUT restarts the adapter with the new url: the next reply goes there. The stored secret does
    // not follow a new url on its own (the placeholder is refused): it is sent again.
    const moved = await startWebhookPeer();
    try {
      expect((await call('PUT', '/channels/web-b', { config: { secret: '\u2022'.repeat(8), url: moved.url }, default_agent: beta })).status).toBe(400);
      expect((await call('PUT', '/channels/web-b', { config: { secret: secrets.b, url: moved.url }, default_agent: beta })).status).toBe(200);
      await waitUntil(async () => (await call('GET', '/channels/web-b')).body.status === 'Connected', { timeoutMs: 10_000, message: 'web-b Connected after PUT' });
      await send('web-b', secrets.b, { id: 'b-moved', conversation: 'bob', text: 'after-put' });
      await waitUntil(() => moved.received.length === 1, { timeoutMs: 15_000, message: 'the reply at the new url' });
      expect(moved.verified(moved.received[0]!, secrets.b)).toBe(true);
    } finally {
      await moved.close();
    }
    expect((await call('DELETE', '/channels/web-b')).status).toBe(204);
    expect((await send('web-b', secrets.b, { id: 'b-gone', conversation: 'bob', text: 'gone' })).status).toBe(404);
  });
});
