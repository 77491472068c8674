import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus } from '@agent-platform/bus/embedded';
import type { ChannelInbound, Envelope } from '@agent-platform/contracts';
import { createTranscriptStore, systemClock } from '@agent-platform/domain';
import { createLogger } from '@agent-platform/observability';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import type { Store } from '@agent-platform/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { channelCollections } from './channel-record.ts';
import { inboundHandler } from './channel-router.ts';

// The router's bookkeeping (docs/channels.md "Routing"): a message for a channel with no default
// is recorded and dropped with a warning, and the received hook runs once per message however
// often the bus delivers it. Answers by agents and workflows: apps/platform/src/channels.
let dir: string;
let store: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-router-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const envelope = (channel: string, peer: string): Envelope<ChannelInbound> => ({
  id: `${channel}:${peer}`,
  correlation_id: 'c',
  attempt: 1,
  occurred_at: new Date().toISOString(),
  data: { channel_id: channel, kind: 'webhook', peer_message_id: peer, conversation: 'c', thread: null, sender: 's', text: 'hi', received_at: new Date().toISOString(), meta: {} },
});

describe('the channel router', () => {
  it('records and drops a message for a channel with neither default (warned), calling the received hook once', async () => {
    const { logger, buffer } = createLogger({ level: 'info', bufferLines: 100, destination: 'silent' });
    const bus = createEmbeddedBus();
    const received: string[] = [];
    const at = new Date().toISOString();
    await channelCollections(store).channels.insert({ id: 'bare', kind: 'webhook', enabled: true, default_agent: null, default_workflow: null, config: {}, revision: 1, created_at: at, updated_at: at });
    const handle = inboundHandler({
      store,
      bus,
      clock: systemClock,
      logger,
      invocation: { execute: async () => Promise.reject(new Error('no agent should be invoked')) },
      startRun: async () => Promise.reject(new Error('no run should start')),
      transcripts: createTranscriptStore(store, systemClock),
      onReceived: (inbound) => void received.push(inbound.peer_message_id),
    });
    await handle(envelope('bare', 'p-1'));
    await handle(envelope('bare', 'p-1'));
    await handle(envelope('gone', 'p-2'));
    expect(received).toEqual(['p-1', 'p-2']);
    const rows = (await channelCollections(store).messages.find()).map(({ doc }) => [doc.id, doc.state, doc.detail]);
    expect(rows.sort()).toEqual([
      ['bare:p-1', 'dropped', 'no default_agent or default_workflow'],
      ['gone:p-2', 'dropped', 'channel deleted'],
    ]);
    expect(buffer.lines().join('\n')).toContain('neither default_agent nor default_workflow');
    await bus.close();
  });
});
