import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// GET /connectors/health against the all-in-one (docs/connectors.md), with real local HTTP
// servers standing in for the connectors: one answering at once, one slow, one that never
// answers, one failing, and a port where nothing listens.
let api: PlatformTestApi | null = null;
const servers: Server[] = [];
afterEach(async () => {
  await api?.close();
  api = null;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
}

/** A port that was free a moment ago: connecting is refused. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/health`;
}

describe('GET /connectors/health', () => {
  it('reports the six connectors NotConfigured when no URL is set', async () => {
    api = await startPlatformTestApi();
    const res = await api.request('GET', '/connectors/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      connectors: [
        ['claims-system', 'Claims system'],
        ['crm', 'CRM'],
        ['e-signature', 'E-signature'],
        ['object-store', 'Object store'],
        ['payments', 'Payments'],
        ['sso', 'Single sign-on'],
      ].map(([id, name]) => ({ id, name, status: 'NotConfigured', latency_ms: null, error: null })),
    });
  });

  it('probes concurrently: Healthy, Degraded over budget, Unreachable for a hung, failing or closed one, within the timeout', async () => {
    const healthy = await serve((_req, res) => res.writeHead(204).end());
    const slow = await serve((_req, res) => setTimeout(() => res.writeHead(200).end('ok'), 900));
    const hung = await serve(() => undefined); // accepts the connection, never answers
    const failing = await serve((_req, res) => res.writeHead(503).end('down'));
    const notFound = await serve((_req, res) => res.writeHead(404).end());
    api = await startPlatformTestApi({
      config: {
        connectors: {
          latency_budget_ms: 700, // the healthy server's 204 must fit even with other test files loading both cores
          timeout_ms: 1500,
          urls: {
            'claims-system': healthy,
            crm: slow,
            'e-signature': hung,
            payments: failing,
            sso: await closedPort(),
            'object-store': notFound,
          },
        },
      },
    });

    const started = Date.now();
    const res = await api.request('GET', '/connectors/health');
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    const byId = Object.fromEntries(
      (res.body.connectors as Array<{ id: string; latency_ms: number | null }>).map((c) => [c.id, c]),
    );
    expect(byId['claims-system']).toEqual({
      id: 'claims-system',
      name: 'Claims system',
      status: 'Healthy',
      latency_ms: expect.any(Number),
      error: null,
    });
    expect(byId.crm).toMatchObject({
      status: 'Degraded',
      error: expect.stringContaining('over the 700 ms latency budget'),
    });
    expect(byId.crm?.latency_ms).toBeGreaterThanOrEqual(700);
    expect(byId['e-signature']).toEqual({
      id: 'e-signature',
      name: 'E-signature',
      status: 'Unreachable',
      latency_ms: null,
      error: 'no answer within 1500 ms',
    });
    expect(byId.payments).toMatchObject({
      status: 'Unreachable',
      latency_ms: expect.any(Number),
      error: 'answered HTTP 503',
    });
    expect(byId.sso).toMatchObject({
      status: 'Unreachable',
      latency_ms: null,
      error: expect.stringContaining('ECONNREFUSED'),
    });
    // A 4xx still proves the connector is there and answering.
    expect(byId['object-store']).toMatchObject({ status: 'Healthy', error: null });
    // Concurrent: the hung probe's 1.5 s bound, not the sum of the probes (sequential: >= 2.4 s).
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(elapsed).toBeLessThan(2400);
  });

  it('follows a config reload: a URL added to the file is probed on the next call', async () => {
    const healthy = await serve((_req, res) => res.writeHead(200).end());
    api = await startPlatformTestApi();
    const { readFile, writeFile } = await import('node:fs/promises');
    const text = await readFile(api.configPath, 'utf8');
    await writeFile(api.configPath, `${text}\n[connectors.urls]\ncrm = "${healthy}"\n`);
    expect((await api.request('POST', '/config/reload')).status).toBe(200);
    const crm = (await api.request('GET', '/connectors/health')).body.connectors.find(
      (c: { id: string }) => c.id === 'crm',
    );
    expect(crm.status).toBe('Healthy');
  });
});
