import { channelCollections } from '@agent-platform/channels';
import { startWebhookPeer, type WebhookPeer } from '@agent-platform/channels/testing';
import { newWebhookSecret, signWebhook } from '@agent-platform/net';
import type { Store } from '@agent-platform/store';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type AppProcess, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Issue 11 item 7 (docs/channels.md "Fleet"): an api node, an agent worker and two channel
// bridges over NATS and Redis. The channel runs on exactly one bridge (its lease); that bridge is
// killed with SIGKILL and within seconds the other runs the channel: a message sent right after
// the kill still gets its reply, signed, at the channel's peer.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const LEASE_TTL_SECS = 2;

describe.skipIf(natsBinary === null || redisBinary === null)('a fleet: channel bridges fail over', () => {
  let fleet: Fleet;
  let api: string;
  let token: string;
  let store: Store;
  let peer: WebhookPeer;
  let bridges: AppProcess[];
  const secret = newWebhookSecret();

  const send = async (id: string, text: string) => {
    const body = JSON.stringify({ id, conversation: 'ops', text });
    const res = await fetch(`${api}/channels/web-f/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signWebhook(secret, `w-${id}`, Math.floor(Date.now() / 1000), body) },
      body,
    });
    return res.status;
  };
  const holder = async (): Promise<string | null> => {
    const lease = (await channelCollections(store).leases.get('web-f'))?.doc;
    return lease !== undefined && lease.expires_at > new Date().toISOString() && lease.status === 'Connected' ? lease.holder : null;
  };

  beforeAll(async () => {
    fleet = await startFleet({ apis: 1, workers: 1, schedulers: 0, config: { network: { allow_private_targets: true }, channels: { lease_ttl_secs: LEASE_TTL_SECS } } });
    bridges = await Promise.all([fleet.add('channel-bridge'), fleet.add('channel-bridge')]);
    peer = await startWebhookPeer();
    api = fleet.urls[0]!;
    token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
    store = await fleet.openStore();
    const claimsIntake = new URL('../../examples/claims-intake', import.meta.url).pathname;
    const install = await call(api, 'POST', '/catalog/install', { token, body: { path: claimsIntake, activate: true } });
    expect(install.status).toBe(201);
    const agent = install.body.installed[2].id;
    const created = await call(api, 'POST', '/channels', { token, body: { id: 'web-f', kind: 'webhook', config: { secret, url: peer.url }, default_agent: agent } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await fleet?.close();
    await peer?.close();
  });

  it('runs the channel on one bridge and moves it to the other within seconds of a SIGKILL', async () => {
    await waitUntil(async () => (await call(api, 'GET', '/channels/web-f', { token })).body.status === 'Connected', {
      timeoutMs: 15_000,
      message: `the channel Connected\n${fleet.logs()}`,
    });
    expect(await send('m-1', 'before the kill')).toBe(202);
    await waitUntil(() => peer.received.length === 1, { timeoutMs: 15_000, message: `the first reply\n${fleet.logs()}` });

    const first = (await holder())!;
    const held = bridges.find((b) => first.includes(`:${b.child.pid}:`))!;
    const other = bridges.find((b) => b !== held)!;
    expect(held).toBeDefined();
    await held.kill();
    const killedAt = Date.now();
    expect(await send('m-2', 'right after the kill')).toBe(202);

    await waitUntil(async () => ((await holder()) ?? '').includes(`:${other.child.pid}:`), { timeoutMs: 10_000, message: `the other bridge holding the channel\n${fleet.logs()}` });
    await waitUntil(() => peer.received.length === 2, { timeoutMs: 15_000, message: `the reply after the failover\n${fleet.logs()}` });
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(peer.received[1]!.body).toMatchObject({ channel_id: 'web-f', conversation: 'ops', in_reply_to: 'm-2' });
    expect(peer.verified(peer.received[1]!, secret)).toBe(true);
    expect((await call(api, 'GET', '/channels/web-f', { token })).body.status).toBe('Connected');
  });
});
