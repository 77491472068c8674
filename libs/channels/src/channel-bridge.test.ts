import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Bus } from '@agent-platform/bus';
import { Streams, type ChannelOutbound } from '@agent-platform/contracts';
import { systemClock } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import type { Store } from '@agent-platform/store';
import { waitUntil } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChannelBridge, type ChannelBridge } from './channel-bridge.ts';
import { ChannelConfigError, type ChannelKind } from './channel-kind.ts';
import { createChannelKinds } from './channel-kinds.ts';
import { createChannelService, type ChannelService } from './channel-service.ts';
import { telegramKind } from './kinds/telegram-kind.ts';
import { startTelegramPeer } from './testing/telegram-peer.ts';

// The bridge runtime over embedded engines: one holder per channel, the adapter's reported
// status, a restart on PUT, a stop on disable and delete, a hand-over when a bridge stops, and
// replies reaching the holder's connection.
interface Probe {
  opened: string[];
  openedAt: number[];
  closed: number;
  sent: ChannelOutbound[];
}

function probeKind(probe: Probe): ChannelKind {
  return {
    kind: 'probe',
    fields: ['token'],
    secretFields: ['token'],
    destinationFields: [],
    check(config) {
      if (typeof config['token'] !== 'string') throw new ChannelConfigError('token', 'config.token is required');
    },
    async open(context) {
      probe.opened.push(String(context.config['token']));
      probe.openedAt.push(Date.now());
      context.setStatus(context.config['token'] === 'refused' ? { Error: 'the peer refused the credentials' } : 'Connected');
      return {
        send: async (message) => void probe.sent.push(message),
        close: async () => void (probe.closed += 1),
      };
    },
  };
}

let dir: string;
let store: Store;
let bus: Bus;
let service: ChannelService;
let probe: Probe;
let bridges: ChannelBridge[];
const kinds = () => createChannelKinds([probeKind(probe), telegramKind]);
const key = randomBytes(32);
const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });

function bridge(name: string, options: { reconnectBackoffMs?: number; reconnectMaxBackoffMs?: number } = {}): ChannelBridge {
  const created = createChannelBridge({
    store,
    bus,
    clock: systemClock,
    logger,
    kinds: kinds(),
    openConfig: (record) => service.openConfig(record),
    bridgeId: `${name}:${process.pid}:x`,
    fetch: fetch,
    allowPrivateTargets: () => true,
    leaseTtlMs: 800,
    ...options,
  });
  bridges.push(created);
  return created;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-bridge-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  bus = createEmbeddedBus();
  probe = { opened: [], openedAt: [], closed: 0, sent: [] };
  bridges = [];
  service = createChannelService({ store, bus, clock: systemClock, kinds: kinds(), vaultKey: key, agentExists: async () => true, workflowExists: async () => true });
});
afterEach(async () => {
  for (const b of bridges) await b.stop();
  await bus.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const statusOf = async (id: string) => (await service.get(id)).status;

describe('the channel bridge', () => {
  it('runs each channel on one bridge, shows the adapter status, restarts on PUT, stops on disable and delete', async () => {
    const [a, b] = [bridge('a'), bridge('b')];
    await Promise.all([a.start(), b.start()]);
    expect(await statusOf((await service.create({ id: 'p1', kind: 'probe', config: { token: 'refused' } })).id)).not.toBe('Disabled');
    await waitUntil(async () => JSON.stringify(await statusOf('p1')) === JSON.stringify({ Error: 'the peer refused the credentials' }), { timeoutMs: 5_000, message: 'the Error status' });
    expect(a.held().length + b.held().length).toBe(1);
    expect(probe.opened).toEqual(['refused']);

    await service.update('p1', { config: { token: 'good' } });
    await waitUntil(async () => (await statusOf('p1')) === 'Connected', { timeoutMs: 5_000, message: 'Connected after PUT' });
    expect(probe.opened).toEqual(['refused', 'good']);
    expect(probe.closed).toBe(1);

    await service.setEnabled('p1', false);
    await waitUntil(() => probe.closed === 2, { timeoutMs: 5_000, message: 'the adapter stopped on disable' });
    expect(await statusOf('p1')).toBe('Disabled');
    expect(a.held().length + b.held().length).toBe(0);
    await service.setEnabled('p1', true);
    await waitUntil(async () => (await statusOf('p1')) === 'Connected', { timeoutMs: 5_000, message: 'Connected after enable' });
    await service.remove('p1');
    await waitUntil(() => probe.closed === 3, { timeoutMs: 5_000, message: 'the adapter stopped on delete' });
    expect(probe.opened).toHaveLength(3);
  });

  it('hands a channel over when its bridge stops, and replies reach whichever bridge holds it', async () => {
    const [a, b] = [bridge('a'), bridge('b')];
    await a.start();
    await service.create({ id: 'p2', kind: 'probe', config: { token: 't' } });
    await waitUntil(() => a.held().includes('p2'), { timeoutMs: 5_000, message: 'a holding p2' });
    await b.start();
    const reply = (text: string): Promise<unknown> =>
      bus.publish<ChannelOutbound>(Streams.channelOutbound, {
        id: `r-${text}`,
        correlation_id: 'c',
        attempt: 1,
        occurred_at: new Date().toISOString(),
        data: { channel_id: 'p2', conversation: 'c', thread: null, text, in_reply_to: null, meta: {} },
      });
    await reply('one');
    await waitUntil(() => probe.sent.length === 1, { timeoutMs: 5_000, message: 'the first reply sent' });
    expect(b.held()).toEqual([]);
    await a.stop();
    await waitUntil(() => b.held().includes('p2'), { timeoutMs: 5_000, message: 'b taking p2 over' });
    await reply('two');
    await waitUntil(() => probe.sent.length === 2, { timeoutMs: 5_000, message: 'the reply through b' });
    expect(probe.sent.map((m) => m.text)).toEqual(['one', 'two']);
    expect(await statusOf('p2')).toBe('Connected');
  });

  it('reopens a channel whose adapter reported an Error, with backoff, until the peer is back: Connected without any API call', async () => {
    const peer = await startTelegramPeer();
    try {
      peer.setOutage(true);
      const a = bridge('a', { reconnectBackoffMs: 200 });
      await a.start();
      await service.create({ id: 'tg', kind: 'telegram', config: { bot_token: peer.botToken, api_base_url: peer.apiBaseUrl, poll_timeout_secs: 1 } });
      await waitUntil(async () => typeof (await statusOf('tg')) === 'object', { timeoutMs: 5_000, message: 'the Error status during the outage' });
      expect(await statusOf('tg')).toEqual({ Error: expect.stringMatching(/getMe: HTTP 502/) });
      // Still down after a few reopenings: still Error, still held here.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await statusOf('tg')).toEqual({ Error: expect.stringMatching(/getMe: HTTP 502/) });
      expect(a.held()).toEqual(['tg']);

      peer.setOutage(false);
      await waitUntil(async () => (await statusOf('tg')) === 'Connected', { timeoutMs: 5_000, message: 'Connected once the peer is back' });
      // The reopened adapter polls: a message from Telegram reaches the platform.
      const received: string[] = [];
      const sub = await bus.consume<{ text: string }>(Streams.channelInbound, { durable: 'bridge-test-inbound', maxDeliver: 1, backoffMs: [0] }, async (envelope) => void received.push(envelope.data.text));
      try {
        peer.injectMessage({ chat_id: 7, text: 'back again' });
        await waitUntil(() => received.includes('back again'), { timeoutMs: 5_000, message: 'the message through the reopened adapter' });
      } finally {
        await sub.drain();
      }
    } finally {
      await peer.close();
    }
  });

  it('waits longer between reopenings each time the adapter fails again, up to the cap', async () => {
    const a = bridge('a', { reconnectBackoffMs: 100, reconnectMaxBackoffMs: 400 });
    await a.start();
    await service.create({ id: 'p3', kind: 'probe', config: { token: 'refused' } });
    await waitUntil(() => probe.openedAt.length >= 6, { timeoutMs: 8_000, message: 'six openings of a refusing adapter' });
    const gaps = probe.openedAt.slice(1, 6).map((at, i) => at - probe.openedAt[i]!);
    // 100, 200, 400, then capped at 400 (the bridge looks every 200 ms here, so a gap may be longer).
    [100, 200, 400, 400, 400].forEach((least, i) => expect(gaps[i], `gap ${i + 1} of ${JSON.stringify(gaps)}`).toBeGreaterThanOrEqual(least - 20));
    expect(Math.max(...gaps)).toBeLessThan(1_000);
    expect(probe.closed).toBe(5);
  });
});
