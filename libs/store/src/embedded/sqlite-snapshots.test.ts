import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Doc, Store } from '../store.ts';
import { SnapshotError, type StorePart } from '../store-snapshots.ts';
import { openEmbeddedStore, storeSnapshotsOf } from './embedded-store.ts';
import { StoreInUseError } from './sqlite-handle.ts';

const ALL: StorePart = { collections: 'all', logs: 'all', counterPrefixes: 'all' };
type Item = Doc & { v: string };

let dir: string;
const open: Store[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-snapshots-'));
});
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function storeAt(name: string): Promise<Store> {
  const store = await openEmbeddedStore({ path: join(dir, name) });
  open.push(store);
  return store;
}

function snapshotsOf(store: Store) {
  const snapshots = storeSnapshotsOf(store);
  if (snapshots === null) throw new Error('not an embedded store');
  return snapshots;
}

describe('embedded store snapshots', () => {
  it('copies the store as of one instant while appends go on, and restores it into another store', async () => {
    const live = await storeAt('live.db');
    const log = live.log<{ n: number }>('chain');
    const items = live.collection<Item>('items');
    for (let i = 0; i < 50; i++) await log.append(() => ({ n: i }));
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        // Each round writes a log entry and then a counter of the same number: a point-in-time copy
        // never holds a counter ahead of the log.
        await log.append(() => ({ n: 1000 + i }));
        await live.counters.add('appended', 1);
        await items.upsert({ id: `i${i % 5}`, v: String(i) });
      }
    })();
    const summary = await snapshotsOf(live).snapshot(join(dir, 'copy.db'), ALL);
    writing = false;
    await writer;

    const copy = await storeAt('copy.db');
    const entries = await copy.log<{ n: number }>('chain').scan(1, 10_000);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: entries.length }, (_, i) => i + 1));
    expect(summary.logs.chain).toBe(entries.length);
    expect(await copy.counters.get('appended')).toBeLessThanOrEqual(entries.length - 50);
    expect(await copy.counters.get('appended')).toBeGreaterThanOrEqual(entries.length - 51);

    const target = await storeAt('target.db');
    await target.collection<Item>('stale').insert({ id: 'old', v: 'gone after a full restore' });
    await snapshotsOf(target).restore(join(dir, 'copy.db'), ALL);
    expect(await target.log('chain').count()).toBe(entries.length);
    expect(await target.collection<Item>('stale').count()).toBe(0);
    // A table the restore created works through the port, indexes included.
    await target.collection<Item>('items').insert({ id: 'new', v: 'x' });
    expect(await target.collection<Item>('items').count()).toBe(summary.collections.items! + 1);
  });

  it('a partial snapshot holds its part only, with nothing of the rest left in the file', async () => {
    const live = await storeAt('live.db');
    await live.collection<Item>('agents').insert({ id: 'a1', v: 'agent one' });
    await live.collection<Item>('vault').insert({ id: 'k', v: 'SECRET-SEALED-VALUE' });
    await live.log<{ n: number }>('audit').append(() => ({ n: 1 }));
    await live.counters.add('agent:a1:received', 3);
    await live.counters.add('licence:x:spend', 7);
    const part: StorePart = { collections: ['agents'], logs: [], counterPrefixes: ['agent:'] };
    const summary = await snapshotsOf(live).snapshot(join(dir, 'part.db'), part);
    expect(summary).toEqual({ collections: { agents: 1 }, logs: {}, counters: 1 });
    expect((await readFile(join(dir, 'part.db'))).includes('SECRET-SEALED-VALUE')).toBe(false);
  });

  it('restores only the part it is given, and never lowers a kept counter', async () => {
    const source = await storeAt('source.db');
    await source.collection<Item>('agents').insert({ id: 'a1', v: 'from the backup' });
    await source.counters.add('agent:a1:received', 2);
    await source.counters.add('licence:x:spend', 5);
    await source.counters.add('licence:x:tx', 50);
    await snapshotsOf(source).snapshot(join(dir, 'snap.db'), ALL);

    const live = await storeAt('live.db');
    await live.collection<Item>('agents').insert({ id: 'a2', v: 'made after the backup' });
    await live.collection<Item>('vault').insert({ id: 'k', v: 'live value' });
    await live.counters.add('agent:a2:received', 9);
    await live.counters.add('licence:x:spend', 40);
    await live.counters.add('licence:x:tx', 10);

    await snapshotsOf(live).restore(join(dir, 'snap.db'), {
      collections: ['agents'],
      logs: [],
      counterPrefixes: ['agent:'],
    });
    expect((await live.collection<Item>('agents').find()).map((r) => r.doc.id)).toEqual(['a1']);
    expect((await live.collection<Item>('vault').get('k'))?.doc.v).toBe('live value');
    expect(await live.counters.list('agent:')).toEqual({ 'agent:a1:received': 2 });
    expect(await live.counters.get('licence:x:spend')).toBe(40);

    await snapshotsOf(live).restore(join(dir, 'snap.db'), ALL, { keepHigherCounterPrefixes: ['licence:'] });
    expect(await live.collection<Item>('vault').count()).toBe(0);
    // Spend already made stays spent; a lower live value takes the backup's.
    expect(await live.counters.get('licence:x:spend')).toBe(40);
    expect(await live.counters.get('licence:x:tx')).toBe(50);
  });

  it('another connection to the file sees the whole restore at once', async () => {
    const source = await storeAt('source.db');
    for (let i = 0; i < 20; i++) await source.collection<Item>('items').insert({ id: `s${i}`, v: 'backup' });
    await snapshotsOf(source).snapshot(join(dir, 'snap.db'), ALL);
    const live = await storeAt('live.db');
    for (let i = 0; i < 5; i++) await live.collection<Item>('items').insert({ id: `l${i}`, v: 'live' });
    const other = await storeAt('live.db');
    await snapshotsOf(live).restore(join(dir, 'snap.db'), ALL);
    const seen = await other.collection<Item>('items').find();
    expect(seen.map((r) => r.doc.v)).toEqual(Array(20).fill('backup'));
  });

  it('a read-mostly collection answers what a restore brought back, not what it remembered', async () => {
    const source = await storeAt('source.db');
    await source.collection<Item>('agents').insert({ id: 'a1', v: 'from the backup' });
    await snapshotsOf(source).snapshot(join(dir, 'snap.db'), ALL);
    const live = await storeAt('live.db');
    const agents = live.collection<Item>('agents', { readMostly: true });
    await live.collection<Item>('agents').insert({ id: 'a1', v: 'changed after the backup' });
    expect((await agents.get('a1'))?.doc.v).toBe('changed after the backup');
    expect((await agents.find()).map((r) => r.doc.v)).toEqual(['changed after the backup']);
    await snapshotsOf(live).restore(join(dir, 'snap.db'), ALL);
    expect((await agents.get('a1'))?.doc.v).toBe('from the backup');
    expect((await agents.find()).map((r) => r.doc.v)).toEqual(['from the backup']);
  });

  it('refuses a damaged file, a foreign database and a newer layout, changing nothing', async () => {
    const live = await storeAt('live.db');
    await live.collection<Item>('items').insert({ id: 'keep', v: 'live' });
    const snapshots = snapshotsOf(live);

    await writeFile(join(dir, 'junk.db'), Buffer.alloc(8192, 7));
    await expect(snapshots.restore(join(dir, 'junk.db'), ALL)).rejects.toThrow(SnapshotError);

    const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => {
      exec(sql: string): void;
      close(): void;
    };
    const foreign = new Database(join(dir, 'foreign.db'));
    foreign.exec('CREATE TABLE users (name TEXT)');
    foreign.close();
    await expect(snapshots.restore(join(dir, 'foreign.db'), ALL)).rejects.toThrow(
      /tables this platform does not make: users/,
    );

    const newer = new Database(join(dir, 'newer.db'));
    newer.exec(
      'CREATE TABLE c_items (id TEXT PRIMARY KEY, version INTEGER, body TEXT, expires_at INTEGER, shard INTEGER)',
    );
    newer.exec(`INSERT INTO c_items VALUES ('x', 1, '{"id":"x","v":"newer"}', NULL, 1)`);
    newer.close();
    await expect(snapshots.restore(join(dir, 'newer.db'), ALL)).rejects.toThrow(
      /columns this store lacks \(shard\)/,
    );
    expect((await live.collection<Item>('items').find()).map((r) => r.doc.id)).toEqual(['keep']);
    // The store still works after the refusals (the snapshot was detached).
    await live.collection<Item>('items').insert({ id: 'after', v: 'live' });
  });

  it('an exclusive open is refused while another connection holds the file, and holds it alone', async () => {
    const path = join(dir, 'shared.db');
    const first = await storeAt('shared.db');
    await expect(openEmbeddedStore({ path, exclusive: true })).rejects.toThrow(StoreInUseError);
    await first.close();
    open.splice(open.indexOf(first), 1);
    const alone = await openEmbeddedStore({ path, exclusive: true });
    await alone.collection<Item>('items').insert({ id: 'x', v: 'y' });
    await expect(openEmbeddedStore({ path, exclusive: true })).rejects.toThrow(StoreInUseError);
    await alone.close();
    expect(await (await storeAt('shared.db')).collection<Item>('items').count()).toBe(1);
  });
});
