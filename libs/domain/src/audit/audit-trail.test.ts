import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppendLog, LogListQuery, LogOptions, Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { PlatformError } from '../errors/platform-error.ts';
import { fixedClock } from '../time/clock.ts';
import type { AuditEntry, AuditRecordInput, AuditTrail, VerifyReport } from './audit-entry.ts';
import { VERIFY_BATCH } from './audit-chain.ts';
import { CHAIN_ANCHOR, chainHash } from './audit-hash.ts';
import { createAuditTrail } from './audit-trail.ts';

/** The few better-sqlite3 calls the tamper tests make on the store's file (the package has no types). */
interface RawDb {
  prepare(sql: string): { run(...p: unknown[]): unknown; get(...p: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

let dir: string;
let dbPath: string;
let store: Store;
const clock = fixedClock('2026-03-01T10:00:00.000Z');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'audit-trail-'));
  dbPath = join(dir, 'platform.db');
  store = await openEmbeddedStore({ path: dbPath });
  clock.set('2026-03-01T10:00:00.000Z');
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function input(i: number, over: Partial<AuditRecordInput> = {}): AuditRecordInput {
  return {
    category: 'request',
    identity: `user-${i % 3}`,
    role: 'admin',
    action: `PUT /vault/k${i}`,
    target: `k${i}`,
    result: '200',
    metadata: { n: i, nested: { b: 2, a: [1, 'x'] } },
    ...over,
  };
}

async function fill(audit: AuditTrail, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    await audit.record(input(i));
    clock.advance(1000);
  }
}

async function verifyEnabled(audit: AuditTrail, options: { full?: boolean } = {}): Promise<VerifyReport> {
  const report = await audit.verify(options);
  if (report.valid === null) throw new Error('audit unexpectedly disabled');
  return report;
}

/** The store, with its logs' `list` and `scan` calls reported before they run. */
function spyingLogs(inner: Store, spy: { list?: (query: LogListQuery<object> | undefined) => void; scan?: (from: number, limit: number) => void }): Store {
  return {
    counters: inner.counters,
    health: () => inner.health(),
    close: () => inner.close(),
    collection: (n, o) => inner.collection(n, o),
    log: <T extends object>(name: string, o?: LogOptions<T>) => {
      const log = inner.log<T>(name, o);
      const spied: AppendLog<T> = {
        append: (b) => log.append(b),
        tip: () => log.tip(),
        count: () => log.count(),
        list: (q) => (spy.list?.(q as LogListQuery<object> | undefined), log.list(q)),
        scan: (from, limit) => (spy.scan?.(from, limit), log.scan(from, limit)),
      };
      return spied;
    },
  };
}

/** Rewrites one stored entry's JSON body in the SQLite file, as an attacker with file access would. */
function tamper(seq: number, path: string, value: unknown): void {
  const db = new Database(dbPath);
  try {
    db.prepare(`UPDATE l_audit SET body = json_set(body, ?, json(?)) WHERE seq = ?`).run(
      path,
      JSON.stringify(value),
      seq,
    );
  } finally {
    db.close();
  }
}

describe('audit trail', () => {
  it('builds a chain a third party can recompute from the query output', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    await fill(audit, 30);
    const report = await verifyEnabled(audit);
    expect(report).toMatchObject({
      valid: true,
      entry_count: 30,
      chain_anchor: CHAIN_ANCHOR,
      algorithm: 'sha256',
    });
    expect(report.integrity_excludes).toEqual(['id']);
    expect(report.first_invalid_seq).toBeUndefined();

    const entries = (await audit.query({ limit: 100 })).reverse();
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    let prev = CHAIN_ANCHOR;
    for (const e of entries) {
      expect(e.id).toBe(e.seq);
      expect(e.hash).toBe(chainHash({ ...e, prev_hash: prev }));
      prev = e.hash;
    }
    expect(report.tip_hash).toBe(prev);
    expect(await audit.count()).toBe(30);
  });

  it.each([
    ['timestamp', '2026-03-01T10:00:01.000Z'],
    ['category', 'auth'],
    ['identity', 'mallory'],
    ['role', 'viewer'],
    ['action', 'GET /health'],
    ['target', 'other'],
    ['result', '500'],
    ['metadata', { n: 999 }],
    ['metadata', null],
    ['hash', `sha256:${'f'.repeat(64)}`],
    ['prev_hash', `sha256:${'e'.repeat(64)}`],
  ])('detects an edit of %s in the database file and names the entry', async (field, value) => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    await fill(audit, 8);
    tamper(5, `$.${field}`, value);
    const report = await verifyEnabled(audit);
    expect(report.valid).toBe(false);
    expect(report.first_invalid_seq).toBe(5);
    expect(report.first_invalid_reason).toMatch(/hash mismatch|broken link/);
  });

  it('detects an edit of nested metadata', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    await fill(audit, 4);
    tamper(2, '$.metadata.nested.a[1]', 'y');
    expect(await verifyEnabled(audit)).toMatchObject({ valid: false, first_invalid_seq: 2 });
  });

  it('detects a removed middle entry', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    await fill(audit, 6);
    const db = new Database(dbPath);
    db.prepare('DELETE FROM l_audit WHERE seq = 3').run();
    db.close();
    const report = await verifyEnabled(audit);
    expect(report).toMatchObject({ valid: false, first_invalid_seq: 4, entry_count: 5 });
    expect(report.first_invalid_reason).toMatch(/seq gap/);
  });

  it('detects a rewritten entry whose own hash was recomputed, at the next link', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    await fill(audit, 4);
    const [one, two] = (await audit.query({ limit: 10 })).reverse();
    // A forger who knows the construction rewrites entry 2 and recomputes its hash: entry 2
    // checks out on its own, but entry 3's link to it no longer does.
    tamper(2, '$.identity', 'mallory');
    tamper(2, '$.hash', chainHash({ ...two!, identity: 'mallory', prev_hash: one!.hash }));
    const report = await verifyEnabled(audit);
    expect(report).toMatchObject({ valid: false, first_invalid_seq: 3 });
    expect(report.first_invalid_reason).toMatch(/broken link/);
  });

  it('keeps 200 concurrent records gapless and valid', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => audit.record(input(i))));
    expect(results.map((e) => e!.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 200 }, (_, i) => i + 1),
    );
    expect(await verifyEnabled(audit)).toMatchObject({ valid: true, entry_count: 200 });
  });

  it('verifies in bounded batches past one batch and finds a break beyond the first', async () => {
    const requested: number[] = [];
    const spyStore = spyingLogs(store, {
      list: (q) => requested.push(q?.limit ?? Number.POSITIVE_INFINITY),
      scan: (_from, limit) => requested.push(limit),
    });
    const audit = createAuditTrail({ store: spyStore, clock, enabled: true });
    const total = VERIFY_BATCH * 2 + 17;
    for (let i = 1; i <= total; i++) await audit.record(input(i, { metadata: null }));
    expect(await verifyEnabled(audit)).toMatchObject({ valid: true, entry_count: total });
    expect(Math.max(...requested)).toBeLessThanOrEqual(VERIFY_BATCH);
    tamper(VERIFY_BATCH + 5, '$.target', 'x');
    expect(await verifyEnabled(audit, { full: true })).toMatchObject({ valid: false, first_invalid_seq: VERIFY_BATCH + 5 });
  });

  it('walks from the verified prefix, shares one walk among concurrent callers, and starts over when full', async () => {
    const scans: number[] = [];
    const spyStore = spyingLogs(store, { scan: (from) => scans.push(from) });
    const audit = createAuditTrail({ store: spyStore, clock, enabled: true });
    for (let i = 1; i <= 10; i++) await audit.record(input(i, { metadata: null }));
    const reports = await Promise.all(Array.from({ length: 20 }, () => verifyEnabled(audit)));
    expect(new Set(reports).size).toBe(1);
    expect(scans).toEqual([1]);
    for (let i = 11; i <= 13; i++) await audit.record(input(i, { metadata: null }));
    scans.length = 0;
    expect(await verifyEnabled(audit)).toMatchObject({ valid: true, entry_count: 13, verified_from_seq: 11, checked_entries: 3 });
    expect(scans).toEqual([10, 11]);
    scans.length = 0;
    expect(await verifyEnabled(audit, { full: true })).toMatchObject({ valid: true, verified_from_seq: 1, checked_entries: 13 });
    expect(scans).toEqual([1]);
  });

  it('verifies a 100k-entry chain', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    await audit.record(input(1));
    // Written straight into the file in one transaction: 100k appends one by one would make
    // this test slow without exercising anything more than the concurrency test does.
    const db = new Database(dbPath) as RawDb & { transaction(fn: () => void): () => void };
    const insert = db.prepare('INSERT INTO l_audit (seq, body) VALUES (?, ?)');
    let prev = (await audit.query({ limit: 1 }))[0]!.hash;
    db.transaction(() => {
      for (let seq = 2; seq <= 100_000; seq++) {
        const core = { ...input(seq), timestamp: '2026-03-01T10:00:00.000Z', metadata: null };
        const hash = chainHash({ ...core, seq, prev_hash: prev });
        insert.run(seq, JSON.stringify({ ...core, prev_hash: prev, hash }));
        prev = hash;
      }
    })();
    db.close();
    expect(await verifyEnabled(audit)).toMatchObject({ valid: true, entry_count: 100_000, tip_hash: prev });
    tamper(99_999, '$.result', '201');
    expect(await verifyEnabled(audit, { full: true })).toMatchObject({ valid: false, first_invalid_seq: 99_999 });
  });

  it('filters by category, actor and since, newest first, within limit', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    await fill(audit, 9);
    await audit.record(input(10, { category: 'vault', identity: 'ops' }));

    const latest = await audit.query({ limit: 3 });
    expect(latest.map((e) => e.seq)).toEqual([10, 9, 8]);
    expect((await audit.query({ limit: 50, category: 'vault' })).map((e) => e.seq)).toEqual([10]);
    expect((await audit.query({ limit: 50, actor: 'user-1' })).map((e) => e.seq)).toEqual([7, 4, 1]);
    expect(await audit.query({ limit: 50, actor: 'user-1', category: 'vault' })).toEqual([]);
    // Entry n was written at 10:00:00 + (n-1) s; bounds in other spellings normalize to UTC.
    expect((await audit.query({ limit: 50, since: '2026-03-01T10:00:07Z' })).map((e) => e.seq)).toEqual([
      10, 9, 8,
    ]);
    expect((await audit.query({ limit: 50, since: '2026-03-01T12:00:07+02:00' })).map((e) => e.seq)).toEqual([
      10, 9, 8,
    ]);
    expect(await audit.query({ limit: 50, since: '2026-03-02' })).toEqual([]);
    expect(await audit.query({ limit: 50, since: '2026-03-01' })).toHaveLength(10);
  });

  it('refuses an unknown category and a since that is not ISO 8601', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    for (const q of [
      { category: 'nope' },
      { since: 'yesterday' },
      { since: 'March 1, 2026' },
      { since: '2026-13-40' },
    ]) {
      const err = await audit.query({ limit: 5, ...q }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PlatformError);
      expect((err as PlatformError).category).toBe('ValidationError');
    }
  });

  it('never stores secret-looking metadata keys', async () => {
    const audit = createAuditTrail({ store, clock, enabled: true });
    const entry = await audit.record(input(1, { metadata: { key: 'db', value: 'hunter2', token: 't0k3n' } }));
    expect(entry!.metadata).toEqual({ key: 'db' });
    const db = new Database(dbPath);
    const row = db.prepare('SELECT body FROM l_audit WHERE seq = 1').get() as { body: string };
    db.close();
    expect(row.body).not.toContain('hunter2');
    expect(row.body).not.toContain('t0k3n');
    expect(await verifyEnabled(audit)).toMatchObject({ valid: true });
  });

  it('reports the disabled shapes and writes nothing while disabled', async () => {
    const seen: AuditEntry[] = [];
    const audit = createAuditTrail({ store, clock, enabled: false, onAppend: (e) => seen.push(e) });
    expect(await audit.record(input(1))).toBeNull();
    expect(await audit.query({ limit: 5 })).toEqual([]);
    expect(await audit.count()).toBe(0);
    expect(await audit.verify()).toMatchObject({ valid: null, status: 'disabled' });
    expect(seen).toEqual([]);
    expect(await store.log('audit').count()).toBe(0);
  });

  it('calls onAppend with each stored entry', async () => {
    const seen: number[] = [];
    const audit = createAuditTrail({ store, clock, enabled: true, onAppend: (e) => seen.push(e.seq) });
    await fill(audit, 3);
    expect(seen).toEqual([1, 2, 3]);
  });
});
