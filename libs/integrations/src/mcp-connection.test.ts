import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  IntegrationCallError,
  type IntegrationConnection,
  type IntegrationSpec,
} from '@agent-platform/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIntegrationConnector } from './integration-connector.ts';
import { startHttpTestServer, stdioServerPayload, type HttpTestServer } from './testing/index.ts';

// The MCP transports against a real server built with the official SDK (testing/mcp-test-server.ts).
let dir: string;
let allowPrivate = true;
const connector = createIntegrationConnector({
  env: {
    PATH: process.env.PATH ?? '',
    HOME: '/tmp',
    AP_VAULT_KEY: 'vault-secret',
    OPENAI_API_KEY: 'sk-secret',
    DB_PASSWORD: 'pw',
    PLAIN: 'kept',
  },
  secretEnvNames: () => ['CUSTOM_PROVIDER_VAR'],
  allowPrivateTargets: () => allowPrivate,
  cwd: tmpdir(),
  platformVersion: '0.1.0',
});
const stdio = (env: Record<string, string> = {}, key: string | null = null): IntegrationSpec => ({
  id: 'test-server',
  transport: 'mcp',
  payload: stdioServerPayload(env),
  key,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-mcp-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('an MCP server over stdio', () => {
  let connection: IntegrationConnection;
  beforeAll(async () => {
    connection = await connector.open(stdio({ COUNT_FILE: join(dir, 'count.log') }, 'the-key'), {
      timeoutMs: 20_000,
    });
  }, 30_000);
  afterAll(async () => connection?.close());

  it('lists its tools with their read-only hint', async () => {
    const tools = await connection.listTools(5_000);
    expect(tools.map((t) => t.name)).toEqual(['echo', 'count', 'hang', 'exit', 'fail', 'env', 'whoami']);
    expect(tools.find((t) => t.name === 'echo')).toMatchObject({
      read_only: true,
      description: 'Answers with the message.',
      input_schema: { type: 'object' },
    });
    expect(tools.find((t) => t.name === 'count')?.read_only).toBe(false);
    expect(tools.find((t) => t.name === 'hang')?.read_only).toBe(false);
  });

  it('calls tools, carrying the idempotency key in _meta', async () => {
    expect(await connection.call('echo', { message: 'hello' }, { timeoutMs: 5_000 })).toEqual({
      text: 'hello',
      is_error: false,
    });
    const counted = await connection.call(
      'count',
      {},
      { timeoutMs: 5_000, idempotencyKey: 'run-1:step-0:0' },
    );
    expect(counted.text).toMatch(/^count=1 key=run-1:step-0:0 pid=\d+$/);
    expect(await readFile(join(dir, 'count.log'), 'utf8')).toContain('key=run-1:step-0:0');
    expect(await connection.call('fail', {}, { timeoutMs: 5_000 })).toEqual({
      text: 'it failed on purpose',
      is_error: true,
    });
  });

  it('gives the server the key as INTEGRATION_KEY and none of the platform secrets', async () => {
    const value = async (name: string) => (await connection.call('env', { name }, { timeoutMs: 5_000 })).text;
    expect(await value('INTEGRATION_KEY')).toBe('the-key');
    expect(await value('COUNT_FILE')).toBe(join(dir, 'count.log'));
    expect(await value('PLAIN')).toBe('kept');
    for (const secret of ['AP_VAULT_KEY', 'OPENAI_API_KEY', 'DB_PASSWORD'])
      expect(await value(secret)).toBe('(unset)');
  });

  it('fails a hung call within the bound, and the server still answers afterwards', async () => {
    const started = Date.now();
    const error = await connection.call('hang', {}, { timeoutMs: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IntegrationCallError);
    expect(error).toMatchObject({ reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await connection.call('echo', { message: 'still here' }, { timeoutMs: 5_000 })).text).toBe(
      'still here',
    );
  });

  it('stops a call its caller aborts', async () => {
    const controller = new AbortController();
    const pending = connection.call('hang', {}, { timeoutMs: 30_000, signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ reason: 'aborted' });
  });
});

describe('a stdio server that dies', () => {
  it('fails the call in flight at once and reports the connection lost, with its stderr', async () => {
    const connection = await connector.open(stdio(), { timeoutMs: 20_000 });
    try {
      const started = Date.now();
      await expect(connection.call('exit', {}, { timeoutMs: 20_000 })).rejects.toMatchObject({
        reason: 'connection_lost',
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await connection.lost).toMatch(
        /the server process exited \(stderr: exiting on request of the exit tool\)/,
      );
    } finally {
      await connection.close();
    }
  }, 30_000);

  it('refuses to open a command that does not exist, naming it', async () => {
    const spec: IntegrationSpec = {
      id: 'nope',
      transport: 'mcp',
      payload: { command: 'no-such-mcp-server-xyz', args: [], env: {} },
      key: null,
    };
    await expect(connector.open(spec, { timeoutMs: 5_000 })).rejects.toThrow(
      'could not start `no-such-mcp-server-xyz`: command not found',
    );
  });

  it('says so when the server exits before the handshake', async () => {
    const spec: IntegrationSpec = {
      id: 'crash',
      transport: 'mcp',
      payload: {
        command: process.execPath,
        args: ['-e', 'console.error("boom: bad config"); process.exit(2)'],
        env: {},
      },
      key: null,
    };
    await expect(connector.open(spec, { timeoutMs: 10_000 })).rejects.toThrow(
      /exited before the MCP handshake completed \(stderr: boom: bad config\)/,
    );
  });
});

describe('an MCP server over streamable HTTP', () => {
  let server: HttpTestServer;
  beforeAll(async () => {
    server = await startHttpTestServer();
  }, 30_000);
  afterAll(async () => server?.kill());

  it('connects, lists and calls, sending the key as a bearer token', async () => {
    allowPrivate = true;
    const connection = await connector.open(
      { id: 'http', transport: 'mcp', payload: { url: server.url, args: [], env: {} }, key: 'k-123' },
      { timeoutMs: 10_000 },
    );
    try {
      expect((await connection.listTools(5_000)).map((t) => t.name)).toContain('echo');
      expect(await connection.call('echo', { message: 'over http' }, { timeoutMs: 5_000 })).toEqual({
        text: 'over http',
        is_error: false,
      });
      expect((await connection.call('whoami', {}, { timeoutMs: 5_000 })).text).toBe('Bearer k-123');
      await connection.ping(5_000);
    } finally {
      await connection.close();
    }
  });

  it('refuses a loopback url unless [network] allow_private_targets (D9)', async () => {
    allowPrivate = false;
    try {
      const spec: IntegrationSpec = {
        id: 'http',
        transport: 'mcp',
        payload: { url: server.url, args: [], env: {} },
        key: null,
      };
      await expect(connector.open(spec, { timeoutMs: 5_000 })).rejects.toThrow(
        /private address 127\.0\.0\.1.*allow_private_targets/,
      );
      const byName = {
        ...spec,
        payload: { ...spec.payload, url: server.url.replace('127.0.0.1', 'localhost') },
      };
      await expect(connector.open(byName, { timeoutMs: 5_000 })).rejects.toThrow(/allow_private_targets/);
    } finally {
      allowPrivate = true;
    }
  });
});
