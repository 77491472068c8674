import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { PlatformError } from '../errors/platform-error.ts';
import { fixedClock } from '../time/clock.ts';
import type { KeyService } from './api-key.ts';
import { API_KEYS_COLLECTION, createKeyService, createKeyStore, type ApiKeyRecord } from './key-service.ts';

const T0 = '2030-01-01T00:00:00.000Z';
const HOUR = 3_600_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let dir: string;
let store: Store;
let clock: ReturnType<typeof fixedClock>;
let keys: KeyService;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-keys-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  clock = fixedClock(T0);
  keys = createKeyService({ store, clock });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function categoryOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PlatformError) return error.category;
    throw error;
  }
  return 'no error';
}

describe('KeyService.create', () => {
  it('issues a svc_sk_ secret that authenticates as the key', async () => {
    const key = await keys.create({ name: 'ci', role: 'developer' });
    expect(key.id).toMatch(UUID);
    expect(key.secret).toMatch(/^svc_sk_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe(key.secret.slice(0, 12));
    expect(key.created_at).toBe(T0);
    expect(key).not.toHaveProperty('expires_at');
    expect(key).not.toHaveProperty('previous_key_id');
    expect(await keys.authenticate(key.secret)).toEqual({
      identity: 'ci',
      role: 'developer',
      key_id: key.id,
      authenticated: true,
    });
  });

  it('gives each key a different secret', async () => {
    const a = await keys.create({ name: 'a', role: 'viewer' });
    const b = await keys.create({ name: 'a', role: 'viewer' });
    expect(a.secret).not.toBe(b.secret);
    expect((await keys.authenticate(b.secret))?.key_id).toBe(b.id);
  });

  it('accepts names of 1 and 64 characters and refuses blank or longer ones', async () => {
    await keys.create({ name: 'x', role: 'viewer' });
    await keys.create({ name: 'n'.repeat(64), role: 'viewer' });
    expect(await categoryOf(keys.create({ name: '', role: 'viewer' }))).toBe('ValidationError');
    expect(await categoryOf(keys.create({ name: '   ', role: 'viewer' }))).toBe('ValidationError');
    expect(await categoryOf(keys.create({ name: 'n'.repeat(65), role: 'viewer' }))).toBe('ValidationError');
  });

  it('refuses an unknown role and a bad expires_in', async () => {
    expect(await categoryOf(keys.create({ name: 'x', role: 'root' as 'admin' }))).toBe('ValidationError');
    expect(await categoryOf(keys.create({ name: 'x', role: 'admin', expires_in: 'soon' }))).toBe('ValidationError');
    expect(await keys.isEmpty()).toBe(true);
  });
});

describe('secrets', () => {
  it('never appear in list output nor anywhere in the stored records', async () => {
    const created = await keys.create({ name: 'ops', role: 'operator', expires_in: '90d' });
    const rotated = await keys.rotate(created.id);
    const listed = JSON.stringify(await keys.list());
    const raw = JSON.stringify(await store.collection<ApiKeyRecord>(API_KEYS_COLLECTION).find());
    for (const secret of [created.secret, rotated.secret]) {
      // The first 12 characters are the public prefix; the rest must stay secret.
      const hidden = secret.slice(12);
      expect(listed).not.toContain(hidden);
      expect(raw).not.toContain(hidden);
    }
    expect(listed).not.toContain('secret');
    expect(raw).toContain('"secret_hash":"sha256:');
  });
});

describe('KeyService.list and revoke', () => {
  it('lists every key with revoked and expired flags', async () => {
    const b = await keys.create({ name: 'b', role: 'auditor', expires_in: '24h' });
    clock.advance(-1);
    const a = await keys.create({ name: 'a', role: 'admin' });
    clock.advance(1);
    await keys.revoke(a.id);
    expect(await keys.list()).toEqual([
      {
        id: a.id,
        name: 'a',
        role: 'admin',
        prefix: a.prefix,
        created_at: '2029-12-31T23:59:59.999Z',
        revoked: true,
        expired: false,
      },
      {
        id: b.id,
        name: 'b',
        role: 'auditor',
        prefix: b.prefix,
        created_at: T0,
        expires_at: '2030-01-02T00:00:00.000Z',
        revoked: false,
        expired: false,
      },
    ]);
  });

  it('stops a revoked key at once; revoking twice is harmless; unknown ids are NotFound', async () => {
    const key = await keys.create({ name: 'a', role: 'service' });
    await keys.revoke(key.id);
    expect(await keys.authenticate(key.secret)).toBeNull();
    await keys.revoke(key.id);
    expect(await categoryOf(keys.revoke('6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11'))).toBe('NotFound');
  });

  it('rejects strings that are not a known secret', async () => {
    const key = await keys.create({ name: 'a', role: 'service' });
    expect(await keys.authenticate('')).toBeNull();
    expect(await keys.authenticate(key.secret.slice(7))).toBeNull();
    expect(await keys.authenticate(`${key.secret}x`)).toBeNull();
    expect(await keys.authenticate(`svc_sk_${'A'.repeat(43)}`)).toBeNull();
  });
});

describe('expiry', () => {
  it('lets a key work until the clock reaches expires_at, then marks it expired', async () => {
    const key = await keys.create({ name: 'short', role: 'viewer', expires_in: '1h' });
    expect(key.expires_at).toBe('2030-01-01T01:00:00.000Z');
    clock.advance(HOUR - 1);
    expect(await keys.authenticate(key.secret)).not.toBeNull();
    clock.advance(1);
    expect(await keys.authenticate(key.secret)).toBeNull();
    expect((await keys.list())[0]).toMatchObject({ expired: true, revoked: false });
  });
});

describe('KeyService.rotate', () => {
  it('revokes the old key and issues one with the same name and role', async () => {
    const old = await keys.create({ name: 'bot', role: 'service' });
    clock.advance(1);
    const next = await keys.rotate(old.id);
    expect(next).toMatchObject({ name: 'bot', role: 'service', previous_key_id: old.id });
    expect(next.id).not.toBe(old.id);
    expect(await keys.authenticate(old.secret)).toBeNull();
    expect((await keys.authenticate(next.secret))?.key_id).toBe(next.id);
    expect((await keys.list()).map((k) => [k.id, k.revoked])).toEqual([
      [old.id, true],
      [next.id, false],
    ]);
  });

  it('keeps the expiry policy: the new key expires the same duration after the rotation', async () => {
    const old = await keys.create({ name: 'bot', role: 'service', expires_in: '1h' });
    clock.advance(HOUR / 2);
    const next = await keys.rotate(old.id);
    expect(next.expires_at).toBe('2030-01-01T01:30:00.000Z');
    const again = await keys.rotate(next.id);
    expect(again.expires_at).toBe('2030-01-01T01:30:00.000Z');
    clock.advance(HOUR);
    expect(await keys.authenticate(again.secret)).toBeNull();
  });

  it('issues a key without expiry when the old one had none, unless expires_in is given', async () => {
    const old = await keys.create({ name: 'bot', role: 'service' });
    const next = await keys.rotate(old.id);
    expect(next).not.toHaveProperty('expires_at');
    const overridden = await keys.rotate(next.id, { expires_in: '2d' });
    expect(overridden.expires_at).toBe('2030-01-03T00:00:00.000Z');
    const inherited = await keys.rotate(overridden.id);
    expect(inherited.expires_at).toBe('2030-01-03T00:00:00.000Z');
  });

  it('refuses a revoked key (InvalidState), an unknown one (NotFound) and a bad expires_in', async () => {
    const key = await keys.create({ name: 'bot', role: 'service' });
    expect(await categoryOf(keys.rotate(key.id, { expires_in: '3 days' }))).toBe('ValidationError');
    await keys.revoke(key.id);
    expect(await categoryOf(keys.rotate(key.id))).toBe('InvalidState');
    expect(await categoryOf(keys.rotate('6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11'))).toBe('NotFound');
    expect(await keys.list()).toHaveLength(1);
  });

  it('lets exactly one of two concurrent rotations of the same key win', async () => {
    const key = await keys.create({ name: 'bot', role: 'service' });
    const results = await Promise.allSettled([keys.rotate(key.id), keys.rotate(key.id)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const listed = await keys.list();
    expect(listed).toHaveLength(2);
    expect(listed.filter((k) => !k.revoked)).toHaveLength(1);
  });
});

describe('KeyService.isEmpty (bootstrap rule)', () => {
  it('is true until a key exists, and stays false after every key is revoked', async () => {
    expect(await keys.isEmpty()).toBe(true);
    const key = await keys.create({ name: 'first', role: 'admin' });
    expect(await keys.isEmpty()).toBe(false);
    await keys.revoke(key.id);
    expect(await keys.isEmpty()).toBe(false);
  });
});

describe('createKeyStore (another kind of key, e.g. the registry keys)', () => {
  const KIND = { collection: 'other_keys', secretPrefix: 'oth_sk_', roles: ['boss', 'clerk'] as const, noun: 'other key' };

  it('issues its own prefix and roles, in its own collection, and refuses the other kind', async () => {
    const other = createKeyStore({ store, clock }, KIND);
    const key = await other.create({ name: 'ci', role: 'clerk' });
    expect(key.secret).toMatch(/^oth_sk_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe(key.secret.slice(0, 12));
    expect(await other.authenticate(key.secret)).toEqual({ identity: 'ci', role: 'clerk', key_id: key.id, authenticated: true });
    // Neither store knows the other's keys, nor their roles.
    expect(await keys.isEmpty()).toBe(true);
    expect(await keys.authenticate(key.secret)).toBeNull();
    const api = await keys.create({ name: 'ops', role: 'admin' });
    expect(await other.authenticate(api.secret)).toBeNull();
    await expect(other.create({ name: 'x', role: 'admin' as never })).rejects.toThrow(/expected one of boss, clerk/);
    await expect(other.rotate('6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11')).rejects.toThrow(/other key/);
    expect(await store.collection('other_keys').count()).toBe(1);
  });
});
