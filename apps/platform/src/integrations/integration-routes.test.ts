import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  stdioServerPayload,
  writeConsumerFamily,
  writeIntegrationPackage,
} from '@agent-platform/integrations/testing';
import { processAlive, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// Spec §Integrations and contracts over HTTP against the all-in-one (its integration host runs
// the servers in this process), with a real stdio MCP server built with the official SDK.
const KEY = 'sk-claims-4f1d9c-very-secret';
let api: PlatformTestApi;
let root: string;
let admin: string;
let operator: string;
let viewer: string;
let serverDir: string;

const status = async (id: string) =>
  (await api.request('GET', `/integrations/${id}/status`, { token: viewer })).body;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-integrations-'));
  api = await startPlatformTestApi({
    config: {
      auth: { mode: 'local' },
      integrations: { report_interval_secs: 1, restart_backoff_ms: 100, call_timeout_secs: 3 },
    },
  });
  admin = await api.issueKey('admin');
  operator = await api.issueKey('operator');
  viewer = await api.issueKey('viewer');
  serverDir = await writeIntegrationPackage(root, {
    name: 'claims-server',
    payload: { file: 'mcp.json', data: stdioServerPayload({ COUNT_FILE: join(root, 'count.log') }) },
    implements: { 'claims-system': {} },
  });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await rm(root, { recursive: true, force: true });
});

describe('install', () => {
  it('installs an integration package, keeps the key in the vault and never shows it', async () => {
    const res = await api.request('POST', '/integrations/install', {
      token: admin,
      body: { name: serverDir, key: KEY },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'installed', name: 'claims-server' });
    const list = await api.request('GET', '/integrations', { token: viewer });
    expect(list.body.integrations).toEqual([
      {
        id: 'claims-server',
        name: 'claims-server',
        description: 'The integration claims-server.',
        version: '1.0.0',
        transport: 'stdio',
        status: 'Installed',
      },
    ]);
    expect(await status('claims-server')).toEqual({ id: 'claims-server', status: 'Installed' });
    const vault = await api.request('GET', '/vault', { token: admin });
    expect(vault.body).toEqual([expect.objectContaining({ key: 'integration.claims-server.key' })]);
    const audit = await api.request('GET', '/security/audit?limit=100', { token: admin });
    expect(JSON.stringify(audit.body)).toContain('/integrations/install');
    expect(JSON.stringify(audit.body)).not.toContain(KEY);
    expect(JSON.stringify(vault.body) + JSON.stringify(list.body) + api.logs().join('\n')).not.toContain(KEY);
  });

  it.each([
    ['no name', {}, 'ValidationError'],
    ['a relative path', { name: 'claims-server' }, 'ValidationError'],
    ['an empty key', { name: '/tmp/x', key: '' }, 'ValidationError'],
    ['an unknown field', { name: '/tmp/x', command: 'rm -rf /' }, 'ValidationError'],
    ['a directory that does not exist', { name: '/nonexistent/integration' }, 'ValidationError'],
  ])('refuses %s with a clear error and changes nothing', async (_, body, category) => {
    const before = await api.request('GET', '/catalog/installed', { token: viewer });
    const res = await api.request('POST', '/integrations/install', { token: admin, body });
    expect(res.status).toBe(400);
    expect(res.body.error.category).toBe(category);
    expect((await api.request('GET', '/catalog/installed', { token: viewer })).body).toEqual(before.body);
  });

  it('refuses a package of another type, and a broken mcp.json, installing nothing', async () => {
    const agentDir = await writeConsumerFamily(join(root, 'other'), {
      agent: 'not-an-integration',
      competency: 'some-competency',
    });
    const wrongType = await api.request('POST', '/integrations/install', {
      token: admin,
      body: { name: agentDir },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain(
      'holds the agent-template package not-an-integration, not an integration',
    );
    const broken = await writeIntegrationPackage(join(root, 'broken'), {
      name: 'broken-server',
      payload: { file: 'mcp.json', data: { command: 'node', url: 'https://x.example/mcp' } },
    });
    const res = await api.request('POST', '/integrations/install', {
      token: admin,
      body: { name: broken, key: 'k' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.problems).toEqual([expect.objectContaining({ rule: 'command-or-url' })]);
    const names = (await api.request('GET', '/catalog/installed', { token: viewer })).body.packages.map(
      (p: { name: string }) => p.name,
    );
    expect(names).toEqual(['claims-server']);
    expect(
      (await api.request('GET', '/vault', { token: admin })).body.map((e: { key: string }) => e.key),
    ).toEqual(['integration.claims-server.key']);
  });

  it('is IntegrationManage: a viewer may read but not install or connect', async () => {
    // Installing from a directory on the server is IntegrationInstall: admin only (docs/integrations.md "Who may install").
    expect(
      (await api.request('POST', '/integrations/install', { token: operator, body: { name: serverDir } }))
        .status,
    ).toBe(403);
    expect(
      (await api.request('POST', '/integrations/install', { token: viewer, body: { name: serverDir } }))
        .status,
    ).toBe(403);
    expect((await api.request('POST', '/integrations/claims-server/connect', { token: viewer })).status).toBe(
      403,
    );
    expect((await api.request('GET', '/integrations', { token: viewer })).status).toBe(200);
  });
});

describe('status transitions', () => {
  it('answers 404 NotFound for an integration that is not installed', async () => {
    for (const path of ['status', 'tools']) {
      const res = await api.request('GET', `/integrations/nope/${path}`, { token: viewer });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ category: 'NotFound', message: "integration 'nope' not found" });
    }
    for (const verb of ['connect', 'disconnect', 'reconnect'])
      expect((await api.request('POST', `/integrations/nope/${verb}`, { token: operator })).status).toBe(404);
    expect((await api.request('DELETE', '/integrations/nope', { token: operator })).status).toBe(404);
  });

  it('has no tools before it is connected, and says why', async () => {
    const res = await api.request('GET', '/integrations/claims-server/tools', { token: viewer });
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({
      category: 'InvalidState',
      message: expect.stringContaining('its status is Installed; connect it'),
    });
  });

  it('connect: Installed -> Running, with the live tool list', async () => {
    const res = await api.request('POST', '/integrations/claims-server/connect', { token: operator });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'connected', id: 'claims-server' });
    expect(await status('claims-server')).toEqual({ id: 'claims-server', status: 'Running' });
    const tools = await api.request('GET', '/integrations/claims-server/tools', { token: viewer });
    expect(tools.body.id).toBe('claims-server');
    expect(tools.body.tools.map((t: { name: string }) => t.name)).toEqual([
      'echo',
      'count',
      'hang',
      'exit',
      'fail',
      'env',
      'whoami',
    ]);
    expect(tools.body.tools[0]).toEqual({
      name: 'echo',
      description: 'Answers with the message.',
      input_schema: expect.objectContaining({ type: 'object' }),
    });
  });

  it('runs the server with the key as INTEGRATION_KEY, and its tools through IntegrationTools', async () => {
    const host = api.integrationHost();
    expect(await host.call('claims-server', 'env', { name: 'INTEGRATION_KEY' }, {})).toEqual({
      text: KEY,
      is_error: false,
    });
    expect((await host.tools('claims-server')).find((t) => t.name === 'echo')?.read_only).toBe(true);
    const counted = await host.call('claims-server', 'count', {}, { idempotencyKey: 'run-7:step-1:0' });
    expect(counted.text).toMatch(/^count=1 key=run-7:step-1:0/);
    expect(await readFile(join(root, 'count.log'), 'utf8')).toMatch(/^count=1 key=run-7:step-1:0 pid=\d+\n$/);
  });

  it('connect again is a no-op: the same server keeps running', async () => {
    const pid = async () =>
      /pid=(\d+)/.exec((await api.integrationHost().call('claims-server', 'count', {}, {})).text)?.[1];
    const before = await pid();
    expect(
      (await api.request('POST', '/integrations/claims-server/connect', { token: operator })).status,
    ).toBe(200);
    expect(await pid()).toBe(before);
  });

  it('reconnect: restarts the server (a new process), Running again', async () => {
    const pid = async () =>
      /pid=(\d+)/.exec((await api.integrationHost().call('claims-server', 'count', {}, {})).text)?.[1];
    const before = await pid();
    const res = await api.request('POST', '/integrations/claims-server/reconnect', { token: operator });
    expect(res.body).toEqual({ status: 'connected', id: 'claims-server' });
    expect(await status('claims-server')).toEqual({ id: 'claims-server', status: 'Running' });
    expect(await pid()).not.toBe(before);
  });

  it('disconnect: Running -> Disconnected; the tools are gone here too', async () => {
    const res = await api.request('POST', '/integrations/claims-server/disconnect', { token: operator });
    expect(res.body).toEqual({ status: 'disconnected', id: 'claims-server' });
    expect(await status('claims-server')).toEqual({ id: 'claims-server', status: 'Disconnected' });
    await waitUntil(
      async () =>
        (await api
          .integrationHost()
          .tools('claims-server')
          .catch(() => null)) === null,
      { message: 'the host to close it' },
    );
    await expect(
      api.integrationHost().call('claims-server', 'echo', { message: 'x' }, {}),
    ).rejects.toMatchObject({
      category: 'InvalidState',
      message: expect.stringContaining('not connected'),
    });
    expect(
      (await api.request('GET', '/integrations/claims-server/tools', { token: viewer })).body.error.message,
    ).toContain('its status is Disconnected');
  });

  it('connect: Disconnected -> Running', async () => {
    expect(
      (await api.request('POST', '/integrations/claims-server/connect', { token: operator })).status,
    ).toBe(200);
    expect(await status('claims-server')).toEqual({ id: 'claims-server', status: 'Running' });
  });
});

describe('refusal while live consumers depend on it', () => {
  let agentId: string;

  beforeAll(async () => {
    // The agent's competency lists the contract claims-server implements; activate: true makes it Running.
    const dir = await writeConsumerFamily(join(root, 'consumers'), {
      agent: 'claims-agent',
      competency: 'claims-handling',
      contracts: ['claims-system'],
    });
    const res = await api.request('POST', '/catalog/install', {
      token: admin,
      body: { path: dir, activate: true },
    });
    expect(res.status).toBe(201);
    agentId = res.body.installed.at(-1).id;
  });

  it('refuses disconnect, reconnect and delete with 403 naming the consumers, and changes nothing', async () => {
    for (const [method, path] of [
      ['POST', '/integrations/claims-server/disconnect'],
      ['POST', '/integrations/claims-server/reconnect'],
      ['DELETE', '/integrations/claims-server'],
      ['DELETE', '/catalog/installed/claims-server'],
    ] as const) {
      const res = await api.request(method, path, { token: admin });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({
        category: 'PermissionDenied',
        message: expect.stringMatching(
          /^cannot (disconnect|reconnect|delete|uninstall) integration 'claims-server': Running agent\(s\) claims-agent depend on it; suspend them first$/,
        ),
        details: {
          integration_id: 'claims-server',
          consumers: [
            {
              agent_id: agentId,
              agent: 'claims-agent',
              competency: 'claims-handling',
              contract: 'claims-system',
            },
          ],
        },
      });
    }
    expect(await status('claims-server')).toEqual({ id: 'claims-server', status: 'Running' });
  });

  it('allows them once the agent is suspended', async () => {
    expect((await api.request('POST', `/agents/${agentId}/suspend`, { token: operator })).status).toBe(200);
    expect(
      (await api.request('POST', '/integrations/claims-server/disconnect', { token: operator })).status,
    ).toBe(200);
  });
});

describe('delete', () => {
  it('removes the integration, its key and its server; status is 404 afterwards', async () => {
    expect(
      (await api.request('POST', '/integrations/claims-server/connect', { token: operator })).status,
    ).toBe(200);
    const pid = Number(
      /pid=(\d+)/.exec((await api.integrationHost().call('claims-server', 'count', {}, {})).text)?.[1],
    );
    expect(() => process.kill(pid, 0)).not.toThrow();
    const res = await api.request('DELETE', '/integrations/claims-server', { token: operator });
    expect(res.status).toBe(204);
    expect((await api.request('GET', '/integrations/claims-server/status', { token: viewer })).status).toBe(
      404,
    );
    expect((await api.request('GET', '/integrations', { token: viewer })).body.integrations).toEqual([]);
    expect((await api.request('GET', '/vault', { token: admin })).body).toEqual([]);
    const gone = (): boolean => !processAlive(pid);
    await waitUntil(gone, { timeoutMs: 8_000, message: 'its server process to end' });
    await expect(api.integrationHost().tools('claims-server')).rejects.toMatchObject({
      category: 'InvalidState',
    });
  });
});
