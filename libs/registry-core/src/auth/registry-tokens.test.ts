import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKeyStore, fixedClock } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { REGISTRY_COLLECTIONS } from '../registry-records.ts';
import { createRegistryTokenService, patternCovers, REGISTRY_TOKEN_PREFIX, type RegistryTokenService } from './registry-tokens.ts';

let dir: string;
let store: Store;
let clock: ReturnType<typeof fixedClock>;
let tokens: RegistryTokenService;
const liveKeys = new Set<string>();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-reg-tokens-'));
  clock = fixedClock('2030-01-01T00:00:00.000Z');
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: clock.now });
  liveKeys.clear();
  liveKeys.add('alice');
  tokens = createRegistryTokenService({ store, clock, liveKeyNamed: async (name) => liveKeys.has(name) });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('registry tokens', () => {
  it('authenticates as its maker with its grant until it expires', async () => {
    const issued = await tokens.create('key:alice', { name: 'ci', scopes: ['yank', 'yank', 'publish-new'], packages: ['claims-*', 'claims-*'], expires_in: '1d' });
    expect(issued.secret.startsWith(REGISTRY_TOKEN_PREFIX)).toBe(true);
    expect(await tokens.authenticate(issued.secret)).toEqual({ token_id: issued.id, identity: 'key:alice', scopes: ['yank', 'publish-new'], packages: ['claims-*'] });
    clock.advance(86_400_000);
    expect(await tokens.authenticate(issued.secret)).toBeNull();
  });

  it('a token of an OIDC caller does not depend on registry keys; one of a key stops with the key', async () => {
    const oidc = await tokens.create('https://idp.example#alice', { name: 'ci', scopes: ['yank'] });
    const keyed = await tokens.create('key:alice', { name: 'ci', scopes: ['yank'] });
    liveKeys.clear();
    expect((await tokens.authenticate(oidc.secret))?.identity).toBe('https://idp.example#alice');
    expect(await tokens.authenticate(keyed.secret)).toBeNull();
  });

  it('a token key without its grant (a crash between the two writes) authenticates nobody', async () => {
    const bare = await createKeyStore({ store, clock }, { collection: REGISTRY_COLLECTIONS.tokens, secretPrefix: REGISTRY_TOKEN_PREFIX, roles: ['publisher'], noun: 'registry token' }).create({
      name: 'half-made',
      role: 'publisher',
    });
    expect(await tokens.authenticate(bare.secret)).toBeNull();
    expect(await tokens.list('key:alice')).toEqual([]);
  });

  it('matches package patterns by exact name or by prefix before a trailing *', () => {
    expect(patternCovers('claims-*', 'claims-desk')).toBe(true);
    expect(patternCovers('claims-*', 'claims')).toBe(false);
    expect(patternCovers('claims-desk', 'claims-desk')).toBe(true);
    expect(patternCovers('claims-desk', 'claims-desk-2')).toBe(false);
  });
});
