import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chainLink, expectGaplessChain, storeConformance, suitePostgres } from '@agent-platform/testkit';
import type { ChainEntry } from '@agent-platform/testkit';
import type { Doc, Store } from '../store.ts';
import { PostgresStore, SCHEMA_VERSION, openPostgresStore } from './index.ts';
import { dropSchema, freshSchemaName, postgresSkipReason, withAdmin } from './pg-test-server.ts';

const skipReason = postgresSkipReason();

describe.skipIf(skipReason !== null)(`postgres store against a server${skipReason === null ? '' : ` [SKIPPED: ${skipReason}]`}`, () => {
  const postgres = suitePostgres();
  let url: string;
  beforeAll(() => {
    url = postgres.url();
  });

  // A fresh schema per test: one server, no database creation on the hot path.
  storeConformance('postgres', async ({ now }) => {
    const schema = freshSchemaName();
    return {
      store: await openPostgresStore({ url, schema, clock: now }),
      reopen: () => openPostgresStore({ url, schema, clock: now }),
      cleanup: () => dropSchema(url, schema),
    };
  });

  describe('several stores on one database (as several processes)', () => {
    let schema: string;
    const opened: Store[] = [];
    const open = async () => {
      const store = await openPostgresStore({ url, schema, poolSize: 4 });
      opened.push(store);
      return store;
    };

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
      await dropSchema(url, schema);
    });

    it('reports itself as postgres and keeps one gapless chain when two stores append interleaved', async () => {
      schema = freshSchemaName();
      const [a, b] = [await open(), await open()];
      expect(a).toBeInstanceOf(PostgresStore);
      expect(await a.health()).toEqual({ kind: 'postgres', status: 'ok' });
      // Separate pools share no in-process queue: every collision goes through the retry path.
      const appends = Array.from({ length: 60 }, (_, i) => [
        a.log<ChainEntry>('chain').append(chainLink('a', i)),
        b.log<ChainEntry>('chain').append(chainLink('b', i)),
      ]).flat();
      await Promise.all(appends);
      expectGaplessChain(await b.log<ChainEntry>('chain').scan(1, 1000), 120);
    });

    it('keeps one gapless, fork-free chain when four child processes and this one append at once', async () => {
      schema = freshSchemaName();
      const store = await open();
      const log = store.log<ChainEntry>('chain');
      await log.append(chainLink('parent', 0)); // the table exists before the children race
      const children = ['c1', 'c2', 'c3', 'c4'].map((writer) => startAppendWorker(url, schema, writer, 40));
      try {
        await Promise.all(children.map((child) => child.ready));
        for (const child of children) child.go();
        const own = Array.from({ length: 40 }, (_, i) => log.append(chainLink('parent', i + 1)));
        await Promise.all([...own, ...children.map((child) => child.succeeded)]);
      } finally {
        for (const child of children) child.kill();
      }
      const entries = await log.scan(1, 1000);
      expectGaplessChain(entries, 201);
      for (const writer of ['c1', 'c2', 'c3', 'c4']) expect(entries.filter((e) => e.writer === writer)).toHaveLength(40);
    }, 60_000);

    it('shares versions, and counter limits stay exact across two stores', async () => {
      schema = freshSchemaName();
      const [a, b] = [await open(), await open()];
      await a.collection<Doc & { v: string }>('items').insert({ id: 'x', v: 'a' });
      await b.collection<Doc & { v: string }>('items').replace({ id: 'x', v: 'b' }, 1);
      await expect(a.collection<Doc & { v: string }>('items').replace({ id: 'x', v: 'a2' }, 1)).rejects.toThrow(
        /changed concurrently/,
      );
      const adds = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).counters.add('quota', 1, { limit: 25 }));
      expect((await Promise.all(adds)).filter((r) => r.applied)).toHaveLength(25);
      expect(await b.counters.get('quota')).toBe(25);
    });

    it('applies an addMany batch all or nothing: an overflowing key leaves every counter unchanged', async () => {
      schema = freshSchemaName();
      const [a, b] = [await open(), await open()];
      await a.counters.add('near-max', Number.MAX_SAFE_INTEGER - 1);
      await expect(
        a.counters.addMany([
          { key: 'first', delta: 1 },
          { key: 'near-max', delta: 5 },
        ]),
      ).rejects.toThrow(/would overflow/);
      await expect(a.counters.add('near-max', 5)).rejects.toThrow(RangeError);
      expect(await b.counters.get('near-max')).toBe(Number.MAX_SAFE_INTEGER - 1);
      expect(await b.counters.get('first')).toBe(0);
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 === 0 ? a : b).counters.addMany([
            { key: 'first', delta: 1 },
            { key: 'second', delta: 2 },
          ]),
        ),
      );
      expect(await a.counters.list('f')).toEqual({ first: 40 });
      expect(await a.counters.get('second')).toBe(80);
    });

    it('migrates once when several stores open an empty schema together', async () => {
      schema = freshSchemaName();
      const stores = await Promise.all(Array.from({ length: 4 }, () => open()));
      expect(stores).toHaveLength(4);
      const rows = await withAdmin(url, async (client) => (await client.query(`SELECT version FROM "${schema}".ap_schema_version ORDER BY version`)).rows);
      // Each migration recorded once, in order.
      expect(rows).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })));
      await stores[0]!.counters.add('k', 1);
      expect(await stores[3]!.counters.get('k')).toBe(1);
    });

    it('caches a read-mostly table made before its cache existed (an upgrade) only once it carries the trigger, and then sees writes made outside the platform', async () => {
      schema = freshSchemaName();
      const before = await open();
      await before.collection<Doc & { name: string }>('keys').insert({ id: 'k', name: 'v1' });
      // The table as code before the read caches left it: no trigger.
      await withAdmin(url, (client) => client.query(`DROP TRIGGER IF EXISTS ap_read_version ON "${schema}".c_keys`));

      const upgraded = (await open()).collection<Doc & { name: string }>('keys', { readMostly: true });
      expect((await upgraded.get('k'))?.doc.name).toBe('v1');
      const triggers = await withAdmin(
        url,
        async (client) =>
          (await client.query(`SELECT tgname FROM pg_trigger WHERE tgrelid = '"${schema}".c_keys'::regclass AND NOT tgisinternal`)).rows,
      );
      expect(triggers).toEqual([{ tgname: 'ap_read_version' }]);
      // A write by hand (psql, a migration script): the cache follows it too.
      await withAdmin(url, (client) => client.query(`UPDATE "${schema}".c_keys SET doc = '{"id":"k","name":"v2"}', version = 2`));
      expect((await upgraded.get('k'))?.doc.name).toBe('v2');
      await withAdmin(url, (client) => client.query(`TRUNCATE "${schema}".c_keys`));
      expect(await upgraded.get('k')).toBeNull();
    });

    it('builds on the true tip when the log was rolled back or rewritten under a process that appended to it (a restore)', async () => {
      schema = freshSchemaName();
      const chain = (await open()).log<ChainEntry>('chain');
      for (let i = 1; i <= 3; i++) await chain.append(chainLink('a', i));
      // Rolled back to seq 2 (an older backup restored on another host): seq 4 would leave a gap.
      await withAdmin(url, (client) => client.query(`DELETE FROM "${schema}".l_chain WHERE seq = 3`));
      expect(await chain.append(chainLink('a', 4))).toMatchObject({ seq: 3, prev: 'a#2@2' });
      // The tip's seq kept but its entry another one: the next entry names that one.
      await withAdmin(url, (client) =>
        client.query(`UPDATE "${schema}".l_chain SET entry = '{"writer":"r","n":9,"prev":"a#2@2"}' WHERE seq = 3`),
      );
      expect(await chain.append(chainLink('a', 5))).toMatchObject({ seq: 4, prev: 'r#9@3' });
      expectGaplessChain(await chain.scan(1, 100), 4);
    });

    it('refuses to open a schema newer than this code, naming both versions', async () => {
      schema = freshSchemaName();
      await (await open()).close();
      await withAdmin(url, (client) => client.query(`INSERT INTO "${schema}".ap_schema_version (version) VALUES (99)`));
      await expect(openPostgresStore({ url, schema })).rejects.toThrow(
        `schema ${schema} is at version 99, newer than this code's version ${SCHEMA_VERSION}`,
      );
    });
  });
});

describe('postgres store without a server', () => {
  it('fails to open with an error naming the host but never the password', async () => {
    const port = await closedPort();
    const url = `postgres://ap_user:s3cr%40t-pw@127.0.0.1:${port}/agent_platform`;
    const failure = await openPostgresStore({ url, connectTimeoutMs: 1000 }).then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(failure?.message).toContain(`postgres store: cannot connect to postgres://ap_user:***@127.0.0.1:${port}/agent_platform`);
    expect(failure?.message).not.toMatch(/s3cr/);
    const other = await openPostgresStore({
      url: `postgres://ap@127.0.0.1:${port}/x`,
      password: 'hunter2-secret',
      connectTimeoutMs: 1000,
    }).then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(other?.message).toMatch(/ECONNREFUSED/);
    expect(other?.message).not.toContain('hunter2');
  });

  it('refuses names that are not plain identifiers before touching the server', async () => {
    await expect(openPostgresStore({ url: 'postgres://127.0.0.1:1/x', schema: 'a"; DROP' })).rejects.toThrow(/invalid schema name/);
  });
});

const WORKER = fileURLToPath(new URL('./append-worker.fixture.ts', import.meta.url));

/** Spawns the fixture under tsx; `ready` resolves once it has opened the store. */
function startAppendWorker(url: string, schema: string, writer: string, count: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, url, schema, writer, String(count)], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`append worker not ready within 20 s: ${stderr}`)), 20_000);
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('ready\n')) {
        clearTimeout(deadline);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(deadline);
      reject(new Error(`append worker exited with ${String(code)} before ready: ${stderr}`));
    });
  });
  const succeeded = exited.then((code) => {
    if (code !== 0) throw new Error(`append worker exited with ${String(code)}: ${stderr}`);
  });
  succeeded.catch(() => undefined);
  return {
    ready,
    succeeded,
    go: () => child.stdin.write('go\n'),
    kill: () => {
      if (child.exitCode === null) child.kill();
    },
  };
}

/** A loopback port nothing listens on (bound, then released), so connections are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
