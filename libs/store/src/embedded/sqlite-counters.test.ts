import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.ts';
import { openEmbeddedStore } from './index.ts';
import { LIST_SQL } from './sqlite-counters.ts';

// Issue "Hardening" 10, the embedded adapter's side: prefix reads used `substr(key, 1, ?) = ?`,
// which no index serves (1.05 M rate-limit rows made GET /agents/{id} 6x slower), and nothing
// ever removed a counter. The behaviour both adapters share is in the conformance suite.
interface RawDb {
  prepare(sql: string): { all(...params: unknown[]): unknown[]; get(...params: unknown[]): unknown; run(...params: unknown[]): unknown };
  exec(sql: string): void;
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

let dir: string;
let path: string;
let store: Store | undefined;
let nowMs = Date.parse('2026-11-24T12:00:00.000Z');
const clock = () => new Date(nowMs);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-counters-'));
  path = join(dir, 'platform.db');
  nowMs = Date.parse('2026-11-24T12:00:00.000Z');
});
afterEach(async () => {
  await store?.close();
  store = undefined;
  await rm(dir, { recursive: true, force: true });
});

const rows = (): number => {
  const db = new Database(path);
  try {
    return (db.prepare('SELECT count(*) AS n FROM counters').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('embedded counters', () => {
  it('reads a prefix as a range of the key index, never a scan of every counter', async () => {
    store = await openEmbeddedStore({ path, clock });
    await store.counters.add('ratelimit:agent:a:1', 1);
    const db = new Database(path);
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${LIST_SQL}`).all('ratelimit:', 'ratelimit;', 0) as { detail: string }[]).map((r) => r.detail);
    db.close();
    expect(plan.join('\n')).toMatch(/SEARCH counters USING INDEX \S+ \(key>\? AND key<\?\)/);
    expect(plan.join('\n')).not.toMatch(/SCAN counters/);
  });

  it('deletes expired counters in bounded batches while expiring adds go on', async () => {
    store = await openEmbeddedStore({ path, clock });
    const inAMinute = () => new Date(nowMs + 60_000).toISOString();
    for (let i = 0; i < 50; i++) await store.counters.add(`ratelimit:agent:a${i}:1`, 1, { expiresAt: inAMinute() });
    await store.counters.add('budget:kept', 7);
    expect(rows()).toBe(51);
    nowMs += 2 * 60_000;
    await store.counters.add('ratelimit:agent:a0:3', 1, { expiresAt: inAMinute() });
    expect(rows()).toBe(2);
    expect(await store.counters.get('budget:kept')).toBe(7);
  });

  it('opens a file written before counters could expire, keeping its counters', async () => {
    const db = new Database(path);
    db.exec('CREATE TABLE counters (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) STRICT');
    db.prepare('INSERT INTO counters (key, value) VALUES (?, ?)').run('spend:old', 42);
    db.close();
    store = await openEmbeddedStore({ path, clock });
    expect(await store.counters.get('spend:old')).toBe(42);
    expect(await store.counters.add('window:1', 1, { expiresAt: new Date(nowMs + 1_000).toISOString() })).toEqual({ value: 1, applied: true });
    nowMs += 2_000;
    expect(await store.counters.list('')).toEqual({ 'spend:old': 42 });
  });
});
