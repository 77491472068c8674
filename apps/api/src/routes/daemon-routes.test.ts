import { readFile, writeFile } from 'node:fs/promises';
import { Agent, get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createGate, probeRoutes } from '../testing/probe-routes.ts';
import { startTestApi, type TestApi } from '../testing/index.ts';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function getJson(url: string, path: string, agent: Agent): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    get(new URL(path, url), { agent }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    }).on('error', reject);
  });
}

describe('GET /health', () => {
  it('needs no credential in local mode and reports every engine', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local' } } });
    const res = await api.request('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      version: api.deps.version,
      uptime_secs: expect.any(Number),
      engines: {
        store: { kind: 'embedded', status: 'ok' },
        bus: { kind: 'embedded', status: 'ok' },
        queue: { kind: 'embedded', status: 'ok' },
      },
    });
  });

  it('answers 503 degraded when an engine is down', async () => {
    api = await startTestApi({ listen: false });
    await api.deps.queue.close();
    const res = await api.request('GET', '/health');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: 'degraded', engines: { queue: { status: 'down' }, store: { status: 'ok' } } });
  });
});

describe('GET /metrics', () => {
  it('needs a credential and exposes request counts by route pattern', async () => {
    api = await startTestApi({ config: { auth: { mode: 'local' } } });
    expect((await api.request('GET', '/metrics')).status).toBe(401);
    const viewer = await api.issueKey('viewer');
    await api.request('GET', '/health');
    const res = await api.request('GET', '/metrics', { token: viewer });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(res.body).toContain('http_requests_total{method="GET",route="/health",status="200"} 1');
    expect(res.body).toContain('http_requests_total{method="GET",route="/metrics",status="401"} 1');
    expect(res.body).toMatch(/auth_failures_total\{reason="missing"\} 1/);
  });
});

describe('GET /config and POST /config/reload', () => {
  it('shows the config file with secrets redacted', async () => {
    api = await startTestApi({ config: { runtime: { mongodb_url: 'mongodb://app:hunter2@db.internal:27017/ap' } } });
    const res = await api.request('GET', '/config');
    expect(res.status).toBe(200);
    expect(res.body.config).toContain('db.internal');
    expect(res.body.config).not.toContain('hunter2');
  });

  it('applies a good file and reports keys that need a restart', async () => {
    api = await startTestApi({ config: { server: { body_limit_bytes: 64 } }, routes: [probeRoutes()] });
    const body = { message: 'x'.repeat(100) };
    expect((await api.request('POST', '/probe/echo', { body })).status).toBe(413);
    const text = await readFile(api.configPath, 'utf8');
    await writeFile(api.configPath, text.replace('body_limit_bytes = 64', 'body_limit_bytes = 4096').replace('level = "info"', 'level = "info"\n'));
    const res = await api.request('POST', '/config/reload');
    expect(res).toMatchObject({ status: 200, body: { status: 'reloaded', restart_required: [] } });
    expect((await api.request('POST', '/probe/echo', { body })).status).toBe(200);
    const [entry] = await api.deps.audit.query({ limit: 1, category: 'config' });
    expect(entry).toMatchObject({ action: 'POST /config/reload', result: '200' });
  });

  it('refuses a bad file with 400 ConfigError naming the problem and keeps the running config', async () => {
    api = await startTestApi({ config: { server: { body_limit_bytes: 64 } }, routes: [probeRoutes()] });
    const text = await readFile(api.configPath, 'utf8');
    await writeFile(api.configPath, text.replace('body_limit_bytes = 64', 'body_limit_bytes = "lots"'));
    const res = await api.request('POST', '/config/reload');
    expect(res.status).toBe(400);
    expect(res.body.error.category).toBe('ConfigError');
    expect(JSON.stringify(res.body.error.details)).toContain('body_limit_bytes');
    expect((await api.request('POST', '/probe/echo', { body: { message: 'x'.repeat(100) } })).status).toBe(413);
  });
});

describe('POST /config/reload and the boot gate (issue "Hardening" 4)', () => {
  it('refuses a reload to auth mode disabled on a non-loopback listener, and changes nothing', async () => {
    api = await startTestApi({ config: { server: { listen: '0.0.0.0:0' }, auth: { mode: 'local' } } });
    const admin = await api.issueKey('admin');
    const text = await readFile(api.configPath, 'utf8');
    // The file may even say loopback now: what counts is the listener that is actually bound.
    await writeFile(api.configPath, text.replace('mode = "local"', 'mode = "disabled"').replace('listen = "0.0.0.0:0"', 'listen = "127.0.0.1:0"'));
    const res = await api.request('POST', '/config/reload', { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ category: 'ConfigError', message: expect.stringContaining('0.0.0.0') });
    expect(api.deps.config.current().auth.mode).toBe('local');
    expect((await api.request('GET', '/vault')).status).toBe(401);
    expect((await api.request('GET', '/config', { token: admin })).body.config).toContain('mode = "local"');
  });

  it('accepts the same reload with allow_insecure_no_auth, as the boot gate would', async () => {
    api = await startTestApi({ config: { server: { listen: '0.0.0.0:0' }, auth: { mode: 'local' } } });
    const admin = await api.issueKey('admin');
    const text = await readFile(api.configPath, 'utf8');
    await writeFile(api.configPath, text.replace('mode = "local"', 'mode = "disabled"\nallow_insecure_no_auth = true'));
    expect((await api.request('POST', '/config/reload', { token: admin })).status).toBe(200);
    expect((await api.request('GET', '/auth/whoami')).body).toMatchObject({ identity: 'anonymous' });
  });
});

describe('POST /shutdown', () => {
  it('answers 202, lets an in-flight request finish, then stops listening', async () => {
    const gate = createGate();
    api = await startTestApi({ routes: [probeRoutes(gate)] });
    // A browser-like keep-alive client: its connection stays open after the response, which a
    // graceful stop must close instead of waiting for the client to let go.
    const agent = new Agent({ keepAlive: true });
    const slow = getJson(api.url, '/probe/slow', agent);
    const deadline = Date.now() + 5000;
    while (gate.entered === 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    expect(gate.entered).toBe(1);

    const res = await api.request('POST', '/shutdown');
    expect(res).toMatchObject({ status: 202, body: { status: 'shutting_down' } });
    gate.open();
    expect(await slow).toMatchObject({ status: 200, body: { message: 'finished' } });
    await api.waitForShutdown();
    agent.destroy();
    await expect(api.request('GET', '/health')).rejects.toThrow(/ECONNREFUSED/);
    const [entry] = await api.deps.audit.query({ limit: 1, category: 'system' });
    expect(entry).toMatchObject({ action: 'POST /shutdown', result: '202' });
  });
});

describe('GET /logs and GET /status', () => {
  it('returns the requested number of recent log lines', async () => {
    api = await startTestApi();
    let health = await api.request('GET', '/health');
    for (let i = 0; i < 2; i++) health = await api.request('GET', '/health?token=svc_sk_in-a-query');
    const res = await api.request('GET', '/logs?lines=2');
    expect(res.status).toBe(200);
    expect(res.body.lines).toHaveLength(2);
    // The request line: its request id, the route and the path, never the query string.
    expect(JSON.parse(res.body.lines[1])).toMatchObject({
      msg: 'request',
      level: 30,
      reqId: health.headers['x-request-id'],
      method: 'GET',
      route: '/health',
      path: '/health',
      status: 200,
    });
    expect(res.body.lines.join('\n')).not.toContain('svc_sk_in-a-query');
    for (const bad of ['0', '10001', 'many']) expect((await api.request('GET', `/logs?lines=${bad}`)).status, bad).toBe(400);
  });

  it('describes the running daemon', async () => {
    api = await startTestApi();
    const res = await api.request('GET', '/status');
    expect(res.body).toMatchObject({
      version: api.deps.version,
      pid: process.pid,
      auth_mode: 'disabled',
      surfaces: { api: true },
      runtime: { bus: 'embedded', store: 'embedded', queue: 'embedded' },
      listen: '127.0.0.1:0',
      address: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      tls: false,
    });
  });
});
