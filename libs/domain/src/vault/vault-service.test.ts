import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { PlatformError } from '../errors/platform-error.ts';
import { fixedClock } from '../time/clock.ts';
import { createVault } from './vault-service.ts';

interface RawDb {
  prepare(sql: string): { run(...p: unknown[]): unknown; all(...p: unknown[]): unknown[] };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => RawDb;

let dir: string;
let dbPath: string;
let store: Store;
const clock = fixedClock('2026-03-01T10:00:00.000Z');
const key = randomBytes(32);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vault-'));
  dbPath = join(dir, 'platform.db');
  store = await openEmbeddedStore({ path: dbPath });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function rawBodies(): string[] {
  const db = new Database(dbPath);
  try {
    return (db.prepare('SELECT body FROM c_vault').all() as { body: string }[]).map((r) => r.body);
  } finally {
    db.close();
  }
}

describe('vault', () => {
  it('rotates: the next resolve sees the new value', async () => {
    const vault = createVault({ store, clock, key });
    expect(await vault.put('openai-key', 'value-A')).toEqual({
      key: 'openai-key',
      stored_at: '2026-03-01T10:00:00.000Z',
    });
    expect(await vault.resolve('openai-key')).toBe('value-A');
    clock.advance(60_000);
    expect(await vault.put('openai-key', 'value-B')).toEqual({
      key: 'openai-key',
      stored_at: '2026-03-01T10:01:00.000Z',
    });
    expect(await vault.resolve('openai-key')).toBe('value-B');
    expect(await vault.list()).toEqual([{ key: 'openai-key', stored_at: '2026-03-01T10:01:00.000Z' }]);
  });

  it('lists keys sorted, without values, and deletes', async () => {
    const vault = createVault({ store, clock, key });
    for (const k of ['zeta', 'Alpha', 'beta.1', 'a_b-c']) await vault.put(k, `secret-${k}`);
    const listed = await vault.list();
    expect(listed.map((e) => e.key)).toEqual(['Alpha', 'a_b-c', 'beta.1', 'zeta']);
    expect(JSON.stringify(listed)).not.toContain('secret-');
    expect(await vault.delete('zeta')).toBe(true);
    expect(await vault.delete('zeta')).toBe(false);
    expect(await vault.resolve('zeta')).toBeNull();
  });

  it('never writes the plaintext into the database', async () => {
    const vault = createVault({ store, clock, key });
    await vault.put('crm', 'plaintext-canary-42');
    const bodies = rawBodies();
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatch(/"sealed":"v1:/);
    expect(bodies[0]).not.toContain('plaintext-canary-42');
    await store.close();
    for (const file of ['platform.db', 'platform.db-wal']) {
      const bytes = await readFile(join(dir, file)).catch(() => Buffer.alloc(0));
      expect(bytes.includes(Buffer.from('plaintext-canary-42'))).toBe(false);
    }
    store = await openEmbeddedStore({ path: dbPath });
  });

  it('survives a restart and refuses to open with a different key', async () => {
    await createVault({ store, clock, key }).put('db', 'pw-1');
    await store.close();
    store = await openEmbeddedStore({ path: dbPath });
    expect(await createVault({ store, clock, key }).resolve('db')).toBe('pw-1');
    const err = await createVault({ store, clock, key: randomBytes(32) })
      .resolve('db')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as Error).message).toMatch(/wrong vault key/);
    expect((err as Error).message).not.toContain('pw-1');
  });

  it('does not open a ciphertext copied onto another key name', async () => {
    const vault = createVault({ store, clock, key });
    await vault.put('payments', 'pay-secret');
    await vault.put('crm', 'crm-secret');
    const db = new Database(dbPath);
    db.prepare(
      "UPDATE c_vault SET body = json_set(body, '$.sealed', (SELECT json_extract(body, '$.sealed') FROM c_vault WHERE id = 'payments')) WHERE id = 'crm'",
    ).run();
    db.close();
    await expect(vault.resolve('crm')).rejects.toThrow(/cannot be decrypted/);
    expect(await vault.resolve('payments')).toBe('pay-secret');
  });

  it('validates key names and values', async () => {
    const vault = createVault({ store, clock, key });
    for (const bad of ['', 'a/b', 'has space', 'x'.repeat(129), 'ü']) {
      const err = await vault.put(bad, 'v').catch((e: unknown) => e);
      expect((err as PlatformError).category).toBe('ValidationError');
    }
    await expect(vault.put('x'.repeat(128), 'v')).resolves.toMatchObject({ key: 'x'.repeat(128) });
    await expect(vault.put('ok', '')).rejects.toThrow(/must not be empty/);
    expect(() => createVault({ store, clock, key: randomBytes(16) })).toThrow(/32 bytes/);
  });
});
