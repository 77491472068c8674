import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chainLink, expectGaplessChain, storeConformance } from '@agent-platform/testkit';
import type { ChainEntry } from '@agent-platform/testkit';
import { StoreConflictError } from '../store.ts';
import type { Doc, Store } from '../store.ts';
import { EmbeddedStore, openEmbeddedStore } from './index.ts';
import { appendInLockstep } from './lockstep-appends.fixture.ts';

storeConformance('embedded', async ({ now }) => {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-store-'));
  const path = join(dir, 'platform.db');
  return {
    store: await openEmbeddedStore({ path, clock: now }),
    reopen: () => openEmbeddedStore({ path, clock: now }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

/** A bare better-sqlite3 connection: another process's view of the file. */
interface RawSqlite {
  exec(sql: string): void;
  close(): void;
}

describe('embedded store', () => {
  let dir: string;
  let path: string;
  const opened: Store[] = [];
  const open = async () => {
    const store = await openEmbeddedStore({ path });
    opened.push(store);
    return store;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'embedded-store-'));
    path = join(dir, 'nested', 'data', 'platform.db');
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the data directory, reports itself as embedded and names the closed state', async () => {
    const store = await open();
    expect(store).toBeInstanceOf(EmbeddedStore);
    expect(existsSync(path)).toBe(true);
    expect(await store.health()).toEqual({ kind: 'embedded', status: 'ok' });
    const log = store.log<ChainEntry>('chain');
    await store.close();
    await store.close();
    expect(await store.health()).toMatchObject({ kind: 'embedded', status: 'down' });
    await expect(log.append(chainLink('w', 1))).rejects.toThrow('embedded store is closed');
  });

  it('refuses at once a write submitted from inside another write, instead of leaving it waiting (issue "Hardening" 11)', async () => {
    const store = await open();
    let nested: Promise<unknown> | undefined;
    const outer = await store.collection<Doc & { n: number }>('items').update('x', () => {
      nested = store.counters.add('inner', 1);
      return { id: 'x', n: 1 };
    });
    expect(outer?.doc).toEqual({ id: 'x', n: 1 });
    const stillPending = new Promise((resolve) => setTimeout(() => resolve('still pending after 1 s'), 1_000));
    const outcome = await Promise.race([nested!.then(() => 'resolved', (e: unknown) => (e as Error).message), stillPending]);
    expect(outcome).toMatch(/inside another write/);
    expect(await store.counters.get('inner')).toBe(0);
  });

  it('syncs every commit to disk by default, and only at checkpoints with durability "normal"', async () => {
    const full = await open();
    expect((full as EmbeddedStore).durability).toBe('full');
    const normal = await openEmbeddedStore({ path: join(dir, 'normal.db'), durability: 'normal' });
    opened.push(normal);
    expect((normal as EmbeddedStore).durability).toBe('normal');
  });

  it('refuses names that are not plain identifiers', async () => {
    const store = await open();
    expect(() => store.collection('items; DROP TABLE counters')).toThrow(/invalid collection name/);
    expect(() => store.log('audit-log')).toThrow(/invalid log name/);
    expect(() =>
      store.collection<Doc & { a: string }>('ok', { indexes: [{ field: "a') --" as 'a' }] }),
    ).toThrow(/invalid field name/);
    await expect(store.collection('ok').find({ where: { 'x"y': 1 } as never })).rejects.toThrow(
      /invalid field name/,
    );
    expect(await store.counters.add('still-there', 1)).toEqual({ value: 1, applied: true });
  });

  it('keeps one gapless chain when two stores on the same file append interleaved', async () => {
    const [a, b] = [await open(), await open()];
    const appends = Array.from({ length: 100 }, (_, i) => [
      a.log<ChainEntry>('chain').append(chainLink('a', i)),
      b.log<ChainEntry>('chain').append(chainLink('b', i)),
    ]).flat();
    await Promise.all(appends);
    expectGaplessChain(await a.log<ChainEntry>('chain').scan(1, 1000), 200);
    // Taking turns, each store links to the other's last entry: it saw the other's commit.
    for (let i = 100; i < 110; i++) {
      await a.log<ChainEntry>('chain').append(chainLink('a', i));
      await b.log<ChainEntry>('chain').append(chainLink('b', i));
    }
    const entries = await b.log<ChainEntry>('chain').scan(201, 100);
    expectGaplessChain(await b.log<ChainEntry>('chain').scan(1, 1000), 220);
    expect(entries.map((e) => e.writer)).toEqual(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'a' : 'b')),
    );
    expect(entries.slice(1).every((e, i) => e.prev?.startsWith(`${entries[i]!.writer}#`))).toBe(true);
  });

  it('commits the writes of one event-loop turn together, each atomic on its own', async () => {
    const [a, b] = [await open(), await open()];
    const items = a.collection<Doc & { v: string }>('items');
    await items.insert({ id: 'taken', v: 'first' });
    // One batch: a duplicate insert and a stale replace fail alone; the writes around them commit.
    const results = await Promise.allSettled([
      a.counters.add('n', 1),
      items.insert({ id: 'taken', v: 'again' }),
      items.insert({ id: 'fresh', v: 'new' }),
      items.replace({ id: 'taken', v: 'stale' }, 9),
      a.log<ChainEntry>('chain').append(chainLink('a', 1)),
      a.counters.add('n', 1),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(await b.counters.get('n')).toBe(2);
    expect((await b.collection<Doc & { v: string }>('items').get('taken'))?.doc.v).toBe('first');
    expect((await b.collection<Doc & { v: string }>('items').get('fresh'))?.doc.v).toBe('new');
    expect(await b.log<ChainEntry>('chain').count()).toBe(1);
  });

  it('commits the writes still waiting for their batch when the store closes', async () => {
    const store = await openEmbeddedStore({ path });
    const pending = [store.counters.add('late', 1), store.collection<Doc>('items').insert({ id: 'late' })];
    await store.close();
    await Promise.all(pending);
    const reopened = await open();
    expect(await reopened.counters.get('late')).toBe(1);
    expect(await reopened.collection<Doc>('items').get('late')).not.toBeNull();
    await expect(store.counters.add('late', 1)).rejects.toThrow('embedded store is closed');
  });

  it('waits for a write lock held by another connection without blocking the event loop, reads going on', async () => {
    const store = await open();
    await store.counters.add('n', 1);
    // Another process's long write transaction, held by a raw connection to the same file.
    const other = new (createRequire(import.meta.url)('better-sqlite3') as new (p: string) => RawSqlite)(path);
    other.exec('BEGIN IMMEDIATE');
    other.exec("UPDATE counters SET value = 10 WHERE key = 'n'");
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const write = store.counters.add('n', 1);
    await new Promise((r) => setTimeout(r, 150));
    expect(ticks).toBeGreaterThan(5);
    expect(await store.counters.get('n')).toBe(1);
    other.exec('COMMIT');
    other.close();
    expect(await write).toEqual({ value: 11, applied: true });
    clearInterval(ticker);
  });

  it('shares versions and counter limits between two stores on the same file', async () => {
    const [a, b] = [await open(), await open()];
    await a.collection<Doc & { v: string }>('items').insert({ id: 'x', v: 'a' });
    await b.collection<Doc & { v: string }>('items').replace({ id: 'x', v: 'b' }, 1);
    await expect(
      a.collection<Doc & { v: string }>('items').replace({ id: 'x', v: 'a2' }, 1),
    ).rejects.toBeInstanceOf(StoreConflictError);
    const adds = Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0 ? a : b).counters.add('quota', 1, { limit: 15 }),
    );
    expect((await Promise.all(adds)).filter((r) => r.applied)).toHaveLength(15);
    expect(await b.counters.get('quota')).toBe(15);
  });

  it('answers a read-mostly collection from memory, never older than another connection\'s last commit, and frozen', async () => {
    const [a, b] = [await open(), await open()];
    type Item = Doc & { v: string };
    const cachedA = a.collection<Item>('items', { readMostly: true });
    await a.collection<Item>('items').insert({ id: 'x', v: 'a' });
    const first = await cachedA.get('x');
    expect(first?.doc.v).toBe('a');
    // The same object again: it came from memory, and nobody can change it for the next reader.
    expect(await cachedA.get('x')).toBe(first);
    expect(() => {
      (first!.doc as { v: string }).v = 'changed';
    }).toThrow(TypeError);
    await expect(cachedA.find().then((all) => all.push(all[0]!))).rejects.toThrow(TypeError);

    // Another connection on the file (another process of a fleet) writes: the next read sees it.
    await b.collection<Item>('items').replace({ id: 'x', v: 'b' }, 1);
    expect(await cachedA.get('x')).toEqual({ doc: { id: 'x', v: 'b' }, version: 2 });
    await b.collection<Item>('items').insert({ id: 'z', v: 'z' });
    expect((await cachedA.find()).map((e) => e.doc.id)).toEqual(['x', 'z']);
    // Raw SQL from a bare connection, as any other writer of the file would.
    const raw = new (createRequire(import.meta.url)('better-sqlite3'))(path) as RawSqlite;
    raw.exec(`UPDATE c_items SET body = '{"id":"z","v":"raw"}', version = version + 1 WHERE id = 'z'`);
    raw.close();
    expect(await cachedA.get('z')).toEqual({ doc: { id: 'z', v: 'raw' }, version: 2 });
  });

  it('applies an addMany batch all or nothing: an overflowing key rolls back the whole batch', async () => {
    const [a, b] = [await open(), await open()];
    await a.counters.add('near-max', Number.MAX_SAFE_INTEGER - 1);
    await expect(
      a.counters.addMany([
        { key: 'first', delta: 1 },
        { key: 'near-max', delta: 5 },
      ]),
    ).rejects.toThrow(/would overflow/);
    expect(await b.counters.get('first')).toBe(0);
    expect(await b.counters.get('near-max')).toBe(Number.MAX_SAFE_INTEGER - 1);
    // Batches from two stores on one file interleave without losing an increment.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).counters.addMany([
          { key: 'first', delta: 1 },
          { key: 'second', delta: 2 },
        ]),
      ),
    );
    expect(await a.counters.list('')).toMatchObject({ first: 40, second: 80 });
  });

  it('keeps one gapless chain when a second process appends to the same file', async () => {
    const store = await open();
    const log = store.log<ChainEntry>('chain');
    const child = startAppendWorker(path, 'child', 100, MAX_LEAD);
    try {
      await child.ready;
      child.go();
      // Fails fast with the child's stderr if it dies instead of waiting out the lockstep deadline.
      await Promise.all([appendInLockstep(log, 'parent', 100, MAX_LEAD), child.succeeded]);
    } finally {
      child.kill();
    }
    const entries = await log.scan(1, 1000);
    expectGaplessChain(entries, 200);
    expect(entries.filter((e) => e.writer === 'child')).toHaveLength(100);
    // Lockstep caps a same-writer run at 2 * MAX_LEAD + 2 entries, so 200 entries switch at least
    // 24 times; fewer would mean a process counted the log without seeing the other's commits.
    const switches = entries.filter((e, i) => i > 0 && e.writer !== entries[i - 1]!.writer).length;
    expect(switches).toBeGreaterThanOrEqual(24);
  }, 20_000);
  it('opens one new file from six processes at once: every one boots, each write counted once', async () => {
    const at = String(Date.now() + 1_500);
    const children = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ['--import', 'tsx', OPENER, path, at], { cwd: fileURLToPath(new URL('.', import.meta.url)), stdio: ['ignore', 'ignore', 'pipe'] }),
    );
    const outcomes = await Promise.all(
      children.map(
        (child) =>
          new Promise<{ code: number | null; stderr: string }>((resolve) => {
            let stderr = '';
            child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
            child.on('exit', (code) => resolve({ code, stderr }));
          }),
      ),
    );
    expect(outcomes.filter((o) => o.code !== 0)).toEqual([]);
    expect(await (await open()).counters.get('opened')).toBe(6);
  }, 20_000);
});

const MAX_LEAD = 3;
const OPENER = fileURLToPath(new URL('./open-race.fixture.ts', import.meta.url));
const WORKER = fileURLToPath(new URL('./append-worker.fixture.ts', import.meta.url));

/** Spawns the fixture under tsx; `ready` resolves once it has opened the store. */
function startAppendWorker(dbPath: string, writer: string, count: number, maxLead: number) {
  const args = [WORKER, dbPath, writer, String(count), String(maxLead)];
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(
      () => reject(new Error(`append worker not ready within 10 s: ${stderr}`)),
      10_000,
    );
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
  // Observed by the test only after `ready`; an early death is reported through `ready` instead.
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
