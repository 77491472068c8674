import { afterEach, describe, expect, it } from 'vitest';
import { probeRoutes } from '../testing/probe-routes.ts';
import { startTestApi, type TestApi } from '../testing/index.ts';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('auth mode disabled', () => {
  it('treats every caller as the anonymous admin', async () => {
    api = await startTestApi({ routes: [probeRoutes()] });
    const res = await api.request('POST', '/probe/bootstrap');
    expect(res.body).toEqual({ identity: 'anonymous', role: 'admin', key_id: null });
  });
});

describe('bootstrap bypass (spec §Authentication rule 3)', () => {
  it('lets a bootstrap route through without a credential exactly while no key exists', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local' } }, routes: [probeRoutes()] });
    const first = await api.request('POST', '/probe/bootstrap');
    expect(first).toMatchObject({ status: 200, body: { identity: 'bootstrap', role: 'admin', key_id: null } });
    const admin = await api.issueKey('admin');
    expect((await api.request('POST', '/probe/bootstrap')).status).toBe(401);
    expect((await api.request('POST', '/probe/bootstrap', { token: admin })).status).toBe(200);
  });
});

describe('failed attempts', () => {
  it('are audited without the token and lock the client out with 429 + Retry-After', async () => {
    api = await startTestApi({
      config: { auth: { mode: 'local', rate_limit: { max_failed_attempts: 2, base_backoff_secs: 30, max_backoff_secs: 300 } } },
      routes: [probeRoutes()],
    });
    const admin = await api.issueKey('admin');
    for (let i = 0; i < 3; i++) {
      expect((await api.request('GET', '/probe/slow', { token: 'svc_sk_wrong-guess' })).status).toBe(401);
    }
    // Locked out now: a wrong key is refused with 429; a valid one is still served (lockout.test.ts).
    const locked = await api.request('GET', '/auth/whoami', { token: 'svc_sk_wrong-again' });
    expect(locked.status).toBe(429);
    expect((await api.request('GET', '/auth/whoami', { token: admin })).status).toBe(200);
    expect(locked.body.error.category).toBe('RateLimited');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);

    const entries = await api.deps.audit.query({ limit: 10, category: 'auth' });
    expect(entries.length).toBeGreaterThanOrEqual(3);
    expect(entries[0]).toMatchObject({ identity: 'anonymous', result: 'failure', action: 'GET /probe/slow', target: '/probe/slow' });
    expect(JSON.stringify(entries)).not.toContain('wrong-guess');
  });
});

describe('audit of requests', () => {
  it('records a mutating request before the client gets its response, and role denials as access', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local' } }, routes: [probeRoutes()] });
    const operator = await api.issueKey('operator', 'ops');
    const viewer = await api.issueKey('viewer', 'watcher');

    const ok = await api.request('POST', '/probe/echo?x=1', { token: operator, body: { message: 'secret payload' } });
    expect(ok.status).toBe(200);
    const [entry] = await api.deps.audit.query({ limit: 1 });
    expect(entry).toMatchObject({
      category: 'request',
      identity: expect.stringContaining('ops'),
      role: 'operator',
      action: 'POST /probe/echo',
      target: '/probe/echo',
      result: '200',
      metadata: { request_id: ok.headers['x-request-id'] },
    });
    expect(JSON.stringify(entry)).not.toContain('secret payload');

    const denied = await api.request('POST', '/probe/echo', { token: viewer, body: { message: 'x' } });
    expect(denied.status).toBe(403);
    const [access] = await api.deps.audit.query({ limit: 1 });
    expect(access).toMatchObject({ category: 'access', role: 'viewer', action: 'POST /probe/echo', result: '403' });
  });

  it('does not audit reads', async () => {
    api = await startTestApi({ routes: [probeRoutes()] });
    const before = await api.deps.audit.count();
    await api.request('GET', '/status');
    expect(await api.deps.audit.count()).toBe(before);
  });

  // docs/audit.md "Who writes an entry": the worker appends the entry of an answered message; the
  // api writes it only when the worker did not, or when the response ends with another status.
  it('hands a message route\'s entry to its worker, and writes it only when the worker did not or the status differs', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local' } }, routes: [probeRoutes()] });
    const operator = await api.issueKey('operator', 'ops');
    const entriesOf = async (id: string) => (await api!.deps.audit.query({ limit: 50 })).filter((e) => e.metadata?.request_id === id).map((e) => e.result);
    const send = (body: { status: number; audited: boolean }) => api!.request('POST', '/probe/worker-audited', { token: operator, body });

    const answered = await send({ status: 200, audited: true });
    expect(answered.body.entry).toMatchObject({
      category: 'request',
      role: 'operator',
      action: 'POST /probe/worker-audited',
      target: '/probe/worker-audited',
      result: '200',
      metadata: { request_id: answered.headers['x-request-id'] },
    });
    expect(await entriesOf(String(answered.headers['x-request-id']))).toEqual([]);
    const notAudited = await send({ status: 200, audited: false });
    expect(await entriesOf(String(notAudited.headers['x-request-id']))).toEqual(['200']);
    const failedAfter = await send({ status: 500, audited: true });
    expect(await entriesOf(String(failedAfter.headers['x-request-id']))).toEqual(['500']);
  });
});
