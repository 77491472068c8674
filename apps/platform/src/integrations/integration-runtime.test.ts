import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stdioServerPayload, writeIntegrationPackage } from '@agent-platform/integrations/testing';
import { processAlive, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';

// The runtime's promises against a real stdio MCP server in the all-in-one: a server that dies
// is restarted with backoff (status Error meanwhile, then Running), a call to a dead or hung
// server fails with a clear error within [integrations] call_timeout_secs, and stopping the
// platform ends the server processes.
const CALL_TIMEOUT_SECS = 2;
let api: PlatformTestApi | null;
let root: string;

const platform = (): PlatformTestApi => {
  if (api === null) throw new Error('closed');
  return api;
};
const status = async (id: string) =>
  (await platform().request('GET', `/integrations/${id}/status`)).body.status;
const pidOf = async (id: string): Promise<number> =>
  Number(/pid=(\d+)/.exec((await platform().integrationHost().call(id, 'count', {}, {})).text)?.[1]);
const alive = processAlive;

/** Polls the status over HTTP until it is Running again, collecting every distinct status seen. */
async function statusesUntilRunning(id: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  await waitUntil(
    async () => {
      const current = await status(id);
      if (JSON.stringify(seen.at(-1)) !== JSON.stringify(current)) seen.push(current);
      return current === 'Running' && seen.length > 1;
    },
    { timeoutMs: 20_000, intervalMs: 20, message: `${id} to be Running again` },
  );
  return seen;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ap-integration-runtime-'));
  api = await startPlatformTestApi({
    config: {
      integrations: {
        report_interval_secs: 1,
        restart_backoff_ms: 200,
        call_timeout_secs: CALL_TIMEOUT_SECS,
      },
    },
  });
  const dir = await writeIntegrationPackage(root, {
    name: 'flaky-server',
    payload: { file: 'mcp.json', data: stdioServerPayload() },
  });
  expect((await platform().request('POST', '/integrations/install', { body: { name: dir } })).status).toBe(
    201,
  );
  expect((await platform().request('POST', '/integrations/flaky-server/connect')).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await rm(root, { recursive: true, force: true });
});

describe('a server that dies', () => {
  it('fails the call in flight at once with a clear error, and is restarted: Error, then Running', async () => {
    const before = await pidOf('flaky-server');
    const started = Date.now();
    const error = await platform()
      .integrationHost()
      .call('flaky-server', 'exit', {}, {})
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      category: 'Internal',
      message: expect.stringMatching(
        /integration 'flaky-server': tool 'exit' failed: the server process exited \(stderr: exiting on request of the exit tool\) during the call; it is being restarted/,
      ),
    });
    expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_SECS * 1000);
    const seen = await statusesUntilRunning('flaky-server');
    expect(seen[0]).toEqual({
      Error: expect.stringMatching(/^the server process exited .*\(restarting in 0\.2 s, attempt 1\)$/),
    });
    expect(seen.at(-1)).toBe('Running');
    const after = await pidOf('flaky-server');
    expect(after).not.toBe(before);
    expect(alive(before)).toBe(false);
  });

  it('fails a call to a server killed with SIGKILL mid-call, well before the call bound', async () => {
    const pid = await pidOf('flaky-server');
    const pending = platform()
      .integrationHost()
      .call('flaky-server', 'hang', {}, {})
      .catch((e: unknown) => e);
    const started = Date.now();
    process.kill(pid, 'SIGKILL');
    expect(await pending).toMatchObject({
      category: 'Internal',
      message: expect.stringContaining('the server process exited'),
    });
    expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_SECS * 1000);
    await statusesUntilRunning('flaky-server');
    expect(await pidOf('flaky-server')).not.toBe(pid);
  });

  it('answers calls made while it restarts with a clear error, not a hang', async () => {
    const pid = await pidOf('flaky-server');
    process.kill(pid, 'SIGKILL');
    await waitUntil(async () => typeof (await status('flaky-server')) === 'object', {
      timeoutMs: 10_000,
      message: 'the Error status',
    });
    const error = await platform()
      .integrationHost()
      .call('flaky-server', 'echo', { message: 'x' }, {})
      .catch((e: unknown) => e);
    // The restart waits 0.2 s and then spawns a process: the call comes well within that window.
    expect(error).toMatchObject({
      category: 'InvalidState',
      message: expect.stringMatching(
        /^integration 'flaky-server' is not connected: the server process exited/,
      ),
    });
    await statusesUntilRunning('flaky-server');
  });
});

describe('a process that just started', () => {
  it('makes a caller that needs the tools wait for the first connection instead of failing (a step resumed at boot)', async () => {
    const host = platform().integrationHost();
    await host.stop();
    await host.start();
    // The server is being spawned: its first attempt has no outcome yet, and the tools are known once it has.
    const tools = await host.tools('flaky-server');
    expect(tools.map((t) => t.name)).toContain('echo');
    expect((await host.call('flaky-server', 'echo', { message: 'after boot' }, {})).text).toBe('after boot');
  });
});

describe('a hung call', () => {
  it(`fails with Timeout within [integrations] call_timeout_secs (${CALL_TIMEOUT_SECS} s), and the server keeps serving`, async () => {
    const started = Date.now();
    const error = await platform()
      .integrationHost()
      .call('flaky-server', 'hang', {}, {})
      .catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(error).toMatchObject({
      category: 'Timeout',
      message: `integration 'flaky-server': tool 'hang' did not answer within ${CALL_TIMEOUT_SECS} s ([integrations] call_timeout_secs); the call was cancelled`,
    });
    expect(elapsed).toBeGreaterThanOrEqual(CALL_TIMEOUT_SECS * 1000 - 50);
    expect(elapsed).toBeLessThan(CALL_TIMEOUT_SECS * 1000 + 1500);
    expect(await platform().integrationHost().call('flaky-server', 'echo', { message: 'after' }, {})).toEqual(
      { text: 'after', is_error: false },
    );
    expect(await status('flaky-server')).toBe('Running');
  });

  it('is cancelled at once when its caller aborts', async () => {
    const controller = new AbortController();
    const pending = platform()
      .integrationHost()
      .call('flaky-server', 'hang', {}, { signal: controller.signal })
      .catch((e: unknown) => e);
    controller.abort(new Error('the client went away'));
    expect(await pending).toMatchObject({ message: 'the client went away' });
  });

  it('reports a failure the server answers as is_error, and an unknown tool clearly', async () => {
    const host = platform().integrationHost();
    expect(await host.call('flaky-server', 'fail', {}, {})).toEqual({
      text: 'it failed on purpose',
      is_error: true,
    });
    expect(await host.call('flaky-server', 'nope', {}, {})).toEqual({
      text: "error: integration 'flaky-server' has no tool 'nope'; its tools: echo, count, hang, exit, fail, env, whoami",
      is_error: true,
    });
  });
});

describe('a server that cannot start', () => {
  it('refuses connect with InitError naming the cause, and leaves the integration as it was', async () => {
    const dir = await writeIntegrationPackage(root, {
      name: 'crashing-server',
      payload: {
        file: 'mcp.json',
        data: {
          command: process.execPath,
          args: ['-e', 'console.error("missing CLAIMS_URL"); process.exit(1)'],
        },
      },
    });
    expect((await platform().request('POST', '/integrations/install', { body: { name: dir } })).status).toBe(
      201,
    );
    const res = await platform().request('POST', '/integrations/crashing-server/connect');
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({
      category: 'InitError',
      message: expect.stringMatching(
        /^integration 'crashing-server' could not be started: `.*` exited before the MCP handshake completed \(stderr: missing CLAIMS_URL\)/,
      ),
    });
    expect(await status('crashing-server')).toBe('Installed');
    const missing = await writeIntegrationPackage(root, {
      name: 'missing-command',
      payload: { file: 'mcp.json', data: { command: 'no-such-claims-server' } },
    });
    await platform().request('POST', '/integrations/install', { body: { name: missing } });
    const refused = await platform().request('POST', '/integrations/missing-command/connect');
    expect(refused.body.error.message).toContain(
      'could not start `no-such-claims-server`: command not found',
    );
  });
});

describe('stopping the platform', () => {
  it('ends the server processes it started', async () => {
    const pid = await pidOf('flaky-server');
    expect(alive(pid)).toBe(true);
    await platform().close();
    api = null;
    expect(alive(pid)).toBe(false);
  });
});
