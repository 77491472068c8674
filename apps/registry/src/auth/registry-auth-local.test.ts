import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACCESS_LEVELS, startRegistryAuthHarness, type RegistryAuthHarness } from '../testing/registry-auth-harness.ts';

// The registry's auth modes `disabled` and `local` over a real listener: every access level, the
// read/download switches, 401 against 403, the first key, rotation, revocation, expiry, lockouts.
let h: RegistryAuthHarness;
afterEach(async () => h?.close());

async function keyOf(role: 'registry-admin' | 'publisher' | 'reader', admin: string, extra: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const created = await h.call('POST', '/keys', { bearer: admin, body: { name: `${role}-key`, role, ...extra } });
  expect(created.status).toBe(201);
  return created.body;
}

describe('mode disabled', () => {
  beforeEach(async () => {
    h = await startRegistryAuthHarness({ mode: 'disabled' });
  });

  it('serves every access level to the anonymous registry admin, whatever credential is sent', async () => {
    for (const level of ACCESS_LEVELS) {
      const { status, body } = await h.probe(level);
      expect(status, level).toBe(200);
      expect(body).toEqual({ identity: 'anonymous', role: 'registry-admin', authenticated: false, key_id: null, issuer: null });
    }
    expect((await h.probe('admin', 'garbage')).status).toBe(200);
    expect((await h.call('GET', '/auth/whoami')).body).toEqual({ identity: 'anonymous', role: 'registry-admin', authenticated: false, key_id: null, issuer: null });
  });

  it('answers /keys 503 Auth is not enabled, as the api does, and creates nothing', async () => {
    expect(await h.call('POST', '/keys', { body: { name: 'x', role: 'registry-admin' } })).toMatchObject({ status: 503, body: { error: 'Auth is not enabled' } });
    expect((await h.call('GET', '/keys')).status).toBe(503);
    expect((await h.call('DELETE', '/keys/6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11')).status).toBe(503);
    expect((await h.call('POST', '/keys/6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11/rotate')).status).toBe(503);
    expect(await h.store.collection('registry_keys').count()).toBe(0);
  });
});

describe('mode local', () => {
  let admin: string;
  beforeEach(async () => {
    h = await startRegistryAuthHarness({ mode: 'local' });
    const first = await h.call('POST', '/keys', { body: { name: 'first-admin', role: 'registry-admin' } });
    expect(first.status).toBe(201);
    admin = first.body.secret;
    // Keys list oldest first: later keys are made a second later.
    h.clock.advance(1_000);
  });

  it('bootstraps the first key without a credential, then never again', async () => {
    const again = await h.call('POST', '/keys', { body: { name: 'sneaky', role: 'registry-admin' } });
    expect(again.status).toBe(401);
    expect(again.body.error.category).toBe('AuthError');
    expect(again.headers.get('www-authenticate')).toBe('Bearer');
    expect((await h.call('GET', '/keys', { bearer: admin })).body.keys).toHaveLength(1);
  });

  it('lets each role reach exactly its access levels: 401 without identity, 403 without the role', async () => {
    const publisher = (await keyOf('publisher', admin)).secret;
    const reader = (await keyOf('reader', admin)).secret;
    const expected: Record<string, Record<string, number>> = {
      anonymous: { public: 200, read: 200, download: 200, authenticated: 401, publish: 401, admin: 401 },
      reader: { public: 200, read: 200, download: 200, authenticated: 200, publish: 403, admin: 403 },
      publisher: { public: 200, read: 200, download: 200, authenticated: 200, publish: 200, admin: 403 },
      admin: { public: 200, read: 200, download: 200, authenticated: 200, publish: 200, admin: 200 },
    };
    const bearers: Record<string, string | undefined> = { anonymous: undefined, reader, publisher, admin };
    for (const [who, levels] of Object.entries(expected)) {
      for (const [level, status] of Object.entries(levels)) {
        expect((await h.probe(level as never, bearers[who])).status, `${who} on ${level}`).toBe(status);
      }
    }
    const refused = await h.probe('admin', publisher);
    expect(refused.body).toEqual({ error: 'forbidden', message: 'role publisher may not administer the registry (needs registry-admin)' });
    expect((await h.probe('publish', reader)).body.message).toBe('role reader may not publish or yank packages (needs publisher or registry-admin)');
    expect((await h.probe('read')).body).toMatchObject({ identity: 'anonymous', role: 'reader', authenticated: false });
    expect((await h.call('GET', '/auth/whoami', { bearer: publisher })).body).toMatchObject({ identity: 'key:publisher-key', role: 'publisher', authenticated: true, issuer: null });
  });

  it('requires identity on reads and downloads when told to', async () => {
    const reader = (await keyOf('reader', admin)).secret;
    h.settings.auth.read_requires_auth = true;
    expect((await h.probe('read')).status).toBe(401);
    expect((await h.probe('download')).status).toBe(200);
    expect((await h.probe('read', reader)).status).toBe(200);
    h.settings.auth.read_requires_auth = false;
    h.settings.auth.download_requires_auth = true;
    expect((await h.probe('read')).status).toBe(200);
    const refused = await h.probe('download');
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe('authentication required: send Authorization: Bearer <registry key>');
    expect((await h.probe('download', reader)).status).toBe(200);
    expect((await h.probe('public')).status).toBe(200);
  });

  it('never downgrades a bad credential to anonymous, even where anonymous would pass', async () => {
    for (const bearer of ['reg_sk_forged', 'svc_sk_an-api-key', 'eyJhbGciOiJSUzI1NiJ9.e30.sig']) {
      const { status, body } = await h.probe('read', bearer);
      expect(status).toBe(401);
      expect(body.error.message).toBe('invalid, revoked or expired registry key');
    }
    expect((await h.probe('read', undefined)).status).toBe(200);
    const malformed = await h.call('GET', '/probe/read', { authorization: 'Basic dXNlcjpwdw==' });
    expect(malformed.status).toBe(401);
    expect(malformed.body.error.message).toContain('malformed Authorization header');
    expect((await h.probe('public', 'reg_sk_forged')).status).toBe(200);
  });

  it('refuses before reading the body: 403 rather than 400 for a bad body from the wrong role, 401 without identity', async () => {
    const reader = (await keyOf('reader', admin)).secret;
    expect((await h.call('POST', '/probe/publish', { bearer: reader, body: { unexpected: 1 } })).status).toBe(403);
    expect((await h.call('POST', '/probe/publish', { body: { unexpected: 1 } })).status).toBe(401);
    expect((await h.call('POST', '/keys', { bearer: reader, body: { name: 'x', role: 'nonsense' } })).status).toBe(403);
  });

  it('never asks identity of GET /health, and closes a route that declares no access level to all but admins', async () => {
    h.settings.auth.read_requires_auth = true;
    expect((await h.call('GET', '/health')).status).toBe(200);
    expect((await h.call('GET', '/health', { bearer: 'reg_sk_forged' })).status).toBe(200);
    const publisher = (await keyOf('publisher', admin)).secret;
    expect((await h.call('GET', '/probe/undeclared')).status).toBe(401);
    expect((await h.call('GET', '/probe/undeclared', { bearer: publisher })).status).toBe(403);
    expect((await h.call('GET', '/probe/undeclared', { bearer: admin })).status).toBe(200);
  });

  it('answers an unknown path 404 to readers and 401 when reads need identity', async () => {
    expect((await h.call('GET', '/nowhere')).status).toBe(404);
    expect((await h.call('GET', '/nowhere', { bearer: 'reg_sk_forged' })).status).toBe(401);
    h.settings.auth.read_requires_auth = true;
    expect((await h.call('GET', '/nowhere')).status).toBe(401);
  });

  it('manages keys: list without secrets, rotate (new secret works, old revoked), revoke, expiry', async () => {
    const ci = await keyOf('publisher', admin, { expires_in: '1h' });
    const listed = await h.call('GET', '/keys', { bearer: admin });
    expect(listed.body.keys.map((k: { name: string }) => k.name)).toEqual(['first-admin', 'publisher-key']);
    expect(JSON.stringify(listed.body)).not.toContain(ci.secret);
    expect(JSON.stringify(listed.body)).not.toContain(admin);

    const rotated = await h.call('POST', `/keys/${ci.id}/rotate`, { bearer: admin });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ name: 'publisher-key', role: 'publisher', revoked: false });
    expect(rotated.body.secret).toMatch(/^reg_sk_/);
    expect((await h.probe('publish', ci.secret)).status).toBe(401);
    expect((await h.probe('publish', rotated.body.secret)).status).toBe(200);

    const renewed = await h.call('POST', `/keys/${rotated.body.id}/rotate`, { bearer: admin, body: { expires_in: '2h' } });
    expect(renewed.body.expires_at).toBe(new Date(h.clock.now().getTime() + 7_200_000).toISOString());
    expect((await h.call('POST', `/keys/${rotated.body.id}/rotate`, { bearer: admin })).status).toBe(500);
    expect((await h.probe('publish', rotated.body.secret)).status).toBe(401);
    expect((await h.probe('publish', renewed.body.secret)).status).toBe(200);

    const revoked = await h.call('DELETE', `/keys/${renewed.body.id}`, { bearer: admin });
    expect(revoked).toMatchObject({ status: 200, body: { id: renewed.body.id, revoked: true } });
    expect((await h.probe('publish', renewed.body.secret)).status).toBe(401);
    expect((await h.call('DELETE', '/keys/6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11', { bearer: admin })).status).toBe(404);

    const temp = await keyOf('reader', admin, { expires_in: '1h' });
    expect((await h.probe('authenticated', temp.secret)).status).toBe(200);
    h.clock.advance(3_600_000);
    expect((await h.probe('authenticated', temp.secret)).status).toBe(401);
    expect((await h.call('POST', '/keys', { bearer: admin, body: { name: 'x', role: 'reader', expires_in: 'soon' } })).status).toBe(400);
    expect((await h.call('POST', '/keys', { bearer: admin, body: { name: 'x', role: 'admin' } })).status).toBe(400);
  });

  it('locks a client out after repeated failures (429), still serving its valid key, and logs no secret', async () => {
    for (let i = 0; i < 10; i++) expect((await h.probe('admin', `reg_sk_guess-${i}`)).status).toBe(401);
    const locked = await h.probe('admin', 'reg_sk_guess-10');
    expect((await h.probe('admin', 'reg_sk_guess-11')).status).toBe(429);
    expect(locked.status).toBe(401);
    expect((await h.probe('admin', admin)).status).toBe(200);
    expect(h.logs()).toContain('registry authentication failed');
    expect(h.logs()).not.toContain('reg_sk_guess');
    expect(h.logs()).not.toContain(admin);
  });
});

describe('mode local bootstrap', () => {
  it('makes the first key a registry-admin one', async () => {
    h = await startRegistryAuthHarness({ mode: 'local' });
    const refused = await h.call('POST', '/keys', { body: { name: 'first', role: 'publisher' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('the first registry key must have role registry-admin');
    expect((await h.call('POST', '/keys', { body: { name: 'first', role: 'registry-admin' } })).status).toBe(201);
  });
});
