import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { buildAllowList, normalizeAddress } from './client-address.ts';
import { createGate, probeRoutes } from '../testing/probe-routes.ts';
import { startTestApi, type TestApi } from '../testing/index.ts';

let api: TestApi | undefined;
let gate = createGate();
afterEach(async () => {
  gate.open();
  gate = createGate();
  await api?.close();
  api = undefined;
});

/** Sends a body with Transfer-Encoding: chunked (no declared length). */
function postChunked(url: string, path: string, chunks: string[]): Promise<{ status: number; body: { error: { category: string } } }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const req = request({ hostname, port, path, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { error: { category: string } } }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('body size limit (spec §Limits)', () => {
  it('413 SizeLimitExceeded when the declared length is over body_limit_bytes', async () => {
    api = await startTestApi({ config: { server: { body_limit_bytes: 64 } }, routes: [probeRoutes()] });
    const res = await api.request('POST', '/probe/echo', { body: { message: 'x'.repeat(100) } });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ category: 'SizeLimitExceeded', details: { limit_bytes: 64 } });
    expect((await api.request('POST', '/probe/echo', { body: { message: 'small' } })).status).toBe(200);
  });

  it('413 for a chunked body that grows over the limit', async () => {
    api = await startTestApi({ config: { server: { body_limit_bytes: 64 } }, routes: [probeRoutes()] });
    const res = await postChunked(api.url, '/probe/echo', ['{"message":"', 'y'.repeat(80), '"}']);
    expect(res.status).toBe(413);
    expect(res.body.error.category).toBe('SizeLimitExceeded');
  });
});

describe('request timeout (spec §Limits)', () => {
  it('cuts a request off with 408 after request_timeout_secs', async () => {
    api = await startTestApi({ config: { server: { request_timeout_secs: 1 } }, routes: [probeRoutes(gate)] });
    const started = Date.now();
    const res = await api.request('GET', '/probe/slow');
    expect(res.status).toBe(408);
    expect(res.body.error.category).toBe('RequestTimeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});

describe('allowed_ips', () => {
  it('serves a listed client', async () => {
    api = await startTestApi({ config: { server: { allowed_ips: ['10.0.0.0/8', '127.0.0.1'] } } });
    expect((await api.request('GET', '/status')).status).toBe(200);
  });

  it('refuses an unlisted client with 403 PermissionDenied naming its address', async () => {
    api = await startTestApi({ config: { server: { allowed_ips: ['10.0.0.0/8', 'fd00::/8'] } } });
    const res = await api.request('GET', '/health');
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ category: 'PermissionDenied', message: expect.stringContaining('127.0.0.1') });
  });

  it('matches IPv4, IPv6 and IPv4-mapped IPv6 addresses and CIDRs', () => {
    const list = buildAllowList(['192.168.1.0/24', '2001:db8::/32', '::ffff:10.1.0.0/112', '::1']);
    const allowed = (a: string): boolean => {
      const n = normalizeAddress(a);
      return n !== null && list.check(n.address, n.family);
    };
    expect(allowed('192.168.1.77')).toBe(true);
    expect(allowed('::ffff:192.168.1.77')).toBe(true);
    expect(allowed('192.168.2.1')).toBe(false);
    expect(allowed('2001:db8::5')).toBe(true);
    expect(allowed('2001:db9::5')).toBe(false);
    expect(allowed('10.1.200.3')).toBe(true);
    expect(allowed('10.2.0.1')).toBe(false);
    expect(allowed('::1')).toBe(true);
  });
});
