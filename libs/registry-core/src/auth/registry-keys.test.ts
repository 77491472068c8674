import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKeyService, fixedClock, PlatformError } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { createRegistryKeyService, type RegistryKeyService } from './registry-keys.ts';

let dir: string;
let store: Store;
let clock: ReturnType<typeof fixedClock>;
let keys: RegistryKeyService;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-reg-keys-'));
  clock = fixedClock('2030-01-01T00:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: clock.now });
  keys = createRegistryKeyService({ store, clock });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function category(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PlatformError) return error.category;
    throw error;
  }
  return 'no error';
}

describe('registry keys', () => {
  it('issues reg_sk_ secrets in the registry wire shape, shown once, listed without them', async () => {
    const key = await keys.create({ name: 'ci', role: 'publisher', expires_in: '30d' });
    expect(key).toMatchObject({ name: 'ci', role: 'publisher', revoked: false, created_at: '2030-01-01T00:00:00.000Z', expires_at: '2030-01-31T00:00:00.000Z' });
    expect(key.secret).toMatch(/^reg_sk_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe(key.secret.slice(0, 12));
    const [listed] = await keys.list();
    expect(listed).toEqual({ id: key.id, name: 'ci', role: 'publisher', prefix: key.prefix, created_at: key.created_at, expires_at: key.expires_at, revoked: false });
    expect(JSON.stringify(await keys.list())).not.toContain(key.secret);
    expect(await keys.authenticate(key.secret)).toEqual({ identity: 'ci', role: 'publisher', key_id: key.id, authenticated: true });
  });

  it('refuses a role that is not a registry role, and a bad duration', async () => {
    expect(await category(keys.create({ name: 'x', role: 'admin' as never }))).toBe('ValidationError');
    expect(await category(keys.create({ name: 'x', role: 'reader', expires_in: '1.5h' }))).toBe('ValidationError');
    expect(await keys.isEmpty()).toBe(true);
  });

  it('lives apart from the api keys of the same store', async () => {
    const api = createKeyService({ store, clock });
    const apiKey = await api.create({ name: 'ops', role: 'admin' });
    expect(await keys.isEmpty()).toBe(true);
    expect(await keys.authenticate(apiKey.secret)).toBeNull();
    const regKey = await keys.create({ name: 'ci', role: 'reader' });
    expect(await api.authenticate(regKey.secret)).toBeNull();
  });

  it('stops accepting a key at its expiry', async () => {
    const key = await keys.create({ name: 'temp', role: 'reader', expires_in: '1h' });
    clock.advance(3_599_999);
    expect(await keys.authenticate(key.secret)).not.toBeNull();
    clock.advance(1);
    expect(await keys.authenticate(key.secret)).toBeNull();
  });

  it('rotates: a new secret works, the old one is revoked', async () => {
    const old = await keys.create({ name: 'ci', role: 'publisher' });
    clock.advance(1_000);
    const next = await keys.rotate(old.id);
    expect(next).toMatchObject({ name: 'ci', role: 'publisher', revoked: false });
    expect(next.secret).not.toBe(old.secret);
    expect(await keys.authenticate(old.secret)).toBeNull();
    expect((await keys.authenticate(next.secret))?.key_id).toBe(next.id);
    expect((await keys.list()).map((k) => [k.id, k.revoked])).toEqual([[old.id, true], [next.id, false]]);
  });

  it('revokes (DELETE): the key stops working, is listed revoked, twice is harmless, unknown is NotFound', async () => {
    const key = await keys.create({ name: 'ci', role: 'publisher' });
    expect(await keys.revoke(key.id)).toMatchObject({ id: key.id, revoked: true });
    expect(await keys.revoke(key.id)).toMatchObject({ id: key.id, revoked: true });
    expect(await keys.authenticate(key.secret)).toBeNull();
    expect(await category(keys.revoke('6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11'))).toBe('NotFound');
    expect(await category(keys.rotate(key.id))).toBe('InvalidState');
  });

  it('bootstraps only a registry-admin first key, once, and apart from the api bootstrap', async () => {
    expect(await category(keys.bootstrap({ name: 'first', role: 'publisher' }))).toBe('ValidationError');
    const first = await keys.bootstrap({ name: 'first', role: 'registry-admin' });
    expect(first?.role).toBe('registry-admin');
    expect(await keys.bootstrap({ name: 'second', role: 'registry-admin' })).toBeNull();
    expect(await keys.list()).toHaveLength(1);
  });
});
