import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { Bus } from '@agent-platform/bus';
import {
  Errors,
  createTranscriptStore,
  systemClock,
  workflowRuns,
  type WorkflowRunRecord,
} from '@agent-platform/domain';
import { newWebhookSecret } from '@agent-platform/net';
import { createLogger } from '@agent-platform/observability';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import type { Collection, CollectionOptions, Doc, Store } from '@agent-platform/store';
import { waitUntil } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChannelBridge } from './channel-bridge.ts';
import { createChannelKinds } from './channel-kinds.ts';
import { channelCollections } from './channel-record.ts';
import type { ChannelRouterDeps } from './channel-router.ts';
import { createChannelRouterService } from './channel-router-service.ts';
import { createChannelService, deliverInbound } from './channel-service.ts';
import { webhookKind } from './kinds/webhook-kind.ts';
import { startWebhookPeer, type WebhookPeer } from './testing/webhook-peer.ts';

// Delivery guarantees of channel replies (docs/channels.md "Delivery guarantees"), each at the
// crash point that decides it, through the real router, bridge, webhook kind and a webhook peer.
// The bus forgets a published id after its duplicate window (NATS: 2 minutes; here 50 ms, while
// the router redelivers after 500 ms), as a redelivery after the router's 5-minute ack wait does.
const DEDUP_WINDOW_MS = 50;
const { logger } = createLogger({ level: 'silent', bufferLines: 10, destination: 'silent' });

let dir: string;
let store: Store;
let bus: Bus;
let peer: WebhookPeer;
let stops: Array<() => Promise<void>>;
const secret = newWebhookSecret();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-delivery-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  bus = createEmbeddedBus({ dedupWindowMs: DEDUP_WINDOW_MS });
  peer = await startWebhookPeer();
  stops = [];
});
afterEach(async () => {
  for (const stop of stops.reverse()) await stop();
  await peer.close();
  await bus.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * A store whose next write to `channel_messages` fails once armed, retryably (the store is briefly
 * unreachable): the bus redelivers the message later, as it does when the worker died right there.
 */
function crashingStore(inner: Store): { store: Store; arm(): void } {
  let armed = false;
  const bound = <T extends object>(target: T, override: (key: string | symbol) => unknown): T =>
    new Proxy(target, {
      get: (t, key) => {
        const own = override(key);
        if (own !== undefined) return own;
        const value: unknown = Reflect.get(t, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(t) : value;
      },
    });
  const store = bound(inner, (key) =>
    key !== 'collection'
      ? undefined
      : <T extends Doc>(name: string, options?: CollectionOptions<T>): Collection<T> => {
          const collection = inner.collection<T>(name, options);
          if (name !== 'channel_messages') return collection;
          return bound(collection, (k) =>
            k !== 'update'
              ? undefined
              : async (...args: Parameters<Collection<T>['update']>) => {
                  if (armed) {
                    armed = false;
                    throw Errors.unavailable('the store (test: the worker died here)');
                  }
                  return collection.update(...args);
                },
          );
        },
  );
  return { store, arm: () => (armed = true) };
}

async function platform(options: { routerStore?: Store; startRun?: ChannelRouterDeps['startRun'] } = {}) {
  const kinds = createChannelKinds([webhookKind]);
  const service = createChannelService({
    store,
    bus,
    clock: systemClock,
    kinds,
    vaultKey: randomBytes(32),
    agentExists: async () => true,
    workflowExists: async () => true,
  });
  const bridge = createChannelBridge({
    store,
    bus,
    clock: systemClock,
    logger,
    kinds,
    openConfig: (record) => service.openConfig(record),
    bridgeId: `b:${process.pid}:x`,
    fetch,
    allowPrivateTargets: () => true,
    leaseTtlMs: 800,
  });
  const router = createChannelRouterService({
    store: options.routerStore ?? store,
    bus,
    clock: systemClock,
    logger,
    // The agent stands in for the invocation service, which answers a repeated key with its recorded reply.
    invocation: {
      execute: async (request) => ({ result: { content: `answer to ${request.message}` } }) as never,
    },
    startRun: options.startRun ?? (async () => Promise.reject(new Error('no run expected'))),
    transcripts: createTranscriptStore(store, systemClock),
    replySweepMs: 100,
    replyGraceMs: 0,
  });
  await bridge.start();
  await router.start();
  stops.push(
    () => bridge.stop(),
    () => router.stop(),
  );
  return service;
}

const inbound = (channel: string, id: string, text: string) =>
  deliverInbound(
    bus,
    { id: channel, kind: 'webhook' },
    { peer_message_id: id, conversation: 'c', thread: null, sender: 's', text, meta: {} },
    new Date(),
  );

describe('channel reply delivery guarantees', () => {
  it('(a) a message redelivered after the duplicate window (the worker died after publishing the reply, before recording it) is answered once', async () => {
    const crash = crashingStore(store);
    const service = await platform({ routerStore: crash.store });
    await service.create({
      id: 'web',
      kind: 'webhook',
      config: { secret, url: peer.url },
      default_agent: randomUUID(),
    });
    await waitUntil(async () => (await service.get('web')).status === 'Connected', {
      timeoutMs: 5_000,
      message: 'web Connected',
    });
    // The first write after the reply went out (`answered`) fails, so the bus redelivers the message.
    crash.arm();
    const rows = channelCollections(store).messages;
    await inbound('web', 'm-1', 'hello');
    await waitUntil(async () => (await rows.get('web:m-1'))?.doc.state === 'answered', {
      timeoutMs: 5_000,
      message: 'the message answered on redelivery',
    });
    await waitUntil(() => peer.received.length >= 1, { timeoutMs: 5_000, message: 'the reply' });
    // Long enough for a second reply to arrive (a send takes milliseconds here).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(peer.received.map((r) => r.body['text'])).toEqual(['answer to hello']);
  });

  it('(b) a run finalized by a process that died before publishing the reply still answers the conversation', async () => {
    const runId = randomUUID();
    // The run ends and is finalized at once, and its `onRunEnded` hook never runs (that process died).
    const startRun: ChannelRouterDeps['startRun'] = async (_workflow, request) => {
      const at = new Date().toISOString();
      const run = {
        id: runId,
        workflow_id: 'wf',
        workflow_name: 'intake',
        input: request.input,
        state: 'Completed',
        output: `run output for ${request.input}`,
        error: null,
        finalized: true,
        origin: request.origin,
        started_at: at,
        completed_at: at,
        updated_at: at,
      };
      await workflowRuns(store).insert(run as unknown as WorkflowRunRecord);
      return { run: { id: runId } };
    };
    const service = await platform({ startRun });
    await service.create({
      id: 'web',
      kind: 'webhook',
      config: { secret, url: peer.url },
      default_workflow: 'wf',
    });
    await waitUntil(async () => (await service.get('web')).status === 'Connected', {
      timeoutMs: 5_000,
      message: 'web Connected',
    });
    await inbound('web', 'w-1', 'claim 42');
    await waitUntil(() => peer.received.length >= 1, {
      timeoutMs: 5_000,
      message: 'the run output at the peer',
    });
    expect(peer.received[0]!.body).toMatchObject({
      channel_id: 'web',
      conversation: 'c',
      in_reply_to: 'w-1',
      text: 'run output for claim 42',
    });
    await waitUntil(
      async () => (await channelCollections(store).messages.get('web:w-1'))?.doc.state === 'answered',
      { timeoutMs: 5_000, message: 'the message recorded answered' },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(peer.received).toHaveLength(1);
  });
});
