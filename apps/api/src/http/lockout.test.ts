import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Issue "Hardening" 3: four bad tokens from 127.0.0.1 locked out the admin's valid key, and the
// lockout was keyed on the socket address (one bucket for everyone behind a proxy, or on a unix
// socket). The lockout now throttles failed attempts only, per client address, and that address
// comes from X-Forwarded-For when the connection is from a trusted proxy (docs/permissions.md).
let api: TestApi | undefined;
let scratch: string | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  scratch = undefined;
});

const RATE = { max_failed_attempts: 2, base_backoff_secs: 60, max_backoff_secs: 300 };
const BAD = 'svc_sk_wrong-guess';

async function lockOut(t: TestApi, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await t.request('GET', '/auth/whoami', { token: BAD, headers })).status).toBe(401);
  expect((await t.request('GET', '/auth/whoami', { token: BAD, headers })).status).toBe(429);
}

describe('the failed-authentication lockout', () => {
  it('never refuses a valid key: a locked-out address still gets in with one', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local', rate_limit: RATE } } });
    const admin = await api.issueKey('admin');
    await lockOut(api);
    const res = await api.request('GET', '/vault', { token: admin });
    expect(res.status).toBe(200);
    // A wrong key from the address is still refused with 429 and Retry-After while locked out.
    const refused = await api.request('GET', '/auth/whoami', { token: BAD });
    expect(refused.status).toBe(429);
    expect(refused.body.error.category).toBe('RateLimited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // A success does not reset the count: the address stays locked out for wrong keys.
    expect((await api.request('GET', '/auth/whoami', { token: BAD })).status).toBe(429);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local', rate_limit: RATE } } });
    await api.issueKey('admin');
    // A client cannot escape its lockout by claiming another address.
    for (let i = 0; i < 3; i++) {
      expect((await api.request('GET', '/auth/whoami', { token: BAD, headers: { 'x-forwarded-for': `198.51.100.${i}` } })).status).toBe(401);
    }
    expect((await api.request('GET', '/auth/whoami', { token: BAD, headers: { 'x-forwarded-for': '198.51.100.99' } })).status).toBe(429);
  });

  it('behind a trusted proxy, locks out only the client named by X-Forwarded-For, and audits that address', async () => {
    api = await startTestApi({ config: { server: { trusted_proxies: ['127.0.0.1'] }, auth: { mode: 'local', rate_limit: RATE } } });
    await api.issueKey('admin');
    // The right-most address that is not a trusted proxy is the client; what it claims to its left is not trusted.
    await lockOut(api, { 'x-forwarded-for': '10.9.9.9, 203.0.113.5, 127.0.0.1' });
    const other = await api.request('GET', '/auth/whoami', { token: BAD, headers: { 'x-forwarded-for': '203.0.113.6' } });
    expect(other.status).toBe(401);
    const spoofed = await api.request('GET', '/auth/whoami', { token: BAD, headers: { 'x-forwarded-for': '10.1.1.1, 203.0.113.5' } });
    expect(spoofed.status).toBe(429);
    const [entry] = await api.deps.audit.query({ limit: 1, category: 'auth' });
    expect(entry?.metadata).toMatchObject({ client_address: '203.0.113.6' });
  });

  it('on a unix socket with trusted_proxies = ["unix"], keys the lockout on the proxy\'s X-Forwarded-For', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'ap-lockout-'));
    api = await startTestApi({
      config: { server: { listen: `unix:${join(scratch, 'api.sock')}`, trusted_proxies: ['unix'] }, auth: { mode: 'local', rate_limit: RATE } },
      dataDir: join(scratch, 'data'),
    });
    await api.issueKey('admin');
    await lockOut(api, { 'x-forwarded-for': '203.0.113.7' });
    expect((await api.request('GET', '/auth/whoami', { token: BAD, headers: { 'x-forwarded-for': '203.0.113.8' } })).status).toBe(401);
  });

  it('applies [server] allowed_ips to the client a trusted proxy names', async () => {
    api = await startTestApi({ config: { server: { trusted_proxies: ['127.0.0.1'], allowed_ips: ['203.0.113.0/24'] } } });
    expect((await api.request('GET', '/status', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(200);
    const refused = await api.request('GET', '/status', { headers: { 'x-forwarded-for': '198.51.100.1' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('198.51.100.1');
    // The proxy itself, with nothing forwarded, is a client like any other.
    expect((await api.request('GET', '/status')).status).toBe(403);
  });
});
