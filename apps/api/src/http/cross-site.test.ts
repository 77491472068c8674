import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

// Issue "Hardening" 6: with auth disabled on loopback, a web page could drive the daemon: no Host
// or Origin check (DNS rebinding, cross-site requests), and a body without Content-Type was read
// as JSON (a "simple" cross-site request needs no preflight). docs/http.md "Cross-site requests".
let api: TestApi | undefined;
let scratch: string | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  scratch = undefined;
});

const APPEND = { event_type: 'probe', agent_id: 'a', detail: 'written by a web page' };

describe('with auth disabled', () => {
  it('refuses a cross-site Origin: nothing is written', async () => {
    api = await startTestApi();
    const before = await api.deps.audit.count();
    const res = await api.request('POST', '/audit/append', { body: APPEND, headers: { origin: 'https://evil.example' } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ category: 'PermissionDenied', message: expect.stringContaining('cross-site') });
    expect(await api.deps.audit.count()).toBe(before);
  });

  it('refuses a Host name other than loopback or [server] allowed_hosts (DNS rebinding)', async () => {
    api = await startTestApi();
    const res = await api.request('GET', '/config', { headers: { host: 'attacker.example:4200' } });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('attacker.example');
    expect(JSON.stringify(res.body)).not.toContain('data_dir');
  });

  it('refuses a request a browser marks Sec-Fetch-Site cross-site or same-site', async () => {
    api = await startTestApi();
    for (const site of ['cross-site', 'same-site']) {
      expect((await api.request('GET', '/config', { headers: { 'sec-fetch-site': site } })).status).toBe(403);
    }
  });

  it('serves same-origin requests, loopback and IP host names, user navigations and configured hosts', async () => {
    api = await startTestApi({ config: { server: { allowed_hosts: ['agents.internal.example'] } } });
    const port = new URL(api.url).port;
    const ok: Array<Record<string, string>> = [
      { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
      { host: `[::1]:${port}` },
      { host: `10.20.30.40:${port}` },
      { 'sec-fetch-site': 'none' },
      { host: 'agents.internal.example', origin: 'http://agents.internal.example' },
    ];
    for (const headers of ok) {
      const res = await api.request('POST', '/audit/append', { body: APPEND, headers });
      expect([res.status, headers]).toEqual([201, headers]);
    }
  });

  it('serves an Origin listed in [server.cors] allowed_origins', async () => {
    api = await startTestApi({ config: { server: { cors: { allowed_origins: ['https://console.example'] } } } });
    expect((await api.request('POST', '/audit/append', { body: APPEND, headers: { origin: 'https://console.example' } })).status).toBe(201);
    expect((await api.request('POST', '/audit/append', { body: APPEND, headers: { origin: 'https://other.example' } })).status).toBe(403);
  });

  it('does not check Host on a unix socket, which browsers cannot reach', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'ap-xsite-'));
    api = await startTestApi({ config: { server: { listen: `unix:${join(scratch, 'api.sock')}` } }, dataDir: join(scratch, 'data') });
    expect((await api.request('GET', '/config', { headers: { host: 'whatever' } })).status).toBe(200);
  });
});

describe('with auth local', () => {
  it('leaves Host and Origin alone: a browser cannot attach the bearer token cross-site', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local' } } });
    const admin = await api.issueKey('admin');
    const res = await api.request('GET', '/config', { token: admin, headers: { host: 'api.carrier.example', origin: 'https://console.carrier.example' } });
    expect(res.status).toBe(200);
  });
});

describe('a body without Content-Type', () => {
  it('is refused with 415, in every auth mode, and changes nothing', async () => {
    api = await startTestApi();
    const before = await api.deps.audit.count();
    const res = await api.request('POST', '/audit/append', { body: JSON.stringify(APPEND) });
    expect(res.status).toBe(415);
    expect(res.body.error).toMatchObject({ category: 'UnsupportedMediaType', message: expect.stringContaining('application/json') });
    // Only the refused request itself is on record; the event it carried was not appended.
    expect(await api.deps.audit.count()).toBe(before + 1);
    const [last] = await api.deps.audit.query({ limit: 1 });
    expect(last).toMatchObject({ action: 'POST /audit/append', result: '415' });
  });

  it('is fine when there is no body at all', async () => {
    api = await startTestApi();
    expect((await api.request('POST', '/auth/logout')).status).toBe(200);
  });
});
