import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IssuerBody } from '@agent-platform/contracts';
import { fixedClock, PlatformError } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { createIssuerStore, type IssuerStore } from './issuer-store.ts';

let dir: string;
let store: Store;
let issuers: IssuerStore;
const clock = fixedClock('2030-01-01T00:00:00.000Z');

const BODY: IssuerBody = {
  issuer: 'https://login.example.com/realms/acme',
  audience: 'https://registry.example.com',
  jwks_uri: '',
  role_claim: 'realm_access.roles',
  allowed_algorithms: ['RS256', 'ES256'],
  role_mapping: { 'registry-admins': 'registry-admin', publishers: 'publisher' },
  jwks_cache_ttl_secs: 600,
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-issuers-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  issuers = createIssuerStore({ store, clock });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function refusal(promise: Promise<unknown>): Promise<{ category: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PlatformError) return { category: error.category, message: error.message };
    throw error;
  }
  throw new Error('accepted');
}

describe('issuer store', () => {
  it('registers, reads, replaces and deletes an issuer', async () => {
    const created = await issuers.create(BODY);
    expect(created).toMatchObject({ ...BODY, created_at: '2030-01-01T00:00:00.000Z', updated_at: '2030-01-01T00:00:00.000Z' });
    expect(await issuers.get(created.id)).toEqual(created);
    expect((await issuers.findByIssuer(BODY.issuer))?.doc).toEqual(created);
    expect(await issuers.findByIssuer(`${BODY.issuer}/`)).toBeNull();
    clock.advance(1_000);
    const changed = await issuers.replace(created.id, { ...BODY, audience: 'api://registry' });
    expect(changed).toMatchObject({ id: created.id, audience: 'api://registry', created_at: created.created_at, updated_at: '2030-01-01T00:00:01.000Z' });
    expect(await issuers.list()).toEqual([changed]);
    await issuers.delete(created.id);
    expect(await issuers.list()).toEqual([]);
    expect((await refusal(issuers.delete(created.id))).category).toBe('NotFound');
    expect((await refusal(issuers.get(created.id))).category).toBe('NotFound');
    expect((await refusal(issuers.replace(created.id, BODY))).category).toBe('NotFound');
  });

  it('refuses a second registration of the same issuer URL (409), also through PUT', async () => {
    await issuers.create(BODY);
    const other = await issuers.create({ ...BODY, issuer: 'https://other.example.com' });
    const duplicate = await refusal(issuers.create({ ...BODY, audience: 'x' }));
    expect(duplicate.category).toBe('Conflict');
    expect(duplicate.message).toContain('already registered');
    expect((await refusal(issuers.replace(other.id, BODY))).category).toBe('Conflict');
  });

  it.each<[string, Partial<IssuerBody>, string]>([
    ['an http issuer off loopback', { issuer: 'http://login.example.com' }, 'issuer must be https (http only on a loopback host)'],
    ['a non-URL issuer', { issuer: 'acme' }, 'issuer is not a URL'],
    ['an issuer with a query', { issuer: 'https://login.example.com/?tenant=1' }, 'issuer must not have a query or fragment'],
    ['a plain-http jwks_uri', { jwks_uri: 'http://keys.example.com/jwks' }, 'jwks_uri must be https'],
    ['alg none', { allowed_algorithms: ['RS256', 'none'] }, "algorithm 'none' is never allowed"],
    ['an HMAC algorithm', { allowed_algorithms: ['HS256'] }, "algorithm 'HS256' is never allowed"],
    ['an unknown algorithm', { allowed_algorithms: ['RSA-OAEP'] }, "unknown algorithm 'RSA-OAEP'"],
    ['a role that is not a registry role', { role_mapping: { ops: 'admin' as never } }, "role_mapping['ops'] = 'admin' is not a registry role"],
    ['an empty role mapping', { role_mapping: {} }, 'role_mapping must map at least one external role'],
    ['a blank audience', { audience: '  ' }, 'audience must be 1-1024 characters'],
    ['a padded role claim', { role_claim: ' groups' }, 'role_claim must not start or end with spaces'],
    ['a year-long cache', { jwks_cache_ttl_secs: 31_536_000 }, 'jwks_cache_ttl_secs must be a whole number of seconds'],
  ])('refuses %s with a clear 400', async (_name, change, expected) => {
    const { category, message } = await refusal(issuers.create({ ...BODY, ...change }));
    expect(category).toBe('ValidationError');
    expect(message).toContain(expected);
    expect(await issuers.list()).toEqual([]);
  });

  it('accepts loopback http for a provider on the same machine, and names every problem at once', async () => {
    expect((await issuers.create({ ...BODY, issuer: 'http://127.0.0.1:8080', jwks_uri: 'http://localhost:8080/jwks' })).issuer).toBe('http://127.0.0.1:8080');
    const { message } = await refusal(issuers.create({ ...BODY, issuer: 'ftp://x', allowed_algorithms: ['none'] }));
    expect(message).toContain('issuer must be an https URL');
    expect(message).toContain("algorithm 'none'");
  });
});
