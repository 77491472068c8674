import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chainLink, expectGaplessChain, freePort, startPostgresServer, waitUntil } from '@agent-platform/testkit';
import type { ChainEntry, PostgresServerHandle } from '@agent-platform/testkit';
import type { Doc, LogEntry } from '../store.ts';
import { PostgresStoreError, openPostgresStore } from './index.ts';
import { PgHandle } from './pg-handle.ts';
import type { PostgresStore } from './index.ts';
import { freshSchemaName, postgresSkipReason, withAdmin } from './pg-test-server.ts';

/**
 * PostgreSQL faults, each asserting what a user of the store sees: a backend terminated while
 * an operation waits inside the server, the server SIGKILLed under a load of appends, a
 * statement timeout, a failover to a second server, and an idle connection dying (the pool's
 * `error` event). Each test gets its own server, since most of them stop it.
 */
const skipReason = postgresSkipReason();

describe.skipIf(skipReason !== null)(`postgres store faults${skipReason === null ? '' : ` [SKIPPED: ${skipReason}]`}`, () => {
  let server: PostgresServerHandle;
  const servers: PostgresServerHandle[] = [];
  const stores: PostgresStore[] = [];
  const open = async (options: Parameters<typeof openPostgresStore>[0]) => {
    const store = await openPostgresStore(options);
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    server = await startPostgresServer();
    servers.push(server);
  }, 60_000);

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  afterAll(async () => {
    for (const s of servers) await s.dispose();
  });

  it('(a) a backend terminated while an addMany and an append wait inside the server: both reject, nothing half-written, the store goes on', async () => {
    const schema = freshSchemaName();
    const store = await open({ url: server.url, schema, poolSize: 2 });
    await store.counters.add('held', 1);
    const log = store.log<ChainEntry>('chain');
    await log.append(chainLink('w', 1));
    await withAdmin(server.url, async (admin) => {
      // The admin holds the `held` counter's row and an uncommitted entry at seq 2.
      await admin.query('BEGIN');
      await admin.query(`SELECT * FROM "${schema}".ap_counters WHERE key = 'held' FOR UPDATE`);
      await admin.query(`INSERT INTO "${schema}".l_chain (seq, entry) VALUES (2, '{"writer":"admin","n":0,"prev":null}')`);
      const batch = store.counters.addMany([
        { key: 'fresh', delta: 5 },
        { key: 'held', delta: 10 },
      ]);
      const append = log.append(chainLink('w', 2));
      const outcomes = Promise.allSettled([batch, append]);
      await waitUntil(async () => (await lockWaiters(admin)).length === 2, { timeoutMs: 10_000, message: 'both store statements waiting on locks' });
      for (const { pid } of await lockWaiters(admin)) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const [batchOutcome, appendOutcome] = await outcomes;
      expect(batchOutcome.status).toBe('rejected');
      expect(appendOutcome.status).toBe('rejected');
      const reason = (batchOutcome as PromiseRejectedResult).reason as Error;
      expect(reason).toBeInstanceOf(PostgresStoreError);
      expect(reason.message).toMatch(/^postgres store: connection lost/);
      await admin.query('ROLLBACK');
    });
    // The batch is one statement: neither key moved. The append wrote nothing.
    expect(await store.counters.list('')).toEqual({ held: 1 });
    expect((await log.tip())?.seq).toBe(1);
    // The pool replaced the dead connections: everything works again.
    await store.counters.addMany([
      { key: 'fresh', delta: 5 },
      { key: 'held', delta: 10 },
    ]);
    expect(await store.counters.list('')).toEqual({ fresh: 5, held: 11 });
    await log.append(chainLink('w', 2));
    expectGaplessChain(await log.scan(1, 10), 2);
  });

  it('(b) the server SIGKILLed and restarted under a load of appends: every acknowledged entry is there, gapless, and the same store goes on', async () => {
    const store = await open({ url: server.url, schema: freshSchemaName(), connectTimeoutMs: 2_000 });
    const log = store.log<ChainEntry>('chain');
    const acked: LogEntry<ChainEntry>[] = [];
    const failures: string[] = [];
    let running = true;
    const writer = async (name: string) => {
      for (let n = 1; running; n++) {
        try {
          acked.push(await log.append(chainLink(name, n)));
        } catch (err) {
          failures.push((err as Error).message);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const writers = ['w1', 'w2', 'w3'].map((name) => writer(name));
    await waitUntil(() => acked.length >= 50, { timeoutMs: 10_000, message: '50 appends before the crash' });
    await server.kill();
    const beforeRestart = acked.length;
    await server.restart();
    await waitUntil(() => acked.length >= beforeRestart + 50, { timeoutMs: 20_000, message: '50 appends after the restart' });
    running = false;
    await Promise.all(writers);

    expect(failures.length).toBeGreaterThan(0); // the crash was seen
    for (const message of failures) expect(message).toMatch(/^postgres store: (connection lost|cannot connect)/);
    const tip = (await log.tip())!;
    const entries = await log.scan(1, 100_000);
    expectGaplessChain(entries, tip.seq);
    const stored = new Map(entries.map((e) => [e.seq, e]));
    for (const entry of acked) expect(stored.get(entry.seq)).toEqual(entry);
    expect((await log.append(chainLink('after', 1))).seq).toBe(tip.seq + 1);
  }, 60_000);

  it('(c) a row locked by another connection: the write rejects within statementTimeoutMs with a clear error', async () => {
    const schema = freshSchemaName();
    const store = await open({ url: server.url, schema, statementTimeoutMs: 500 });
    const items = store.collection<Doc & { v: number }>('items');
    await items.insert({ id: 'x', v: 1 });
    await withAdmin(server.url, async (admin) => {
      await admin.query('BEGIN');
      await admin.query(`SELECT * FROM "${schema}".c_items WHERE id = 'x' FOR UPDATE`);
      const started = Date.now();
      const failure = await items.replace({ id: 'x', v: 2 }, 1).then(
        () => null,
        (err: unknown) => err as PostgresStoreError,
      );
      const elapsed = Date.now() - started;
      expect(failure).toBeInstanceOf(PostgresStoreError);
      expect(failure?.code).toBe('57014');
      expect(failure?.message).toMatch(/^postgres store: statement cancelled after statement_timeout \(500 ms\)/);
      expect(elapsed).toBeGreaterThanOrEqual(450);
      expect(elapsed).toBeLessThan(3_000);
      await admin.query('ROLLBACK');
    });
    expect((await items.replace({ id: 'x', v: 2 }, 1)).version).toBe(2);
  });

  it('a busy pool is not a dead server: an operation waiting for a free connection rejects as such and fails over nowhere', async () => {
    const schema = freshSchemaName();
    const dead = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    const store = await open({ urls: [server.url, dead], schema, poolSize: 1, connectTimeoutMs: 300 });
    const items = store.collection<Doc & { v: number }>('items');
    await items.insert({ id: 'x', v: 1 });
    await withAdmin(server.url, async (admin) => {
      await admin.query('BEGIN');
      await admin.query(`SELECT * FROM "${schema}".c_items WHERE id = 'x' FOR UPDATE`);
      const blocked = items.replace({ id: 'x', v: 2 }, 1); // holds the pool's one connection
      await waitUntil(async () => (await lockWaiters(admin)).length === 1, { timeoutMs: 10_000, message: 'the replace waiting' });
      await expect(items.get('x')).rejects.toThrow('postgres store: no free connection within 300 ms (all 1 of the pool busy)');
      await admin.query('ROLLBACK');
      expect((await blocked).version).toBe(2);
    });
    expect(await items.get('x')).toEqual({ doc: { id: 'x', v: 2 }, version: 2 });
  });

  it('(d) failover: server A stopped, server B holding the same data: the store opened with urls [A, B] keeps serving', async () => {
    const a = await startPostgresServer();
    servers.push(a);
    const bPort = await freePort();
    const bUrl = `postgres://postgres@127.0.0.1:${bPort}/postgres`;
    const schema = freshSchemaName();
    const store = await open({ urls: [a.url, bUrl], schema, connectTimeoutMs: 2_000 });
    const onlyA = await open({ url: a.url, schema, connectTimeoutMs: 2_000 });
    const items = store.collection<Doc & { v: string }>('items');
    await items.insert({ id: 'kept', v: 'on A' });
    const log = store.log<ChainEntry>('chain');
    for (let n = 1; n <= 3; n++) await log.append(chainLink('a', n));
    await a.stop();
    // B: a copy of A's data dir on B's port (a promoted replica, as far as the store can tell).
    const b = await startPostgresServer({ copyDataFrom: a.dataDir, port: bPort });
    servers.push(b);
    // The same store, not reopened: its next operations connect to B.
    expect(await items.get('kept')).toEqual({ doc: { id: 'kept', v: 'on A' }, version: 1 });
    expect((await log.append(chainLink('b', 4))).seq).toBe(4);
    expectGaplessChain(await log.scan(1, 10), 4);
    expect(await store.health()).toEqual({ kind: 'postgres', status: 'ok' });
    // A store given only A reports down and its operations reject, rather than hang.
    expect(await onlyA.health()).toMatchObject({ kind: 'postgres', status: 'down' });
    await expect(onlyA.collection('items').get('kept')).rejects.toThrow(/^postgres store: cannot connect to postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres: .*ECONNREFUSED/);
  }, 60_000);

  it('an idle connection killed by the server emits no uncaught error: the store reconnects', async () => {
    const store = await open({ url: server.url, schema: freshSchemaName(), poolSize: 2 });
    await store.counters.add('k', 1);
    await withAdmin(server.url, async (admin) => {
      const { rows } = await admin.query<{ n: number }>(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'agent-platform'",
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
    });
    await waitUntil(async () => (await store.counters.add('k', 1).then(() => true, () => false)), {
      timeoutMs: 5_000,
      message: 'the store working again',
    });
    expect(await store.counters.get('k')).toBeGreaterThanOrEqual(2);
  });

  it('a transaction its process leaves idle (cut off, frozen) is ended by the server after 5 s, and a writer waiting on its row lock goes on', async () => {
    const handle = new PgHandle({ urls: [server.url], poolSize: 2, statementTimeoutMs: 30_000, connectTimeoutMs: 10_000 });
    try {
      const table = `idle_${freshSchemaName()}`;
      await handle.query(`CREATE TABLE ${table} (id int PRIMARY KEY, v int)`);
      await handle.query(`INSERT INTO ${table} VALUES (1, 0)`);
      const started = performance.now();
      // The row locked, then nothing for 7 s: what a process partitioned mid-transaction leaves.
      const idle = handle.transaction(async (client) => {
        await client.query(`SELECT * FROM ${table} WHERE id = 1 FOR UPDATE`);
        await new Promise((resolve) => setTimeout(resolve, 7_000));
        await client.query('SELECT 1');
      });
      const outcome = idle.then(() => 'committed', (error: Error) => error.message);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await handle.query(`UPDATE ${table} SET v = 2 WHERE id = 1`);
      const writerDoneAt = performance.now() - started;
      expect(await outcome).toMatch(/idle-in-transaction|terminat|connection/i);
      // Freed by the server's timeout (5 s), not by the idle transaction finishing (7 s).
      expect(writerDoneAt).toBeLessThan(6_500);
      expect((await handle.query<{ v: number }>(`SELECT v FROM ${table} WHERE id = 1`))[0]!.v).toBe(2);
    } finally {
      await handle.close();
    }
  }, 20_000);
});

/** The store's backends waiting on a lock. Inside a transaction pg_stat_activity is read once and cached: cleared first. */
async function lockWaiters(admin: pg.Client): Promise<{ pid: number }[]> {
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const sql = "SELECT pid FROM pg_stat_activity WHERE application_name = 'agent-platform' AND wait_event_type = 'Lock'";
  return (await admin.query<{ pid: number }>(sql)).rows;
}
