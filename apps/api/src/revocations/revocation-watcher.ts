import { Subjects, type PlatformConfig, type Revocation } from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';
import type { RevocationService } from '@agent-platform/domain';
import type { Logger } from '@agent-platform/observability';
import { parseTrustedKey, verifyRevocationFeed, type HttpRegistryClient, type TrustedKey } from '@agent-platform/registry-core';

export interface RevocationWatcherDeps {
  revocations: Pick<RevocationService, 'apply' | 'cursor' | 'advance'>;
  bus: Pick<Bus, 'listen'>;
  logger: Logger;
  /** `[catalog]` of the running config, read per poll (interval and keys follow reloads). */
  settings: () => PlatformConfig['catalog'];
  /**
   * The platform's registry client for the current `[catalog]` (compose-registry.ts: its URL,
   * bearer and timeout), read per poll; null while `registry_url` is empty.
   */
  registry: () => Pick<HttpRegistryClient, 'url' | 'revocations'> | null;
}

export interface RevocationWatcher {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Polls now, after whatever this watcher is doing; resolves when that poll is done. Nothing when not watching. */
  pollNow(): Promise<void>;
}

/** Pages read in one poll at most, when the registry answers part of the feed at a time. */
const MAX_PAGES = 100;

/**
 * How a platform learns of security yanks (docs/catalog.md "Revocations"). Every
 * `[catalog] revocation_poll_secs` it reads `GET <registry_url>/revocations?since=<cursor>`, and it
 * listens on `registry.revocations` for the same feed pushed by a registry sharing its bus. A feed
 * is trusted only when a key of `[catalog] trusted_keys` verifies it; an unverifiable one is
 * logged and ignored. Entries past the cursor are applied in seq order (idempotent and claimed in
 * the store, so every api node of a fleet may run a watcher), then the cursor moves, per key id,
 * in the store: a restart reads on from there. A pushed feed moves the cursor only when it starts
 * at or before it; otherwise its entries are applied and a poll fills the gap at once.
 */
export function createRevocationWatcher(deps: RevocationWatcherDeps): RevocationWatcher {
  const log = deps.logger.child({ service: 'revocations' });
  let timer: NodeJS.Timeout | null = null;
  let subscription: Subscription | null = null;
  let stopped = true;
  /** Aborted by stop(): a poll waiting on a slow registry does not hold the shutdown. */
  let halt = new AbortController();
  /** One feed at a time in this process: polls and pushes queue behind each other. */
  let chain: Promise<unknown> = Promise.resolve();
  let lastFailure: string | null = null;
  let keyCache: { text: string; keys: TrustedKey[] } | null = null;

  function trustedKeys(): TrustedKey[] {
    const configured = deps.settings().trusted_keys;
    const text = configured.join('\n');
    if (keyCache !== null && keyCache.text === text) return keyCache.keys;
    const keys: TrustedKey[] = [];
    for (const entry of configured) {
      try {
        keys.push(parseTrustedKey(entry));
      } catch (error) {
        log.error({ reason: (error as Error).message }, 'a [catalog] trusted_keys entry is not a usable key; it is ignored');
      }
    }
    keyCache = { text, keys };
    return keys;
  }

  function serial<T>(task: () => Promise<T>): Promise<T> {
    const run = chain.then(task, task);
    chain = run.catch(() => undefined);
    return run;
  }

  /** Applies the entries past the cursor in order; the seq up to which every entry is settled. */
  async function applyEntries(entries: readonly Revocation[], keyId: string, cursor: number): Promise<number> {
    let settled = cursor;
    for (const entry of [...entries].filter((r) => r.seq > cursor).sort((a, b) => a.seq - b.seq)) {
      const outcome = await deps.revocations.apply(entry, keyId);
      const context = { name: entry.name, version: entry.version, seq: entry.seq, key_id: keyId };
      if (outcome.status === 'in-progress') {
        // Another node holds it: the cursor stays before it, and the next poll looks again.
        log.info(context, 'revocation is being applied by another node');
        return settled;
      }
      if (outcome.status === 'applied') {
        log.warn(
          { ...context, reason: entry.reason, installed: outcome.installed, agents_suspended: outcome.agents_suspended, workflows_drained: outcome.workflows_drained },
          outcome.installed ? 'package revoked by the registry: affected agents suspended, workflows drained' : 'package revocation recorded (that version is not installed)',
        );
      }
      settled = entry.seq;
    }
    return settled;
  }

  async function verified(jws: string, via: string): Promise<{ payload: { since: number; latest_seq: number; revocations: Revocation[] }; keyId: string } | null> {
    try {
      const { payload, key } = await verifyRevocationFeed(jws, trustedKeys());
      return { payload, keyId: key.key_id };
    } catch (error) {
      log.warn({ via, reason: (error as Error).message }, 'revocation feed ignored: it does not verify against [catalog] trusted_keys');
      return null;
    }
  }

  async function poll(): Promise<void> {
    const registry = deps.registry();
    if (registry === null) return;
    for (let page = 0; page < MAX_PAGES; page++) {
      const cursor = await deps.revocations.cursor(trustedKeys().map((k) => k.key_id));
      const feed = await verified(await registry.revocations(cursor, { signal: halt.signal }), 'poll');
      if (feed === null) return;
      const settled = await applyEntries(feed.payload.revocations, feed.keyId, cursor);
      if (settled > cursor) await deps.revocations.advance(feed.keyId, settled);
      // Read on while the registry says there is more than it sent (a paged answer).
      if (settled <= cursor || settled >= feed.payload.latest_seq) return;
    }
  }

  async function pollLogged(): Promise<void> {
    try {
      await poll();
      if (lastFailure !== null) log.info('revocation feed reachable again');
      lastFailure = null;
    } catch (error) {
      if (stopped) return;
      const message = (error as Error).message;
      // One warning per distinct failure, not one every interval while the registry is down.
      if (message !== lastFailure) log.warn({ reason: message }, 'revocation feed poll failed; retrying at the next interval');
      lastFailure = message;
    }
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      void serial(pollLogged).finally(() => schedule(deps.settings().revocation_poll_secs * 1000));
    }, delayMs);
  }

  async function pushed(message: unknown): Promise<void> {
    const jws = feedOf(message);
    if (jws === null) {
      log.warn('a registry.revocations message without a feed was ignored');
      return;
    }
    const feed = await verified(jws, 'push');
    if (feed === null) return;
    const cursor = await deps.revocations.cursor(trustedKeys().map((k) => k.key_id));
    const settled = await applyEntries(feed.payload.revocations, feed.keyId, cursor);
    const contiguous = feed.payload.since <= cursor;
    if (contiguous && settled > cursor) await deps.revocations.advance(feed.keyId, settled);
    if (!contiguous || settled < feed.payload.latest_seq) schedule(0);
  }

  return {
    name: 'revocations',
    async start() {
      const registry = deps.registry();
      if (registry === null || trustedKeys().length === 0) {
        log.info(
          { registry_url: registry?.url ?? null, trusted_keys: trustedKeys().length },
          'revocations are not watched: [catalog] needs a registry_url and at least one trusted key',
        );
        return;
      }
      stopped = false;
      halt = new AbortController();
      subscription = await deps.bus.listen<unknown>(Subjects.registryRevocations, (message) => {
        void serial(() => pushed(message)).catch((error: unknown) => log.error({ err: error }, 'a pushed revocation feed could not be applied; the next poll retries'));
      });
      log.info({ registry_url: registry.url, poll_secs: deps.settings().revocation_poll_secs, subject: Subjects.registryRevocations }, 'watching the registry revocation feed');
      schedule(0);
    },
    async stop() {
      stopped = true;
      halt.abort();
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await subscription?.drain();
      subscription = null;
      await chain;
    },
    pollNow: () => (stopped ? Promise.resolve() : serial(pollLogged)),
  };
}

/** The JWS of a pushed `RevocationFeed` message (`{feed}`), or of a bare string; null otherwise. */
function feedOf(body: unknown): string | null {
  if (typeof body === 'string') return body;
  if (typeof body === 'object' && body !== null && typeof (body as { feed?: unknown }).feed === 'string') return (body as { feed: string }).feed;
  return null;
}
