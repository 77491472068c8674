import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '@agent-platform/testkit';
import type { PlatformConfig } from '@agent-platform/contracts';
import { fixedClock } from '@agent-platform/domain';
import { startTestApi, type DeepPartial, type TestApi, type TestResponse } from '../testing/index.ts';

const LOCAL: DeepPartial<PlatformConfig> = { auth: { mode: 'local' } };
const UNKNOWN_ID = '6f1c1a53-1d2b-4e8a-9a55-0f6c1f0d9a11';

let api: TestApi | null = null;

async function start(config: DeepPartial<PlatformConfig>, clock?: ReturnType<typeof fixedClock>): Promise<TestApi> {
  api = await startTestApi({ config, ...(clock ? { clock } : {}) });
  return api;
}

afterEach(async () => {
  await api?.close();
  api = null;
});

/** The part of a secret that must never be shown again (the first 12 characters are its public prefix). */
function hiddenPart(secret: string): string {
  return secret.slice(12);
}

describe('bootstrap (spec §Authentication rule 3)', () => {
  it('creates the first key without a credential, then requires one', async () => {
    const api = await start(LOCAL);
    const first = await api.request('POST', '/auth/keys', { body: { name: 'first-admin', role: 'admin' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ name: 'first-admin', role: 'admin' });
    expect(first.body.secret).toMatch(/^svc_sk_/);
    expect(first.body.prefix).toBe(first.body.secret.slice(0, 12));

    const second = await api.request('POST', '/auth/keys', { body: { name: 'sneaky', role: 'admin' } });
    expect(second.status).toBe(401);
    expect(second.body.error.category).toBe('AuthError');
    expect(second.headers['www-authenticate']).toBe('Bearer');

    const withKey = await api.request('POST', '/auth/keys', { token: first.body.secret, body: { name: 'ops', role: 'operator' } });
    expect(withKey.status).toBe(200);
  });

  it('frees the bootstrap again when the first key is refused', async () => {
    const api = await start(LOCAL);
    const refused = await api.request('POST', '/auth/keys', { body: { name: '   ', role: 'admin' } });
    expect(refused.status).toBe(400);
    expect((await api.request('POST', '/auth/keys', { body: { name: 'first', role: 'admin' } })).status).toBe(200);
  });

  describe('a bootstrap request whose body arrives after the first key exists (issue "Hardening" 5)', () => {
    /** POST /auth/keys without a credential, headers now, body when `send` is called. */
    function heldBootstrap(t: TestApi): { send: () => Promise<{ status: number; body: string }> } {
      const url = new URL(t.url);
      const body = JSON.stringify({ name: 'late-admin', role: 'admin' });
      const req = httpRequest({
        hostname: url.hostname,
        port: url.port,
        path: '/auth/keys',
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      req.flushHeaders();
      const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
      });
      return { send: () => (req.end(body), answered) };
    }

    /** Counts the emptiness checks the authentication hook makes, to know the held request was judged. */
    function countEmptinessChecks(t: TestApi): () => number {
      let checks = 0;
      const original = t.deps.keys.isEmpty.bind(t.deps.keys);
      t.deps.keys.isEmpty = async () => (checks++, original());
      return () => checks;
    }

    it('is refused when the first key was created through the bootstrap and its claim has expired since', async () => {
      const clock = fixedClock(new Date());
      const t = await start(LOCAL, clock);
      const checks = countEmptinessChecks(t);
      const held = heldBootstrap(t);
      await waitUntil(() => checks() === 1, { message: 'the held request to pass authentication' });
      expect((await t.request('POST', '/auth/keys', { body: { name: 'first-admin', role: 'admin' } })).status).toBe(200);
      // Long after the first key: any claim a crashed bootstrap could hold has expired.
      clock.advance(10 * 60_000);
      const late = await held.send();
      expect(late.status).toBe(401);
      expect((await t.deps.keys.list()).map((k) => k.name)).toEqual(['first-admin']);
    });

    it('is refused when a key was created another way meanwhile', async () => {
      const t = await start(LOCAL);
      const checks = countEmptinessChecks(t);
      const held = heldBootstrap(t);
      await waitUntil(() => checks() === 1, { message: 'the held request to pass authentication' });
      await t.issueKey('admin', 'made-by-cli');
      expect((await held.send()).status).toBe(401);
      expect((await t.deps.keys.list()).map((k) => k.name)).toEqual(['made-by-cli']);
      // And for good: a bootstrap attempt much later finds the bootstrap closed.
      expect((await t.request('POST', '/auth/keys', { body: { name: 'later', role: 'admin' } })).status).toBe(401);
    });
  });

  it('keeps requiring a credential after the only key is revoked', async () => {
    const api = await start(LOCAL);
    const first = await api.request('POST', '/auth/keys', { body: { name: 'first', role: 'admin' } });
    const revoked = await api.request('DELETE', `/auth/keys/${first.body.id}`, { token: first.body.secret });
    expect(revoked.body).toEqual({ status: 'revoked', id: first.body.id });
    const again = await api.request('POST', '/auth/keys', { body: { name: 'again', role: 'admin' } });
    expect(again.status).toBe(401);
  });
});

describe('key lifecycle', () => {
  it('creates, lists, uses and revokes a key, never showing the secret again', async () => {
    const api = await start(LOCAL);
    const admin = await api.issueKey('admin', 'root');
    const created = await api.request('POST', '/auth/keys', { token: admin, body: { name: 'dashboard', role: 'viewer' } });
    expect(created.status).toBe(200);
    const { id, secret } = created.body as { id: string; secret: string };
    const later: TestResponse[] = [];

    const listed = await api.request('GET', '/auth/keys', { token: admin });
    later.push(listed);
    expect(listed.status).toBe(200);
    const entry = (listed.body.keys as Array<Record<string, unknown>>).find((k) => k.id === id);
    expect(entry).toEqual({
      id,
      name: 'dashboard',
      role: 'viewer',
      prefix: secret.slice(0, 12),
      created_at: created.body.created_at,
      revoked: false,
      expired: false,
    });

    const whoami = await api.request('GET', '/auth/whoami', { token: secret });
    later.push(whoami);
    expect(whoami.body).toEqual({ identity: 'dashboard', role: 'viewer', key_id: id });

    const forbidden = await api.request('GET', '/auth/keys', { token: secret });
    later.push(forbidden);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('forbidden');

    const revoked = await api.request('DELETE', `/auth/keys/${id}`, { token: admin });
    later.push(revoked);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ status: 'revoked', id });

    const refused = await api.request('GET', '/auth/whoami', { token: secret });
    later.push(refused);
    expect(refused.status).toBe(401);

    const afterRevoke = await api.request('GET', '/auth/keys', { token: admin });
    later.push(afterRevoke);
    expect((afterRevoke.body.keys as Array<Record<string, unknown>>).find((k) => k.id === id)).toMatchObject({ revoked: true });

    for (const response of later) expect(JSON.stringify(response.body)).not.toContain(hiddenPart(secret));
    const audit = await api.deps.audit.query({ limit: 100, category: 'keys' });
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(['POST /auth/keys', 'DELETE /auth/keys/:id']));
    expect(JSON.stringify(audit)).not.toContain(hiddenPart(secret));
  });

  it('answers 400 naming the id kind for a malformed id, and 404 for an unknown one', async () => {
    const api = await start(LOCAL);
    const admin = await api.issueKey('admin');
    const malformed = await api.request('DELETE', '/auth/keys/not-a-uuid', { token: admin });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.message).toContain('key id');
    const unknown = await api.request('DELETE', `/auth/keys/${UNKNOWN_ID}`, { token: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.category).toBe('NotFound');
    const rotateUnknown = await api.request('POST', `/auth/keys/${UNKNOWN_ID}/rotate`, { token: admin });
    expect(rotateUnknown.status).toBe(404);
  });

  it('validates the creation body', async () => {
    const api = await start(LOCAL);
    const admin = await api.issueKey('admin');
    const create = (body: unknown) => api.request('POST', '/auth/keys', { token: admin, body });

    const long = await create({ name: 'n'.repeat(65), role: 'viewer' });
    expect([long.status, long.body.error.category]).toEqual([400, 'ValidationError']);
    const blank = await create({ name: '   ', role: 'viewer' });
    expect([blank.status, blank.body.error.category]).toEqual([400, 'ValidationError']);
    const role = await create({ name: 'x', role: 'root' });
    expect(role.status).toBe(400);
    expect(role.body.error.message).toContain('auditor');
    const duration = await create({ name: 'x', role: 'viewer', expires_in: '3 days' });
    expect(duration.status).toBe(400);
    expect(duration.body.error.message).toContain("'3 days'");
    const misspelt = await create({ name: 'x', role: 'viewer', expires: '1d' });
    expect(misspelt.status).toBe(400);
    expect(misspelt.body.error.message).toContain('expires');
    const wrongType = await create({ name: 5, role: 'viewer' });
    expect([wrongType.status, wrongType.body.error.category]).toEqual([422, 'MalformedBody']);

    const maxName = await create({ name: 'n'.repeat(64), role: 'viewer' });
    expect(maxName.status).toBe(200);
    const listed = await api.request('GET', '/auth/keys', { token: admin });
    expect(listed.body.keys).toHaveLength(2);
  });
});

describe('rotation', () => {
  it('revokes the old secret and issues a working one with previous_key_id', async () => {
    const api = await start(LOCAL);
    const admin = await api.issueKey('admin');
    const old = (await api.request('POST', '/auth/keys', { token: admin, body: { name: 'bot', role: 'service' } })).body;
    const rotated = await api.request('POST', `/auth/keys/${old.id}/rotate`, { token: admin });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ name: 'bot', role: 'service', previous_key_id: old.id });
    expect(rotated.body.id).not.toBe(old.id);
    expect(rotated.body).not.toHaveProperty('expires_at');

    expect((await api.request('GET', '/auth/whoami', { token: old.secret })).status).toBe(401);
    const whoami = await api.request('GET', '/auth/whoami', { token: rotated.body.secret });
    expect(whoami.body).toEqual({ identity: 'bot', role: 'service', key_id: rotated.body.id });

    const listed = await api.request('GET', '/auth/keys', { token: admin });
    expect(JSON.stringify(listed.body)).not.toContain(hiddenPart(rotated.body.secret));

    const twice = await api.request('POST', `/auth/keys/${old.id}/rotate`, { token: admin });
    expect([twice.status, twice.body.error.category]).toEqual([500, 'InvalidState']);
  });

  it('keeps the expiry policy without a body and takes a new one from {expires_in}', async () => {
    const clock = fixedClock('2030-01-01T00:00:00.000Z');
    const api = await start(LOCAL, clock);
    const admin = await api.issueKey('admin');
    const old = (await api.request('POST', '/auth/keys', { token: admin, body: { name: 'bot', role: 'service', expires_in: '1d' } })).body;
    expect(old.expires_at).toBe('2030-01-02T00:00:00.000Z');
    clock.advance(3_600_000);
    const inherited = await api.request('POST', `/auth/keys/${old.id}/rotate`, { token: admin });
    expect(inherited.body.expires_at).toBe('2030-01-02T01:00:00.000Z');
    const overridden = await api.request('POST', `/auth/keys/${inherited.body.id}/rotate`, {
      token: admin,
      body: { expires_in: '30m' },
    });
    expect(overridden.body.expires_at).toBe('2030-01-01T01:30:00.000Z');
  });
});

describe('expiry', () => {
  it('refuses a key once the clock reaches expires_at and lists it as expired', async () => {
    const clock = fixedClock('2030-01-01T00:00:00.000Z');
    const api = await start(LOCAL, clock);
    const admin = await api.issueKey('admin');
    const key = (await api.request('POST', '/auth/keys', { token: admin, body: { name: 'temp', role: 'viewer', expires_in: '1h' } })).body;
    expect(key.expires_at).toBe('2030-01-01T01:00:00.000Z');
    expect((await api.request('GET', '/auth/whoami', { token: key.secret })).status).toBe(200);
    clock.advance(3_600_000);
    expect((await api.request('GET', '/auth/whoami', { token: key.secret })).status).toBe(401);
    const listed = await api.request('GET', '/auth/keys', { token: admin });
    expect((listed.body.keys as Array<Record<string, unknown>>).find((k) => k.id === key.id)).toMatchObject({
      expired: true,
      revoked: false,
      expires_at: '2030-01-01T01:00:00.000Z',
    });
  });
});

describe('whoami, check and logout', () => {
  it('describe the key in local mode', async () => {
    const api = await start(LOCAL);
    const secret = await api.issueKey('auditor', 'books');
    const check = await api.request('GET', '/auth/check', { token: secret });
    expect(check.body).toEqual({ authenticated: true, auth_required: true, identity: 'books', role: 'auditor' });
    expect((await api.request('GET', '/auth/check')).status).toBe(401);
    const logout = await api.request('POST', '/auth/logout', { token: secret });
    expect([logout.status, logout.body]).toEqual([200, { status: 'logged_out' }]);
    // Logout has no server-side effect: the key still works.
    expect((await api.request('GET', '/auth/whoami', { token: secret })).status).toBe(200);
  });

  it('describe the anonymous admin when auth is disabled', async () => {
    const api = await start({ auth: { mode: 'disabled' } });
    expect((await api.request('GET', '/auth/whoami')).body).toEqual({ identity: 'anonymous', role: 'admin', key_id: null });
    expect((await api.request('GET', '/auth/check')).body).toEqual({
      authenticated: true,
      auth_required: false,
      identity: 'anonymous',
      role: 'admin',
    });
    expect((await api.request('POST', '/auth/logout')).body).toEqual({ status: 'logged_out' });
  });
});

describe('when auth is not enabled', () => {
  it('answers every key route 503 with the flat body', async () => {
    const api = await start({ auth: { mode: 'disabled' } });
    const responses = [
      await api.request('POST', '/auth/keys', { body: { name: 'x', role: 'admin' } }),
      await api.request('GET', '/auth/keys'),
      await api.request('DELETE', `/auth/keys/${UNKNOWN_ID}`),
      await api.request('POST', `/auth/keys/${UNKNOWN_ID}/rotate`),
    ];
    for (const response of responses) {
      expect([response.status, response.body]).toEqual([503, { error: 'Auth is not enabled' }]);
    }
    expect(await api.deps.keys.isEmpty()).toBe(true);
  });
});

describe('failed-attempt backoff', () => {
  it('locks the failed attempts of a client out after the threshold; a correct key is served and resets nothing', async () => {
    const clock = fixedClock('2030-01-01T00:00:00.000Z');
    const api = await start(
      { auth: { mode: 'local', rate_limit: { max_failed_attempts: 2, base_backoff_secs: 5, max_backoff_secs: 60 } } },
      clock,
    );
    const good = await api.issueKey('viewer');
    const bad = 'svc_sk_not-a-real-key';
    const whoami = (token: string) => api.request('GET', '/auth/whoami', { token });

    expect((await whoami(bad)).status).toBe(401);
    expect((await whoami(bad)).status).toBe(401);
    expect((await whoami(bad)).status).toBe(401);
    const locked = await whoami(bad);
    expect(locked.status).toBe(429);
    expect(locked.body.error.category).toBe('RateLimited');
    expect(locked.headers['retry-after']).toBe('5');
    expect((await whoami(good)).status).toBe(200);

    clock.advance(5_000);
    // The lockout is over, but the success did not reset the count: the next failure locks again (10 s).
    expect((await whoami(bad)).status).toBe(401);
    expect((await whoami(bad)).headers['retry-after']).toBe('10');
  });

  it('doubles the lockout with each further failure', async () => {
    const clock = fixedClock('2030-01-01T00:00:00.000Z');
    const api = await start(
      { auth: { mode: 'local', rate_limit: { max_failed_attempts: 1, base_backoff_secs: 2, max_backoff_secs: 5 } } },
      clock,
    );
    const attempt = async (): Promise<string> => {
      const response = await api.request('GET', '/auth/whoami', { token: 'svc_sk_not-a-real-key' });
      return response.status === 429 ? `429 after ${response.headers['retry-after']}` : String(response.status);
    };
    const seen = [await attempt(), await attempt(), await attempt()];
    clock.advance(2_000);
    seen.push(await attempt(), await attempt());
    clock.advance(4_000);
    seen.push(await attempt(), await attempt());
    expect(seen).toEqual(['401', '401', '429 after 2', '401', '429 after 4', '401', '429 after 5']);
  });
});
