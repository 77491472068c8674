import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvocationOutcome } from '@agent-platform/contracts';
import type { Collection, Doc, Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Errors } from '../errors/errors.ts';
import { fixedClock } from '../time/clock.ts';
import { waitUntil } from '@agent-platform/testkit';
import {
  createIdempotencyKeys,
  IDEMPOTENCY_COLLECTION,
  idempotencyRecordId,
  requestHash,
  type IdempotencyClaimRequest,
  type IdempotencyKeys,
  type IdempotencyRecord,
} from './idempotency.ts';

let dir: string;
let store: Store;
let keys: IdempotencyKeys;
const clock = fixedClock('2026-11-10T12:00:00.000Z');

const result = (content: string): InvocationOutcome => ({
  content,
  tokens_used: 2,
  duration_ms: 1,
  correlation_id: 'c1',
  source: 'Api',
  tool_calls: [],
  usage: { input_tokens: 1, output_tokens: 1 },
});

const HASH = requestHash({ message: 'm', source: 'Api' });
const req = (agentId: string, key: string, extra: Partial<IdempotencyClaimRequest> = {}): IdempotencyClaimRequest => ({
  agentId,
  scope: 'caller-1',
  key,
  requestHash: HASH,
  ...extra,
});

/** The store with every collection write counted: waiting must not write. */
function countingWrites(inner: Store): { store: Store; writes: () => number } {
  let writes = 0;
  const count = <T extends Doc>(c: Collection<T>): Collection<T> => ({
    ...c,
    get: (id) => c.get(id),
    find: (q) => c.find(q),
    count: (w) => c.count(w),
    insert: (doc) => (writes++, c.insert(doc)),
    replace: (doc, v) => (writes++, c.replace(doc, v)),
    upsert: (doc) => (writes++, c.upsert(doc)),
    update: (id, change) => (writes++, c.update(id, change)),
    delete: (id, v) => (writes++, c.delete(id, v)),
  });
  return {
    store: { ...inner, collection: (name, options) => count(inner.collection(name, options)), counters: inner.counters, close: () => inner.close(), health: () => inner.health(), log: (n, o) => inner.log(n, o) },
    writes: () => writes,
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-idem-'));
  clock.set('2026-11-10T12:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'p.db'), clock: clock.now });
  keys = createIdempotencyKeys({ store, clock, ttlHours: () => 24, pendingLeaseMs: () => 60_000, recheckMs: 5 });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** What a killed owner leaves: its pending claim, no longer renewed, with the journal it wrote. */
async function deadOwner(key: string, journal: IdempotencyRecord['tool_calls'], leaseUntil: string): Promise<string> {
  const id = idempotencyRecordId('agent-a', 'caller-1', key);
  await store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' }).insert({
    id, agent_id: 'agent-a', scope: 'caller-1', key, request_hash: HASH, state: 'pending', token: 'the-dead-owner', result: null,
    created_at: clock.now().toISOString(), lease_until: leaseUntil, expires_at: '2026-11-11T12:00:00.000Z', ...(journal === undefined ? {} : { tool_calls: journal }),
  });
  return id;
}

const entry = (position: number, state: 'answered' | 'started', result?: string) => ({
  position, idempotency_key: `k:${position}`, tool: 'open_claim', provider_id: 'claims', native_tool: 'create_claim', args_hash: 'sha256:1',
  state, idempotent_keys: false, replays: 0, at: '2026-11-10T12:00:00.000Z', worker: 'w-dead', ...(result === undefined ? {} : { result }),
});

describe('idempotency keys', () => {
  it('gives one owner among concurrent claims; the others get its result once it completes', async () => {
    const claims = Array.from({ length: 20 }, () => keys.claim(req('agent-a', 'k1'), { waitMs: 5_000 }));
    const first = await Promise.race(claims);
    expect(first.kind).toBe('owner');
    if (first.kind === 'owner') await first.complete(result('hello'));
    const all = await Promise.all(claims);
    expect(all.filter((c) => c.kind === 'owner')).toHaveLength(1);
    expect(all.filter((c) => c.kind === 'duplicate').map((c) => (c.kind === 'duplicate' ? c.result.content : ''))).toEqual(Array(19).fill('hello'));
  });

  it('scopes keys per agent and per caller', async () => {
    const a = await keys.claim(req('agent-a', 'k1'), { waitMs: 100 });
    const b = await keys.claim(req('agent-b', 'k1'), { waitMs: 100 });
    const other = await keys.claim(req('agent-a', 'k1', { scope: 'caller-2' }), { waitMs: 100 });
    // A scope and a key containing the separator do not collide with another split of the same text.
    const x = await keys.claim(req('agent-a', 'b:c', { scope: 'a' }), { waitMs: 100 });
    const y = await keys.claim(req('agent-a', 'c', { scope: 'a:b' }), { waitMs: 100 });
    expect([a.kind, b.kind, other.kind, x.kind, y.kind]).toEqual(['owner', 'owner', 'owner', 'owner', 'owner']);
  });

  it('refuses a key reused for a different request with Conflict, done or still pending', async () => {
    const owner = await keys.claim(req('agent-a', 'k1'), { waitMs: 100 });
    const other = req('agent-a', 'k1', { requestHash: requestHash({ message: 'another', source: 'Api' }) });
    await expect(keys.claim(other, { waitMs: 5_000 })).rejects.toMatchObject({ category: 'Conflict' });
    if (owner.kind === 'owner') await owner.complete(result('secret reply'));
    const refused = await keys.claim(other, { waitMs: 100 }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ category: 'Conflict', message: expect.stringContaining("'k1'") });
    expect(JSON.stringify(refused)).not.toContain('secret reply');
  });

  it('binds a key to message, source and workflow type, not to the correlation id', () => {
    const base = { message: 'm', source: { Channel: { b: 1, a: 2 } }, workflow_type: 'claims_intake' };
    expect(requestHash(base)).toBe(requestHash({ ...base, source: { Channel: { a: 2, b: 1 } } }));
    expect(requestHash(base)).not.toBe(requestHash({ ...base, message: 'n' }));
    expect(requestHash(base)).not.toBe(requestHash({ ...base, workflow_type: 'servicing' }));
    expect(requestHash(base)).not.toBe(requestHash({ ...base, source: 'Api' }));
  });

  it('forgets a released key, so a retry runs', async () => {
    const owner = await keys.claim(req('agent-a', 'k1'), { waitMs: 100 });
    if (owner.kind === 'owner') await owner.release();
    expect((await keys.claim(req('agent-a', 'k1'), { waitMs: 100 })).kind).toBe('owner');
  });

  it('remembers a result for the TTL and no longer', async () => {
    const owner = await keys.claim(req('agent-a', 'k1'), { waitMs: 100 });
    if (owner.kind === 'owner') await owner.complete(result('first'));
    clock.advance(23 * 3_600_000);
    expect(await keys.claim(req('agent-a', 'k1'), { waitMs: 100 })).toMatchObject({ kind: 'duplicate', result: { content: 'first' } });
    clock.advance(2 * 3_600_000);
    expect((await keys.claim(req('agent-a', 'k1'), { waitMs: 100 })).kind).toBe('owner');
  });

  it('frees a pending key whose owner died once its lease ends, and times out a waiter before that', async () => {
    await keys.claim(req('agent-a', 'k1'), { waitMs: 100 });
    await expect(keys.claim(req('agent-a', 'k1'), { waitMs: 20 })).rejects.toMatchObject({ category: 'Timeout' });
    clock.advance(61_000);
    expect((await keys.claim(req('agent-a', 'k1'), { waitMs: 100 })).kind).toBe('owner');
  });

  it('rejects a waiter with its signal reason when the caller aborts', async () => {
    await keys.claim(req('agent-a', 'k1'), { waitMs: 100 });
    const controller = new AbortController();
    const waiting = keys.claim(req('agent-a', 'k1'), { waitMs: 10_000, signal: controller.signal });
    controller.abort(new Error('caller went away'));
    await expect(waiting).rejects.toThrow('caller went away');
  });

  it('waits for a pending key without writing, and wakes when another process says it was settled', async () => {
    const counted = countingWrites(store);
    const announced: string[] = [];
    // Two "processes" over one store: the owner's announces reach the waiter's `settled`.
    const waiterKeys = createIdempotencyKeys({ store: counted.store, clock, ttlHours: () => 24, pendingLeaseMs: () => 60_000, recheckMs: 60_000 });
    const ownerKeys = createIdempotencyKeys({
      store,
      clock,
      ttlHours: () => 24,
      pendingLeaseMs: () => 60_000,
      announce: (id) => {
        announced.push(id);
        waiterKeys.settled(id);
      },
    });
    const owner = await ownerKeys.claim(req('agent-a', 'k1'), { waitMs: 100 });
    const waiting = waiterKeys.claim(req('agent-a', 'k1'), { waitMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // One insert attempt (refused), then reads only, however long the owner takes.
    expect(counted.writes()).toBe(1);
    if (owner.kind === 'owner') await owner.complete(result('done at last'));
    expect(await waiting).toMatchObject({ kind: 'duplicate', result: { content: 'done at last' } });
    expect(announced).toHaveLength(1);
  });

  it('re-reads a pending key now and then, so a lost notification delays a waiter but never strands it', async () => {
    // The owner is another process whose notification never arrives: only the store tells.
    const other = createIdempotencyKeys({ store, clock, ttlHours: () => 24, pendingLeaseMs: () => 60_000 });
    const owner = await other.claim(req('agent-a', 'k1'), { waitMs: 100 });
    const waiting = keys.claim(req('agent-a', 'k1'), { waitMs: 10_000 });
    if (owner.kind === 'owner') await owner.release();
    expect((await waiting).kind).toBe('owner');
  });

  it('keeps a live owner\'s key past its lease by renewing it every third of the lease', async () => {
    const leased = createIdempotencyKeys({ store, clock, ttlHours: () => 24, pendingLeaseMs: () => 300, recheckMs: 5 });
    const owner = await leased.claim(req('agent-a', 'renewed'), { waitMs: 100 });
    if (owner.kind !== 'owner') throw new Error('expected to own the key');
    const records = store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' });
    const id = idempotencyRecordId('agent-a', 'caller-1', 'renewed');
    // Well past the first lease: the renewals moved it, so the key is still claimed.
    clock.advance(250);
    await waitUntil(async () => (await records.get(id))?.doc.lease_until === new Date(clock.now().getTime() + 300).toISOString(), { message: 'a renewal' });
    clock.advance(250);
    await expect(leased.claim(req('agent-a', 'renewed'), { waitMs: 30 })).rejects.toMatchObject({ category: 'Timeout' });
    await owner.complete(result('kept'));
    expect(owner.lost.aborted).toBe(false);
  });

  it('stops an owner whose claim was taken over, and never lets it settle the new owner\'s key', async () => {
    const leased = createIdempotencyKeys({ store, clock, ttlHours: () => 24, pendingLeaseMs: () => 300, recheckMs: 5 });
    const owner = await leased.claim(req('agent-a', 'stalled'), { waitMs: 100 });
    if (owner.kind !== 'owner') throw new Error('expected to own the key');
    const records = store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' });
    const id = idempotencyRecordId('agent-a', 'caller-1', 'stalled');
    // What a stall past the lease leads to: another caller claimed the key meanwhile.
    await records.update(id, (current) => ({ ...current!.doc, token: 'the-next-owner' }));
    await waitUntil(() => owner.lost.aborted, { message: 'the stalled owner to learn it lost the claim' });
    expect(String((owner.lost.reason as Error).message)).toMatch(/taken over/);
    await owner.complete(result('too late'));
    expect((await records.get(id))?.doc).toMatchObject({ state: 'pending', token: 'the-next-owner', result: null });
    await owner.release();
    expect(await records.get(id)).not.toBeNull();
  });

  it('takes over a key whose owner died, with its tool-call journal: a call it left started is unknown now', async () => {
    const id = await deadOwner('crashed', [entry(0, 'answered', 'CL-1'), entry(1, 'started')], '2026-11-10T12:00:00.300Z');
    // Before the lease lapses the key is the dead owner's: a retry waits.
    await expect(keys.claim(req('agent-a', 'crashed'), { waitMs: 30 })).rejects.toMatchObject({ category: 'Timeout' });
    clock.advance(301);
    const next = await keys.claim(req('agent-a', 'crashed'), { waitMs: 5_000 });
    if (next.kind !== 'owner') throw new Error('expected the retry to own the key');
    expect(next.journal.keyOf(1)).toBe(`${id}:1`);
    expect(next.journal.prior.map((e) => [e.position, e.state, e.result])).toEqual([[0, 'answered', 'CL-1'], [1, 'unknown', undefined]]);
    expect(next.journal.lapsed?.map((e) => [e.position, e.state])).toEqual([[1, 'unknown']]);
    // The record is the retry's now, with the journal as it sees it.
    const records = store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' });
    expect((await records.get(id))?.doc).toMatchObject({ state: 'pending', tool_calls: [{ state: 'answered' }, { state: 'unknown' }] });
    expect((await records.get(id))?.doc.token).not.toBe('the-dead-owner');
    await next.release();
  });

  it('refuses journal writes of an owner that lost its key', async () => {
    const owner = await keys.claim(req('agent-a', 'lost'), { waitMs: 100 });
    if (owner.kind !== 'owner') throw new Error('expected to own the key');
    const records = store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' });
    await records.update(idempotencyRecordId('agent-a', 'caller-1', 'lost'), (current) => ({ ...current!.doc, token: 'the-next-owner' }));
    await expect(owner.journal.write({ ...entry(0, 'started'), idempotency_key: owner.journal.keyOf(0) })).rejects.toThrow(/no longer owns its idempotency key/);
    await owner.release();
  });

  it('keeps the journal of a failed run of a key for the retry, and forgets a failed key without one', async () => {
    const owner = await keys.claim(req('agent-a', 'journaled'), { waitMs: 100 });
    if (owner.kind !== 'owner') throw new Error('expected to own the key');
    await owner.journal.write({ position: 0, idempotency_key: owner.journal.keyOf(0), tool: 't', provider_id: 'p', native_tool: 't', args_hash: 'sha256:1', state: 'answered', result: 'ok', idempotent_keys: false, replays: 0, at: clock.now().toISOString(), worker: 'w' });
    await owner.release();
    const records = store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' });
    expect((await records.get(idempotencyRecordId('agent-a', 'caller-1', 'journaled')))?.doc).toMatchObject({ state: 'released', tool_calls: [{ state: 'answered' }] });
    const retry = await keys.claim(req('agent-a', 'journaled'), { waitMs: 100 });
    if (retry.kind !== 'owner') throw new Error('expected the retry to own the key');
    expect(retry.journal.prior).toEqual([expect.objectContaining({ result: 'ok' })]);
    await retry.complete(result('after a retry'));

    const plain = await keys.claim(req('agent-a', 'plain'), { waitMs: 100 });
    if (plain.kind === 'owner') await plain.release();
    expect(await records.get(idempotencyRecordId('agent-a', 'caller-1', 'plain'))).toBeNull();
  });

  it('answers every later use of a key with the error kept for it (a tool call in doubt)', async () => {
    const owner = await keys.claim(req('agent-a', 'doubt'), { waitMs: 100 });
    if (owner.kind !== 'owner') throw new Error('expected to own the key');
    await owner.fail(Errors.toolCallsInDoubt('open_claim (key k:0, unknown): look it up', [{ idempotency_key: 'k:0' }]));
    for (let i = 0; i < 2; i++) {
      await expect(keys.claim(req('agent-a', 'doubt'), { waitMs: 100 })).rejects.toMatchObject({
        category: 'Conflict',
        message: 'open_claim (key k:0, unknown): look it up',
        details: { reason: 'tool_calls_in_doubt', calls: [{ idempotency_key: 'k:0' }] },
      });
    }
  });

  it('gives a lapsed key to exactly one of the retries racing for it; the others wait for that one', async () => {
    await deadOwner('raced', [entry(0, 'answered', 'ok')], '2026-11-10T12:00:00.300Z');
    clock.advance(301);
    // Five retries from five "processes" at once: one takes the key (and its journal), four wait.
    const racers = Array.from({ length: 5 }, () => createIdempotencyKeys({ store, clock, ttlHours: () => 24, pendingLeaseMs: () => 60_000, recheckMs: 5 }));
    const claims = racers.map((k) => k.claim(req('agent-a', 'raced'), { waitMs: 5_000 }));
    const owner = await Promise.race(claims);
    if (owner.kind !== 'owner') throw new Error('expected an owner');
    expect(owner.journal.prior).toEqual([expect.objectContaining({ result: 'ok' })]);
    await owner.complete(result('once'));
    const all = await Promise.all(claims);
    expect(all.filter((c) => c.kind === 'owner')).toHaveLength(1);
    expect(all.filter((c) => c.kind === 'duplicate').map((c) => (c.kind === 'duplicate' ? c.result.content : ''))).toEqual(['once', 'once', 'once', 'once']);
  });
});
