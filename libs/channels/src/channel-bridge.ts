import { Durables, Streams, Subjects, type ChannelOutbound, type Envelope } from '@agent-platform/contracts';
import { BusError, type Bus, type Subscription } from '@agent-platform/bus';
import { Errors, type Clock } from '@agent-platform/domain';
import type { FetchLike } from '@agent-platform/net';
import { inSpan, type Logger } from '@agent-platform/observability';
import { StoreDuplicateError, type Store } from '@agent-platform/store';
import type { ChannelConfig, ChannelConnection, ChannelStatus } from './channel-kind.ts';
import type { ChannelKinds } from './channel-kinds.ts';
import { CHANNEL_RECORD_TTL_MS, channelCollections, type ChannelLease, type ChannelRecord } from './channel-record.ts';
import { deliverInbound, type ChannelChangedMessage } from './channel-service.ts';

export interface ChannelBridgeDeps {
  store: Store;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  kinds: ChannelKinds;
  /** The stored config in plaintext (secrets opened with the vault key: `channelConfigOpener`). */
  openConfig: (record: ChannelRecord) => ChannelConfig;
  /** This process's name in the lease rows (unique per bridge process). */
  bridgeId: string;
  /** guardedFetch over `[network] allow_private_targets` (DECISIONS D9). */
  fetch: FetchLike;
  allowPrivateTargets: () => boolean;
  /** Lease time to live; a dead bridge's channels move after at most this (default 5 s). */
  leaseTtlMs?: number;
  /** How often leases are renewed and free channels looked for (default ttl / 4). */
  tickMs?: number;
  /**
   * Wait before reopening an adapter that failed to open or whose last reported status is an
   * `{Error}` (default 5 s); doubles on each failure in a row up to `reconnectMaxBackoffMs`
   * (default 5 min); a `Connected` report starts it over.
   */
  reconnectBackoffMs?: number;
  reconnectMaxBackoffMs?: number;
  /** Told of each reply this bridge sent to a peer, or failed to (the metrics count them). */
  onSent?: (kind: string, outcome: 'sent' | 'failed') => void;
}

export interface ChannelBridge {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Channel ids whose adapter runs here (tests, logs). */
  held(): string[];
}

interface Held {
  fence: number;
  revision: number;
  connection: ChannelConnection | null;
  serving: Subscription | null;
  /** Bumped on every open: a status reported by an adapter that was since closed is ignored. */
  generation: number;
  /** The last status the current adapter reported (null: none yet). */
  status: ChannelStatus | null;
  /** When to reopen the adapter: it failed to open, or its last reported status is an Error. */
  retryAt: number;
  /** Failures in a row (failed opens and Error reports without a Connected between): the backoff. */
  failures: number;
}

const SEND_TIMEOUT_MS = 15_000;

const isError = (status: ChannelStatus | null): status is { Error: string } => status !== null && typeof status === 'object';

/**
 * The bridge runtime (docs/channels.md "Fleet"). Any number of bridges share the store: each
 * enabled channel runs on exactly one of them, the holder of its lease (`channel_leases`, short
 * TTL, renewed every tick with a fencing check, so a bridge that stalled past its lease cannot
 * take it back). A bridge that dies stops renewing; another takes the lease after the TTL and
 * opens the adapter. A change notification (`channels.changed`) makes the holder restart or stop
 * at once and the others look for work. Replies (`channel.outbound`, durable `channel-senders`,
 * shared by every bridge) are passed to the holder over `channels.send.<id>`; no holder right now
 * is retried with backoff.
 */
export function createChannelBridge(deps: ChannelBridgeDeps): ChannelBridge {
  const { channels, leases, replies } = channelCollections(deps.store);
  const ttl = deps.leaseTtlMs ?? 5_000;
  const tickMs = deps.tickMs ?? Math.max(200, Math.floor(ttl / 4));
  const backoffMs = deps.reconnectBackoffMs ?? 5_000;
  const maxBackoffMs = Math.max(backoffMs, deps.reconnectMaxBackoffMs ?? 300_000);
  const log = deps.logger.child({ service: 'channel-bridge', bridge_id: deps.bridgeId });
  const held = new Map<string, Held>();
  const subscriptions: Subscription[] = [];
  let timer: NodeJS.Timeout | null = null;
  let stopped = true;
  let chain: Promise<void> = Promise.resolve();

  const nowMs = (): number => deps.clock.now().getTime();
  const expiry = (): string => new Date(nowMs() + ttl).toISOString();

  /** Serializes reconciliations so one channel is never opened twice here. */
  const serial = (work: () => Promise<void>): Promise<void> => {
    chain = chain.then(work).catch((err: unknown) => log.warn({ err }, 'channel reconciliation failed; retried on the next tick'));
    return chain;
  };

  const closeAdapter = async (id: string, entry: Held): Promise<void> => {
    const { serving, connection } = entry;
    entry.generation += 1; // what the closing adapter reports from now on is ignored
    entry.serving = null;
    entry.connection = null;
    await serving?.drain().catch(() => undefined);
    await connection?.close().catch((err: unknown) => log.warn({ err, channel_id: id }, 'closing a channel adapter failed'));
  };

  const release = async (id: string, entry: Held, reason: string): Promise<void> => {
    held.delete(id);
    await closeAdapter(id, entry);
    // Hand the lease back at once (the next bridge need not wait for the TTL), unless it moved on.
    const row = await leases.get(id).catch(() => null);
    if (row !== null && row.doc.holder === deps.bridgeId && row.doc.fence === entry.fence) await leases.delete(id, row.version).catch(() => undefined);
    log.info({ channel_id: id, reason }, 'channel adapter stopped here');
  };

  /** Schedules the next open after one more failure in a row: backoff, doubling, capped. */
  const backOff = (entry: Held): number => {
    const wait = Math.min(maxBackoffMs, backoffMs * 2 ** Math.min(entry.failures, 30));
    entry.failures += 1;
    entry.retryAt = nowMs() + wait;
    return wait;
  };

  /**
   * An adapter's report: recorded in the lease row (what GET /channels shows) and remembered here,
   * so that an adapter stuck in `{Error}` (peer down, credentials refused) is closed and reopened
   * with backoff (docs/channels.md "Status"), without anyone PUTting the channel.
   */
  const report = (id: string, entry: Held, generation: number, status: ChannelStatus): void => {
    if (status === 'Disabled' || status === 'NotConfigured') return;
    if (held.get(id) !== entry || entry.generation !== generation) return;
    const wasError = isError(entry.status);
    entry.status = status;
    if (typeof status === 'object') {
      if (!wasError) {
        const wait = backOff(entry);
        log.warn({ channel_id: id, error: status.Error, reopen_in_ms: wait }, 'channel adapter reported an error; reopened after a backoff unless it recovers');
      }
    } else {
      entry.failures = 0;
      entry.retryAt = 0;
    }
    setStatus(id, entry.fence, status);
  };

  const setStatus = (id: string, fence: number, status: ChannelStatus): void => {
    if (status === 'Disabled' || status === 'NotConfigured') return;
    leases
      .update(id, (row) => (row === null || row.doc.holder !== deps.bridgeId || row.doc.fence !== fence ? null : { ...row.doc, status }))
      .catch((err: unknown) => log.warn({ err, channel_id: id }, 'could not record a channel status'));
  };

  const openAdapter = async (record: ChannelRecord, entry: Held): Promise<void> => {
    const kind = deps.kinds.get(record.kind);
    entry.generation += 1;
    entry.status = null;
    if (kind === undefined) {
      setStatus(record.id, entry.fence, { Error: `this bridge has no channel kind '${record.kind}'` });
      backOff(entry);
      return;
    }
    const generation = entry.generation;
    try {
      const connection = await kind.open({
        channelId: record.id,
        config: deps.openConfig(record),
        deliver: (message) => deliverInbound(deps.bus, record, message, deps.clock.now()),
        setStatus: (status) => report(record.id, entry, generation, status),
        fetch: deps.fetch,
        allowPrivateTargets: deps.allowPrivateTargets(),
        logger: log.child({ channel_id: record.id, kind: record.kind }),
      });
      entry.connection = connection;
      entry.serving = await deps.bus.serve<ChannelOutbound, { sent: true }>(Subjects.channelSend(record.id), (message) =>
        // The reply's span (docs/observability.md): its kind and channel, never its text or peer.
        inSpan('channel.send', { role: 'client', attributes: { 'channel.kind': record.kind, 'channel.id': record.id } }, async () => {
          try {
            await connection.send(message);
          } catch (error) {
            deps.onSent?.(record.kind, 'failed');
            throw error;
          }
          deps.onSent?.(record.kind, 'sent');
          return { sent: true } as const;
        }),
      );
      log.info({ channel_id: record.id, kind: record.kind, revision: record.revision, pid: process.pid }, 'channel adapter running here');
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      setStatus(record.id, entry.fence, { Error: message.slice(0, 300) });
      // One failure, even when the adapter reported an Error before throwing.
      if (!isError(entry.status)) backOff(entry);
      entry.status = { Error: message.slice(0, 300) };
      const wait = entry.retryAt - nowMs();
      log.warn({ channel_id: record.id, kind: record.kind, error: message, reopen_in_ms: wait }, 'channel adapter failed to open; retried later');
    }
  };

  /** Takes the lease when it is free or expired; returns the new fence, or null. */
  const acquire = async (record: ChannelRecord): Promise<number | null> => {
    const at = new Date(nowMs()).toISOString();
    const stored = await leases.update(record.id, (row) => {
      if (row !== null && row.doc.holder !== deps.bridgeId && row.doc.expires_at > at) return null;
      const lease: ChannelLease = { id: record.id, holder: deps.bridgeId, fence: (row?.doc.fence ?? 0) + 1, expires_at: expiry(), status: null, revision: record.revision };
      return lease;
    });
    return stored !== null && stored.doc.holder === deps.bridgeId && stored.doc.expires_at > at ? stored.doc.fence : null;
  };

  const renew = async (id: string, entry: Held, revision: number): Promise<boolean> => {
    const stored = await leases.update(id, (row) =>
      row === null || row.doc.holder !== deps.bridgeId || row.doc.fence !== entry.fence ? null : { ...row.doc, expires_at: expiry(), revision },
    );
    return stored !== null && stored.doc.holder === deps.bridgeId && stored.doc.fence === entry.fence;
  };

  const reconcileOne = async (id: string, record: ChannelRecord | null): Promise<void> => {
    if (stopped) return;
    const entry = held.get(id);
    const wanted = record !== null && record.enabled;
    if (entry !== undefined) {
      if (!wanted) return release(id, entry, record === null ? 'deleted' : 'disabled');
      if (!(await renew(id, entry, record.revision))) return release(id, entry, 'lease lost');
      if (entry.revision !== record.revision) {
        await closeAdapter(id, entry);
        entry.revision = record.revision;
        entry.failures = 0;
        entry.retryAt = 0;
        await leases.update(id, (row) => (row === null || row.doc.fence !== entry.fence ? null : { ...row.doc, status: null }));
        await openAdapter(record, entry);
      } else if (entry.connection === null && nowMs() >= entry.retryAt) await openAdapter(record, entry);
      else if (entry.connection !== null && isError(entry.status) && nowMs() >= entry.retryAt) {
        // Stuck in {Error}: start the adapter over (its Error stays shown until it reports again).
        log.info({ channel_id: id, failures: entry.failures }, 'reopening a channel adapter that reported an error');
        await closeAdapter(id, entry);
        await openAdapter(record, entry);
      }
      return;
    }
    if (!wanted) return;
    const fence = await acquire(record);
    if (fence === null) return;
    const fresh: Held = { fence, revision: record.revision, connection: null, serving: null, generation: 0, status: null, retryAt: 0, failures: 0 };
    held.set(id, fresh);
    await openAdapter(record, fresh);
  };

  const tick = (): Promise<void> =>
    serial(async () => {
      const rows = await channels.find();
      const byId = new Map(rows.map(({ doc }) => [doc.id, doc]));
      for (const id of [...held.keys()]) if (!byId.has(id)) await reconcileOne(id, null);
      for (const record of byId.values()) await reconcileOne(record.id, record);
    });

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void tick().finally(schedule);
    }, tickMs);
    timer.unref();
  };

  /**
   * Sends one reply through the holder, once per envelope id: the bus drops a re-publish only
   * within its duplicate window (2 minutes), so a reply published again later (the router's
   * redelivery after its 5-minute ack wait, the reply sweep of an ended run) is recognised by its
   * `channel_replies` row. A crash between the peer's answer and that row can still send it twice:
   * at least once, never silently lost (docs/channels.md "Delivery guarantees").
   */
  const forward = async (envelope: Envelope<ChannelOutbound>): Promise<void> => {
    const message = envelope.data;
    if ((await replies.get(envelope.id)) !== null) {
      log.info({ channel_id: message.channel_id, message_id: envelope.id }, 'a reply already sent was published again; not sent twice');
      return;
    }
    const record = (await channels.get(message.channel_id))?.doc;
    if (record === undefined || !record.enabled) {
      log.warn({ channel_id: message.channel_id }, 'a reply for a deleted or disabled channel was dropped');
      return;
    }
    try {
      await deps.bus.request(Subjects.channelSend(message.channel_id), message, { timeoutMs: SEND_TIMEOUT_MS });
    } catch (error) {
      // No holder right now (failover in progress), a slow or refusing peer: all worth a retry.
      const reason = error instanceof BusError ? `${error.code}: ${error.remote?.message ?? error.message}` : String(error);
      throw Errors.unavailable(`channel '${message.channel_id}' (${reason})`);
    }
    const at = deps.clock.now();
    // Sent: failing to record it must not send it again now, only leaves a later re-publish unguarded.
    await replies
      .insert({ id: envelope.id, channel_id: message.channel_id, sent_at: at.toISOString(), expires_at: new Date(at.getTime() + CHANNEL_RECORD_TTL_MS).toISOString() })
      .catch((err: unknown) => {
        if (!(err instanceof StoreDuplicateError)) log.warn({ err, message_id: envelope.id }, 'could not record a sent reply');
      });
  };

  return {
    held: () => [...held.keys()],
    async start() {
      stopped = false;
      subscriptions.push(
        await deps.bus.listen<ChannelChangedMessage>(Subjects.channelChanged, (message) => {
          void serial(async () => reconcileOne(message.channel_id, (await channels.get(message.channel_id))?.doc ?? null));
        }),
        await deps.bus.consume<ChannelOutbound>(
          Streams.channelOutbound,
          {
            durable: Durables.channelSenders,
            maxDeliver: 30,
            backoffMs: [500, 1_000, 2_000, 5_000],
            ackWaitMs: 60_000,
            concurrency: 8,
            onDeadLetter: (envelope, error) => log.error({ err: error, message_id: envelope.id }, 'a channel reply was dead-lettered after its last attempt'),
          },
          forward,
        ),
      );
      await tick();
      schedule();
      log.debug('channel bridge started');
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await Promise.all(subscriptions.splice(0).map((s) => s.drain()));
      await chain;
      for (const [id, entry] of [...held]) await release(id, entry, 'bridge stopping');
      log.debug('channel bridge stopped');
    },
  };
}
