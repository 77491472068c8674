import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { IssuerBody } from '@agent-platform/contracts';
import { systemClock } from '@agent-platform/domain';
import { TokenRejectedError } from '@agent-platform/oidc';
import { startOidcProvider, type OidcProviderHarness } from '@agent-platform/oidc/testing';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { createIssuerStore } from './issuer-store.ts';
import { createIssuerValidators } from './issuer-validators.ts';

// Two store handles on one file stand for two registry processes sharing the store: an issuer
// registered, changed or deleted through one is effective on the other's next request.
const AUDIENCE = 'https://registry.test.example';
/** The test's identity provider listens on loopback: allowed as `[network] allow_private_targets = true` would. */
const LOOPBACK_PROVIDER = (): boolean => true;
let provider: OidcProviderHarness;
let dir: string;
let stores: Store[];

beforeAll(async () => {
  provider = await startOidcProvider({ audience: AUDIENCE, clients: { 'ci-publisher': { roles: ['publishers'] } } });
});
afterAll(async () => provider?.close());

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-issuer-reload-'));
  const path = join(dir, 'platform.db');
  stores = [await openEmbeddedStore({ path }), await openEmbeddedStore({ path })];
});
afterEach(async () => {
  for (const store of stores) await store.close();
  await rm(dir, { recursive: true, force: true });
});

function body(overrides: Partial<IssuerBody> = {}): IssuerBody {
  return {
    issuer: provider.issuer,
    audience: AUDIENCE,
    jwks_uri: '',
    role_claim: 'realm_access.roles',
    allowed_algorithms: ['RS256'],
    role_mapping: { publishers: 'publisher' },
    jwks_cache_ttl_secs: 300,
    ...overrides,
  };
}

async function reason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TokenRejectedError) return error.reason;
    throw error;
  }
  return 'accepted';
}

describe('issuer hot reload across processes sharing the store', () => {
  it('takes a registration, a change and a deletion made elsewhere on the next request', async () => {
    const admin = createIssuerStore({ store: stores[0]!, clock: systemClock });
    const other = createIssuerValidators(createIssuerStore({ store: stores[1]!, clock: systemClock }), { clock: systemClock, allowPrivateTargets: LOOPBACK_PROVIDER });
    const token = await provider.accessToken('ci-publisher');

    expect(await reason(other.validate(token))).toBe('unknown_issuer');
    const issuer = await admin.create(body());
    expect(await other.validate(token)).toMatchObject({ identity: 'ci-publisher', role: 'publisher', issuer: provider.issuer });

    await admin.replace(issuer.id, body({ role_mapping: { publishers: 'reader' } }));
    expect((await other.validate(token)).role).toBe('reader');
    await admin.replace(issuer.id, body({ audience: 'https://another.example' }));
    expect(await reason(other.validate(token))).toBe('wrong_audience');

    await admin.delete(issuer.id);
    expect(await reason(other.validate(token))).toBe('unknown_issuer');
  });

  it('keeps a validator, and so its JWKS cache, while the record is unchanged', async () => {
    const issuers = createIssuerStore({ store: stores[0]!, clock: systemClock });
    const validators = createIssuerValidators(issuers, { clock: systemClock, allowPrivateTargets: LOOPBACK_PROVIDER });
    await issuers.create(body({ jwks_uri: provider.jwksUri }));
    const token = await provider.accessToken('ci-publisher');
    const before = provider.hits('/jwks');
    for (let i = 0; i < 5; i++) await validators.validate(token);
    expect(provider.hits('/jwks') - before).toBe(1);
  });

  it('refuses what is not a JWT before reading the store', async () => {
    const validators = createIssuerValidators(createIssuerStore({ store: stores[0]!, clock: systemClock }), { clock: systemClock, allowPrivateTargets: LOOPBACK_PROVIDER });
    expect(await reason(validators.validate('reg_sk_nope'))).toBe('malformed');
  });
});
