import { describe, expect, it } from 'vitest';
import { suitePostgres } from '@agent-platform/testkit';
import { PgHandle } from './pg-handle.ts';
import { StatementNames } from './pg-statement-names.ts';
import { openPostgresStore } from './postgres-store.ts';
import { dropSchema, freshSchemaName, postgresSkipReason, withAdmin } from './pg-test-server.ts';

const skipReason = postgresSkipReason();

describe('statement names', () => {
  it('gives each text one name for good, and none past the cap', () => {
    const names = new StatementNames(2);
    expect([names.nameOf('SELECT $1'), names.nameOf('SELECT $2'), names.nameOf('SELECT $1')]).toEqual(['ap_0', 'ap_1', 'ap_0']);
    expect(names.nameOf('SELECT $3')).toBeUndefined();
    expect(names.nameOf('SELECT $2')).toBe('ap_1');
  });
});

describe.skipIf(skipReason !== null)(`postgres prepared statements${skipReason === null ? '' : ` [SKIPPED: ${skipReason}]`}`, () => {
  const postgres = suitePostgres();

  /** One connection, so that the session-local `pg_prepared_statements` is the one the statements ran on. */
  const oneConnection = (preparedStatements?: boolean) =>
    new PgHandle({
      urls: [postgres.url()],
      poolSize: 1,
      statementTimeoutMs: 5000,
      connectTimeoutMs: 5000,
      ...(preparedStatements === undefined ? {} : { preparedStatements }),
    });
  const prepared = (handle: PgHandle) =>
    handle.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name');

  it('prepares a statement once per connection and runs it by name afterwards, parameters or not', async () => {
    const handle = oneConnection();
    try {
      for (const n of [1, 2, 3]) expect(await handle.query<{ x: number }>('SELECT $1::int + 1 AS x', [n])).toEqual([{ x: n + 1 }]);
      expect(await handle.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(await handle.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      // Text alone (transaction control, schema changes) goes unnamed.
      expect(await handle.transaction(async (client) => (await client.query('SELECT 2 AS two')).rows)).toEqual([{ two: 2 }]);
      expect(await prepared(handle)).toEqual([
        { name: 'ap_0', statement: 'SELECT $1::int + 1 AS x' },
        { name: 'ap_1', statement: 'SELECT 1 AS one' },
        { name: 'ap_2', statement: 'SELECT name, statement FROM pg_prepared_statements ORDER BY name' },
      ]);
    } finally {
      await handle.close();
    }
  });

  it('sends every statement unnamed when turned off', async () => {
    const handle = oneConnection(false);
    try {
      expect(await handle.query<{ x: number }>('SELECT $1::int + 1 AS x', [1])).toEqual([{ x: 2 }]);
      expect(await prepared(handle)).toEqual([]);
    } finally {
      await handle.close();
    }
  });

  it('keeps a name usable after the transaction it was prepared in rolled back, and after a parse refused in an aborted one', async () => {
    const handle = oneConnection();
    try {
      await expect(
        handle.transaction(async (client) => {
          await client.query('SELECT $1::int AS x', [1]);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await handle.query('SELECT $1::int AS x', [2])).toEqual([{ x: 2 }]);

      // First sent inside a transaction already aborted: the server refuses its parse (25P02).
      await expect(
        handle.transaction(async (client) => {
          await client.query('SELECT 1 / 0').catch(() => undefined);
          await client.query('SELECT $1::int * 10 AS y', [3]);
        }),
      ).rejects.toMatchObject({ code: '25P02' });
      expect(await handle.query('SELECT $1::int * 10 AS y', [4])).toEqual([{ y: 40 }]);
      expect((await prepared(handle)).map((row) => row.name)).toEqual(['ap_0', 'ap_1', 'ap_2']);
    } finally {
      await handle.close();
    }
  });

  it('prepares again on the connection that replaces one the server ended', async () => {
    const handle = oneConnection();
    try {
      expect(await handle.query('SELECT $1::int AS x', [1])).toEqual([{ x: 1 }]);
      const [{ pid }] = (await handle.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
      await withAdmin(postgres.url(), (admin) => admin.query('SELECT pg_terminate_backend($1)', [pid]));
      // The pool hands out the dead connection once (the lost connection is reported) or a new one.
      await handle.query('SELECT $1::int AS x', [2]).catch((err: Error) => expect(err.message).toMatch(/connection/));
      expect(await handle.query('SELECT $1::int AS x', [3])).toEqual([{ x: 3 }]);
      expect((await prepared(handle)).map((row) => row.statement)).toEqual([
        'SELECT $1::int AS x',
        'SELECT name, statement FROM pg_prepared_statements ORDER BY name',
      ]);
    } finally {
      await handle.close();
    }
  });

  it('runs a store with them turned off (a pooler that cannot keep named statements)', async () => {
    const schema = freshSchemaName();
    const store = await openPostgresStore({ url: postgres.url(), schema, poolSize: 2, preparedStatements: false });
    try {
      const things = store.collection<{ id: string; n: number }>('things', { indexes: [{ field: 'n' }] });
      await things.insert({ id: 'a', n: 1 });
      await things.update('a', (current) => ({ id: 'a', n: (current?.doc.n ?? 0) + 1 }));
      expect((await things.find({ where: { n: 2 } })).map((v) => v.doc)).toEqual([{ id: 'a', n: 2 }]);
      const events = store.log<{ i: number }>('events');
      await events.append(() => ({ i: 1 }));
      await events.append((tip) => ({ i: (tip?.i ?? 0) + 1 }));
      expect((await events.scan(1, 10)).map((e) => [e.seq, e.i])).toEqual([
        [1, 1],
        [2, 2],
      ]);
      expect(await store.counters.add('c', 5)).toMatchObject({ applied: true, value: 5 });
    } finally {
      await store.close();
      await dropSchema(postgres.url(), schema);
    }
  });
});
