import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { suitePostgres, waitUntil } from '@agent-platform/testkit';
import type { Doc, Store } from '../store.ts';
import { storeSnapshotsOf, type StorePart, type StoreSnapshots } from '../store-snapshots.ts';
import { openEmbeddedStore } from '../embedded/index.ts';
import { PostgresStoreError, SNAPSHOT_BATCH_ROWS, openPostgresStore } from './index.ts';
import { dropSchema, freshSchemaName, postgresSkipReason, withAdmin } from './pg-test-server.ts';

/**
 * Snapshots of the PostgreSQL store (pg-snapshots.ts): the embedded snapshot format, one instant
 * while another store handle writes, restores of a part in one transaction (faults included), and
 * snapshots carried between an embedded store and a PostgreSQL one in both directions.
 */
const skipReason = postgresSkipReason();
const ALL: StorePart = { collections: 'all', logs: 'all', counterPrefixes: 'all' };
type Item = Doc & { v: string; email?: string };

describe.skipIf(skipReason !== null)(`postgres store snapshots${skipReason === null ? '' : ` [SKIPPED: ${skipReason}]`}`, () => {
  const postgres = suitePostgres();
  let url: string;
  let dir: string;
  const opened: Store[] = [];
  const schemas: string[] = [];

  beforeAll(() => {
    url = postgres.url();
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-pg-snapshots-'));
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const schema of schemas.splice(0)) await dropSchema(url, schema);
    await rm(dir, { recursive: true, force: true });
  });

  async function pgStore(schema = freshSchemaName()): Promise<Store & { schema: string }> {
    if (!schemas.includes(schema)) schemas.push(schema);
    const store = await openPostgresStore({ url, schema, poolSize: 4 });
    opened.push(store);
    return Object.assign(store, { schema });
  }
  async function embedded(name: string): Promise<Store> {
    const store = await openEmbeddedStore({ path: join(dir, name) });
    opened.push(store);
    return store;
  }
  function snapshotsOf(store: Store): StoreSnapshots {
    const snapshots = storeSnapshotsOf(store);
    if (snapshots === null) throw new Error('no snapshots');
    return snapshots;
  }
  /** `count` more log entries `{n}` appended by SQL (fast), after the log's first entry. */
  async function bulkLog(schema: string, log: string, from: number, count: number): Promise<void> {
    await withAdmin(url, (admin) =>
      admin.query(
        `INSERT INTO "${schema}"."l_${log}" (seq, entry) SELECT g, jsonb_build_object('n', g) FROM generate_series($1::bigint, $2::bigint) g`,
        [from, from + count - 1],
      ),
    );
  }

  it('writes the embedded format as of one instant while another store handle keeps writing', async () => {
    const live = await pgStore();
    const other = await pgStore(live.schema);
    await live.log<{ n: number }>('chain').append(() => ({ n: 1 }));
    await bulkLog(live.schema, 'chain', 2, 3 * SNAPSHOT_BATCH_ROWS);
    const base = 1 + 3 * SNAPSHOT_BATCH_ROWS;
    await live.collection<Item>('items', { indexes: [{ field: 'email', unique: true }] }).insert({ id: 'x', v: '1', email: 'x@e' });
    let writing = true;
    let rounds = 0;
    const writer = (async () => {
      const log = other.log<{ n: number }>('chain');
      const items = other.collection<Item>('items', { indexes: [{ field: 'email', unique: true }] });
      for (let i = 0; writing; i++) {
        // An entry, then a counter of the same number: one instant never holds the counter ahead.
        await log.append(() => ({ n: 10_000 + i }));
        await other.counters.add('appended', 1);
        await items.upsert({ id: `i${i % 7}`, v: String(i) });
        rounds++;
      }
    })();
    await waitUntil(async () => rounds >= 5, { timeoutMs: 10_000, message: 'the writer going' });
    const path = join(dir, 'snap.db');
    const summary = await snapshotsOf(live).snapshot(path, ALL);
    const roundsAtEnd = rounds;
    writing = false;
    await writer;
    expect(roundsAtEnd).toBeGreaterThan(5);

    // The file is an embedded store: read it through the port.
    const copy = await embedded('snap.db');
    const entries = await copy.log<{ n: number }>('chain').scan(1, 100_000);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: entries.length }, (_, i) => i + 1));
    expect(entries.length).toBeGreaterThan(base);
    expect(summary.logs.chain).toBe(entries.length);
    const appended = await copy.counters.get('appended');
    expect(appended).toBeLessThanOrEqual(entries.length - base);
    expect(appended).toBeGreaterThanOrEqual(entries.length - base - 1);
    expect(summary.collections.items).toBe(await copy.collection('items').count());
    // The unique index travelled by name, in the embedded layout.
    const file = new Database(join(dir, 'snap.db'), { readonly: true });
    const indexes = (file.prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").all() as Array<{ name: string }>).map(
      (r) => r.name,
    );
    file.close();
    expect(indexes).toEqual(expect.arrayContaining(['c_items__expires_at', 'c_items__u__email', 'counters__expires_at']));
    expect(indexes.filter((n) => n.startsWith('sqlite_autoindex')).length).toBeGreaterThan(0);
  }, 60_000);

  it('restores only the part it is given, never lowers a kept counter, and keeps log seqs', async () => {
    const source = await pgStore();
    await source.collection<Item>('agents').insert({ id: 'a1', v: 'from the backup' });
    const audit = source.log<{ n: number }>('audit');
    for (let i = 1; i <= 3; i++) await audit.append(() => ({ n: i }));
    await audit.dropBefore(2); // seqs 2, 3: a restore keeps them as they are
    await source.counters.add('agent:a1:received', 2);
    await source.counters.add('licence:x:spend', 5);
    await source.counters.add('licence:x:tx', 50);
    const path = join(dir, 'snap.db');
    await snapshotsOf(source).snapshot(path, ALL);

    const live = await pgStore();
    await live.collection<Item>('agents').insert({ id: 'a2', v: 'made after the backup' });
    await live.collection<Item>('vault').insert({ id: 'k', v: 'live value' });
    await live.log<{ n: number }>('audit').append(() => ({ n: 99 }));
    await live.counters.add('agent:a2:received', 9);
    await live.counters.add('licence:x:spend', 40);
    await live.counters.add('licence:x:tx', 10);

    await snapshotsOf(live).restore(path, { collections: ['agents'], logs: [], counterPrefixes: ['agent:'] });
    expect((await live.collection<Item>('agents').find()).map((r) => r.doc.id)).toEqual(['a1']);
    expect((await live.collection<Item>('vault').get('k'))?.doc.v).toBe('live value');
    expect((await live.log<{ n: number }>('audit').scan(1, 10)).map((e) => [e.seq, e.n])).toEqual([[1, 99]]);
    expect(await live.counters.list('agent:')).toEqual({ 'agent:a1:received': 2 });
    expect(await live.counters.get('licence:x:spend')).toBe(40);

    await snapshotsOf(live).restore(path, ALL, { keepHigherCounterPrefixes: ['licence:'] });
    expect(await live.collection<Item>('vault').count()).toBe(0);
    expect((await live.log<{ n: number }>('audit').scan(1, 10)).map((e) => [e.seq, e.n])).toEqual([
      [2, 2],
      [3, 3],
    ]);
    // Spend already made stays spent; a lower live value takes the backup's.
    expect(await live.counters.get('licence:x:spend')).toBe(40);
    expect(await live.counters.get('licence:x:tx')).toBe(50);
    // The log goes on from the restored tip.
    expect((await live.log<{ n: number }>('audit').append(() => ({ n: 4 }))).seq).toBe(4);
  });

  it('a restore whose backend is terminated part-way leaves the old part whole', async () => {
    const source = await pgStore();
    await source.log<{ n: number }>('chain').append(() => ({ n: 1 }));
    await bulkLog(source.schema, 'chain', 2, 40 * SNAPSHOT_BATCH_ROWS);
    await source.collection<Item>('items').insert({ id: 'new', v: 'backup' });
    const path = join(dir, 'big.db');
    await snapshotsOf(source).snapshot(path, ALL);

    const live = await pgStore();
    await live.collection<Item>('items').insert({ id: 'old', v: 'live' });
    for (let i = 0; i < 5; i++) await live.log<{ n: number }>('chain').append(() => ({ n: i }));
    await live.counters.add('c', 3);
    const restore = snapshotsOf(live).restore(path, ALL);
    void restore.catch(() => undefined);
    await withAdmin(url, async (admin) => {
      // The restore's transaction is the only one writing: it has an xid once it deleted the old rows.
      let killed = 0;
      await waitUntil(
        async () => {
          const { rows } = await admin.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'agent-platform' AND backend_xid IS NOT NULL",
          );
          for (const { pid } of rows) killed += (await admin.query('SELECT pg_terminate_backend($1)', [pid])).rowCount ?? 0;
          return killed > 0;
        },
        { timeoutMs: 20_000, intervalMs: 2, message: 'the restore writing' },
      );
    });
    const error = await restore.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PostgresStoreError);
    expect((error as Error).message).toMatch(/connection lost/);
    expect((await live.collection<Item>('items').find()).map((r) => r.doc.id)).toEqual(['old']);
    expect((await live.log('chain').scan(1, 100)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await live.counters.list('')).toEqual({ c: 3 });
    // The store goes on, and the same restore then succeeds whole.
    await snapshotsOf(live).restore(path, ALL);
    expect(await live.log('chain').count()).toBe(1 + 40 * SNAPSHOT_BATCH_ROWS);
    expect((await live.collection<Item>('items').find()).map((r) => r.doc.id)).toEqual(['new']);
  }, 60_000);

  it('a snapshot found damaged mid-stream (a row the server refuses) rolls the whole restore back', async () => {
    const source = await pgStore();
    await source.collection<Item>('a_first').insert({ id: 'a', v: 'restored first' });
    await source.log<{ n: number }>('chain').append(() => ({ n: 1 }));
    await bulkLog(source.schema, 'chain', 2, 3 * SNAPSHOT_BATCH_ROWS);
    const path = join(dir, 'damaged.db');
    await snapshotsOf(source).snapshot(path, ALL);
    // Damage a row in the third batch of the log: the file still passes inspect (a sound SQLite file).
    const file = new Database(path);
    file.prepare('UPDATE l_chain SET body = ? WHERE seq = ?').run('{"n": broken', 2 * SNAPSHOT_BATCH_ROWS + 7);
    file.close();

    const live = await pgStore();
    await live.collection<Item>('a_first').insert({ id: 'old', v: 'live' });
    await live.log<{ n: number }>('chain').append(() => ({ n: 0 }));
    await expect(snapshotsOf(live).restore(path, ALL)).rejects.toThrow(/json/i);
    expect((await live.collection<Item>('a_first').find()).map((r) => r.doc.id)).toEqual(['old']);
    expect((await live.log('chain').scan(1, 10)).map((e) => e.seq)).toEqual([1]);
  });

  it('carries an embedded snapshot into PostgreSQL and a PostgreSQL snapshot into an embedded store, unchanged', async () => {
    const emb = await embedded('origin.db');
    const items = emb.collection<Item>('items', { indexes: [{ field: 'email', unique: true }] });
    await items.insert({ id: 'a', v: 'alpha', email: 'a@e' });
    await items.insert({ id: 'b', v: 'beta ünïcödé', email: 'b@e' });
    await items.replace({ id: 'b', v: 'beta v2', email: 'b@e' }, 1);
    const ttl = emb.collection<Item & { expires: string }>('sessions', { ttlField: 'expires' });
    await ttl.insert({ id: 's', v: 'session', expires: '2999-01-01T00:00:00.123Z' });
    const log = emb.log<{ n: number; nested: { x: number[] } }>('audit', { indexes: ['n'] });
    for (let i = 1; i <= 4; i++) await log.append(() => ({ n: i, nested: { x: [i, i * 2] } }));
    await log.dropBefore(3);
    await emb.counters.add('licence:x:spend', 17);
    await emb.counters.add('rate:w', 2, { expiresAt: '2999-01-01T00:00:00.000Z' });
    const first = join(dir, 'embedded-snap.db');
    await snapshotsOf(emb).snapshot(first, ALL);

    const pg = await pgStore();
    await pg.collection<Item>('stale').insert({ id: 'z', v: 'gone after a full restore' });
    await snapshotsOf(pg).restore(first, ALL);
    const second = join(dir, 'pg-snap.db');
    await snapshotsOf(pg).snapshot(second, ALL);
    const back = await embedded('back.db');
    await snapshotsOf(back).restore(second, ALL);

    for (const store of [pg, back]) {
      const itemsThere = store.collection<Item>('items', { indexes: [{ field: 'email', unique: true }] });
      expect(await itemsThere.find({ orderBy: { field: 'v', direction: 'asc' } })).toEqual(await items.find({ orderBy: { field: 'v', direction: 'asc' } }));
      expect(await store.collection<Item & { expires: string }>('sessions', { ttlField: 'expires' }).get('s')).toEqual(await ttl.get('s'));
      expect(await store.log('audit', { indexes: ['n'] }).scan(1, 10)).toEqual(await log.scan(1, 10));
      expect(await store.counters.list('')).toEqual(await emb.counters.list(''));
      expect(await store.collection('stale').count()).toBe(0);
      // The unique index came along: the restored collection refuses a duplicate.
      await expect(itemsThere.insert({ id: 'c', v: 'dup', email: 'a@e' })).rejects.toThrow();
    }
    const indexes = await withAdmin(url, async (admin) =>
      (await admin.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = $1', [pg.schema])).rows.map((r) => r.indexname),
    );
    expect(indexes).toEqual(expect.arrayContaining(['c_items__u__email', 'l_audit__i__n', 'c_sessions__expires_at']));
  });
});
