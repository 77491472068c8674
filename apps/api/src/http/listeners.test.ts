import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../testing/index.ts';

let api: TestApi | undefined;
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'ap-listen-'));
});
afterEach(async () => {
  await api?.close();
  api = undefined;
});
afterAll(async () => rm(scratch, { recursive: true, force: true }));

describe('native TLS', () => {
  it('serves HTTPS with the configured certificate', async () => {
    const cert = join(scratch, 'cert.pem');
    const key = join(scratch, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], {
      stdio: 'ignore',
    });
    api = await startTestApi({ config: { server: { tls: { cert_file: cert, key_file: key } } } });
    expect(api.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await api.request('GET', '/health');
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await api.request('GET', '/status')).body.tls).toBe(true);
  });
});

describe('unix socket listener', () => {
  it('listens on the socket path, replacing a stale socket', async () => {
    const socket = join(scratch, 'api.sock');
    // A process killed while listening leaves its socket file behind, as after a crash.
    spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, 'SIGKILL'))`]);
    expect(lstatSync(socket).isSocket()).toBe(true);
    api = await startTestApi({ config: { server: { listen: `unix:${socket}` } }, dataDir: join(scratch, 'unix-data') });
    expect(api.url).toBe(`unix:${socket}`);
    expect((await api.request('GET', '/health')).status).toBe(200);
    expect((await api.request('GET', '/status')).body.address).toBe(`unix:${socket}`);
  });
});

describe('CORS', () => {
  const preflight = { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' };

  it('answers a preflight from an allowed origin before authentication', async () => {
    api = await startTestApi({
      config: { auth: { mode: 'local' }, server: { cors: { allowed_origins: ['https://app.example'], max_age_secs: 120 } } },
    });
    const res = await api.request('OPTIONS', '/auth/keys', { headers: preflight });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    expect(res.headers['access-control-max-age']).toBe('120');
    // A simple request still needs its credential; the browser can read the 401.
    const denied = await api.request('GET', '/status', { headers: { origin: 'https://app.example' } });
    expect(denied.status).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(denied.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
  });

  it('answers any origin with "*", credentials for listed ones, varies by Origin, refuses a bare OPTIONS', async () => {
    api = await startTestApi({ config: { server: { cors: { allowed_origins: ['*'] } } } });
    const any = await api.request('GET', '/health', { headers: { origin: 'https://any.example' } });
    expect(any.headers['access-control-allow-origin']).toBe('*');
    expect(any.headers['access-control-allow-credentials']).toBeUndefined();
    expect(any.headers.vary).toContain('Origin');
    await api.close();
    api = await startTestApi({ config: { server: { cors: { allowed_origins: ['https://app.example'], allow_credentials: true } } } });
    const listed = await api.request('GET', '/health', { headers: { origin: 'https://app.example' } });
    expect(listed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(listed.headers['access-control-allow-credentials']).toBe('true');
    const res = await api.request('OPTIONS', '/agents', { headers: preflight });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-headers']).toBe('authorization,content-type');
    expect(res.headers['access-control-max-age']).toBe('600');
    const bare = await api.request('OPTIONS', '/agents', { headers: { origin: 'https://app.example' } });
    expect(bare.status).toBe(400);
  });

  it('follows [server.cors] across a config reload, with no CORS headers while it is absent', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local' } } });
    const admin = await api.issueKey('admin');
    const before = await api.request('GET', '/health', { headers: { origin: 'https://app.example' } });
    expect(before.headers['access-control-allow-origin']).toBeUndefined();
    expect(before.headers.vary).toBeUndefined();
    await writeFile(api.configPath, `${await readFile(api.configPath, 'utf8')}\n[server.cors]\nallowed_origins = ["https://app.example"]\n`);
    expect((await api.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    const after = await api.request('OPTIONS', '/auth/keys', { headers: preflight });
    expect(after.status).toBe(204);
    expect(after.headers['access-control-allow-origin']).toBe('https://app.example');
  });

  it('sends no CORS headers to an origin not listed, or without [server.cors]', async () => {
    api = await startTestApi({ config: { server: { cors: { allowed_origins: ['https://app.example'] } } } });
    const other = await api.request('GET', '/status', { headers: { origin: 'https://evil.example' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    await api.close();
    api = await startTestApi();
    const none = await api.request('OPTIONS', '/status', { headers: preflight });
    expect(none.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('Api-Version (spec §Versioning)', () => {
  it('defaults to v1, accepts v1 in any case or as 1, refuses anything else', async () => {
    api = await startTestApi();
    const accepted: Record<string, string>[] = [{}, { 'api-version': 'v1' }, { 'api-version': 'V1' }, { 'api-version': '1' }];
    for (const headers of accepted) {
      const res = await api.request('GET', '/status', { headers });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.headers['api-version']).toBe('v1');
    }
    const v2 = await api.request('GET', '/status', { headers: { 'api-version': 'v2' } });
    expect(v2.status).toBe(400);
    expect(v2.body.error).toMatchObject({ category: 'ValidationError', message: expect.stringContaining('v1') });
    expect(v2.headers['api-version']).toBe('v1');
  });
});
