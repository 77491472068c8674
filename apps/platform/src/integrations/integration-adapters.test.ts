import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startHttpTestServer,
  writeIntegrationPackage,
  type HttpTestServer,
} from '@agent-platform/integrations/testing';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Streamable-HTTP MCP servers, REST adapters (adapter.json) and SOAP adapters in the all-in-one,
// and DECISIONS D9 for the URLs they bring.
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
let api: PlatformTestApi;
let root: string;
let rest: Server;
let restBase: string;
const seen: Seen[] = [];

function startRestService(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = req.url ?? '';
      if (url.startsWith('/api/slow')) return; // never answers
      if (url.startsWith('/api/policies/missing'))
        return void res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":"no such policy"}');
      if (url.startsWith('/api/policies/'))
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"policy":"P-1","holder":"Ada"}');
      if (url === '/api/claims' && req.method === 'POST')
        return void res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(`{"claim":"C-9","got":${body}}`);
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const adapter = (base: string) => ({
  kind: 'rest',
  base_url: base,
  operations: [
    {
      name: 'get_policy',
      description: 'Look a policy up.',
      method: 'GET',
      path: '/policies/{policy_id}',
      input_schema: { type: 'object', properties: { policy_id: { type: 'string' } } },
    },
    { name: 'open_claim', method: 'POST', path: '/claims' },
    { name: 'cancel_claim', method: 'DELETE', path: '/claims/{claim_id}' },
    { name: 'slow', method: 'GET', path: '/slow' },
  ],
});

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-integration-adapters-'));
  rest = await startRestService();
  const address = rest.address();
  restBase = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/api`;
  api = await startPlatformTestApi({
    config: {
      network: { allow_private_targets: true },
      integrations: { report_interval_secs: 1, restart_backoff_ms: 200, call_timeout_secs: 2 },
    },
  });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await new Promise((resolve) => rest?.close(resolve));
  await rm(root, { recursive: true, force: true });
});

describe('a REST adapter', () => {
  beforeAll(async () => {
    const dir = await writeIntegrationPackage(root, {
      name: 'claims-rest',
      payload: { file: 'adapter.json', data: adapter(restBase) },
    });
    expect(
      (await api.request('POST', '/integrations/install', { body: { name: dir, key: 'rest-key-1' } })).status,
    ).toBe(201);
    expect((await api.request('POST', '/integrations/claims-rest/connect')).status).toBe(200);
  });

  it('is Running with one tool per operation; GET operations are read-only', async () => {
    const info = (await api.request('GET', '/integrations')).body.integrations.find(
      (i: { id: string }) => i.id === 'claims-rest',
    );
    expect(info).toMatchObject({ transport: 'rest', status: 'Running' });
    const tools = (await api.request('GET', '/integrations/claims-rest/tools')).body.tools;
    expect(tools).toEqual([
      {
        name: 'get_policy',
        description: 'Look a policy up.',
        input_schema: { type: 'object', properties: { policy_id: { type: 'string' } } },
      },
      { name: 'open_claim', description: 'POST /claims', input_schema: { type: 'object' } },
      { name: 'cancel_claim', description: 'DELETE /claims/{claim_id}', input_schema: { type: 'object' } },
      { name: 'slow', description: 'GET /slow', input_schema: { type: 'object' } },
    ]);
    const live = await api.integrationHost().tools('claims-rest');
    expect(Object.fromEntries(live.map((t) => [t.name, t.read_only]))).toEqual({
      get_policy: true,
      open_claim: false,
      cancel_claim: false,
      slow: true,
    });
  });

  it('makes the described request: path params from the args, the rest as query (GET, DELETE) or JSON body', async () => {
    const host = api.integrationHost();
    seen.length = 0;
    expect(await host.call('claims-rest', 'get_policy', { policy_id: 'P 1/2', verbose: true }, {})).toEqual({
      text: '{"policy":"P-1","holder":"Ada"}',
      is_error: false,
    });
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/policies/P%201%2F2?verbose=true', body: '' });
    expect(seen[0]?.headers.authorization).toBe('Bearer rest-key-1');
    const opened = await host.call(
      'claims-rest',
      'open_claim',
      { policy_id: 'P-1', amount: 1200 },
      { idempotencyKey: 'run-1:step-2:0' },
    );
    expect(opened).toEqual({
      text: '{"claim":"C-9","got":{"policy_id":"P-1","amount":1200}}',
      is_error: false,
    });
    expect(seen[1]).toMatchObject({
      method: 'POST',
      url: '/api/claims',
      body: '{"policy_id":"P-1","amount":1200}',
    });
    expect(seen[1]?.headers).toMatchObject({
      'idempotency-key': 'run-1:step-2:0',
      'content-type': 'application/json',
    });
    await host.call('claims-rest', 'cancel_claim', { claim_id: 'C-9', reason: 'duplicate' }, {});
    expect(seen[2]).toMatchObject({ method: 'DELETE', url: '/api/claims/C-9?reason=duplicate' });
  });

  it('reports a non-2xx answer as a failed call with the status, and a missing path argument clearly', async () => {
    const host = api.integrationHost();
    expect(await host.call('claims-rest', 'get_policy', { policy_id: 'missing' }, {})).toEqual({
      text: 'HTTP 404 Not Found: {"error":"no such policy"}',
      is_error: true,
    });
    const before = seen.length;
    expect(await host.call('claims-rest', 'get_policy', {}, {})).toEqual({
      text: 'error: missing argument(s) for the path /policies/{policy_id}: policy_id',
      is_error: true,
    });
    expect(seen.length).toBe(before);
  });

  it('fails a call the service never answers within the bound', async () => {
    const started = Date.now();
    await expect(api.integrationHost().call('claims-rest', 'slow', {}, {})).rejects.toMatchObject({
      category: 'Timeout',
      message: expect.stringContaining("tool 'slow' did not answer within 2 s"),
    });
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});

describe('a SOAP adapter', () => {
  it('installs, stays Disabled, and connect is refused as not supported', async () => {
    const dir = await writeIntegrationPackage(root, {
      name: 'legacy-soap',
      payload: {
        file: 'adapter.json',
        data: {
          kind: 'soap',
          base_url: 'https://soap.example.com/ws',
          operations: [{ name: 'get_policy', soap_action: 'urn:GetPolicy' }],
        },
      },
    });
    expect((await api.request('POST', '/integrations/install', { body: { name: dir } })).status).toBe(201);
    expect((await api.request('GET', '/integrations/legacy-soap/status')).body).toEqual({
      id: 'legacy-soap',
      status: 'Disabled',
    });
    const res = await api.request('POST', '/integrations/legacy-soap/connect');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      category: 'ValidationError',
      message: expect.stringContaining('is a soap adapter, which this version does not support'),
    });
    expect((await api.request('GET', '/integrations/legacy-soap/status')).body.status).toBe('Disabled');
  });
});

describe('an MCP server over streamable HTTP', () => {
  let server: HttpTestServer;
  beforeAll(async () => {
    server = await startHttpTestServer();
    const dir = await writeIntegrationPackage(root, {
      name: 'http-claims',
      payload: { file: 'mcp.json', data: { url: server.url } },
    });
    expect(
      (await api.request('POST', '/integrations/install', { body: { name: dir, key: 'http-key-7' } })).status,
    ).toBe(201);
  }, 30_000);
  afterAll(async () => server?.kill());

  it('connects, lists its tools and gets the key as a bearer token', async () => {
    expect((await api.request('POST', '/integrations/http-claims/connect')).status).toBe(200);
    expect((await api.request('GET', '/integrations/http-claims/status')).body.status).toBe('Running');
    expect(
      (await api.request('GET', '/integrations')).body.integrations.find(
        (i: { id: string }) => i.id === 'http-claims',
      ).transport,
    ).toBe('http');
    expect(await api.integrationHost().call('http-claims', 'whoami', {}, {})).toEqual({
      text: 'Bearer http-key-7',
      is_error: false,
    });
  });

  it('reports Error when the server goes away and Running again once it is back', async () => {
    const port = server.port;
    await server.kill();
    // Internal 'unreachable' when the call finds it gone; InvalidState when the host's health check
    // got there first and marked it Error (a loaded machine): a refusal either way.
    const refused = await api.integrationHost().call('http-claims', 'echo', { message: 'x' }, {}).then(() => null, (e: unknown) => e);
    expect(refused, 'the call to a server that went away').not.toBeNull();
    if ((refused as { category?: string }).category !== 'InvalidState') {
      expect(refused).toMatchObject({ category: 'Internal', message: expect.stringContaining('unreachable') });
    }
    await waitUntil(
      async () =>
        typeof (await api.request('GET', '/integrations/http-claims/status')).body.status === 'object',
      { timeoutMs: 10_000, message: 'the Error status' },
    );
    server = await startHttpTestServer({ port });
    await waitUntil(
      async () => (await api.request('GET', '/integrations/http-claims/status')).body.status === 'Running',
      { timeoutMs: 20_000, message: 'Running again' },
    );
    expect((await api.integrationHost().call('http-claims', 'echo', { message: 'back' }, {})).text).toBe(
      'back',
    );
  });
});

describe('D9: private targets from packages', () => {
  let strict: PlatformTestApi;
  beforeAll(async () => {
    strict = await startPlatformTestApi({ config: { integrations: { connect_wait_secs: 5 } } });
  }, 60_000);
  afterAll(async () => strict?.close());

  it('refuses to connect a REST adapter or an MCP url on a private network unless [network] allow_private_targets', async () => {
    const restDir = await writeIntegrationPackage(join(root, 'strict'), {
      name: 'private-rest',
      payload: { file: 'adapter.json', data: adapter(restBase) },
    });
    const mcpDir = await writeIntegrationPackage(join(root, 'strict'), {
      name: 'private-mcp',
      payload: { file: 'mcp.json', data: { url: 'http://localhost:9/mcp' } },
    });
    for (const [id, dir] of [
      ['private-rest', restDir],
      ['private-mcp', mcpDir],
    ] as const) {
      expect((await strict.request('POST', '/integrations/install', { body: { name: dir } })).status).toBe(
        201,
      );
      const res = await strict.request('POST', `/integrations/${id}/connect`);
      expect(res.status).toBe(500);
      expect(res.body.error).toMatchObject({
        category: 'InitError',
        message: expect.stringContaining('allow_private_targets = true (DECISIONS D9)'),
      });
      expect((await strict.request('GET', `/integrations/${id}/status`)).body.status).toBe('Installed');
    }
    // Nothing reached the service from the strict platform (its adapter has no key: no Authorization).
    expect(seen.filter((s) => s.headers.authorization === undefined)).toEqual([]);
  });
});
