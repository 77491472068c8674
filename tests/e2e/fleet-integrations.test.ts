import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeAgentWorker } from '@agent-platform/agent-worker';
import { loadConfig } from '@agent-platform/config';
import {
  integrationStateCollections,
  type IntegrationHost,
  type IntegrationNodeRecord,
} from '@agent-platform/domain';
import type { ComposedProcess } from '@agent-platform/engines';
import {
  stdioServerPayload,
  TEST_SERVER_PATH,
  writeIntegrationPackage,
} from '@agent-platform/integrations/testing';
import type { Store } from '@agent-platform/store';
import { processAlive, requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Issue 10 item 3, "in a fleet, tools run where agents run": one api node and two agent-worker
// processes over a real nats-server. Connect through the api reaches every worker (desired state
// in the store + `integrations.changed` on the bus); each worker runs its own server and reports
// its status and live tool list; the api's status is the fleet's. A worker killed with SIGKILL
// drops out within [integrations] report_stale_secs. docs/integrations.md "Fleet".
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const STALE_SECS = 4;

/** Pids of the MCP test servers whose parent is `parent` (Linux /proc: ppid follows the command name in stat). */
async function serversOf(parent: number): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (ppid === parent && cmdline.includes(TEST_SERVER_PATH)) pids.push(Number(entry));
  }
  return pids;
}

const alive = processAlive;

describe.skipIf(natsBinary === null || redisBinary === null)(
  'a fleet: integrations on every agent worker',
  () => {
    let fleet: Fleet;
    let api: string;
    let token: string;
    let store: Store;
    let extra: ComposedProcess | null = null;

    const status = async () =>
      (await call(api, 'GET', '/integrations/claims-server/status', { token })).body.status;
    const rows = async (): Promise<IntegrationNodeRecord[]> =>
      (
        await integrationStateCollections(store).nodes.find({ where: { integration_id: 'claims-server' } })
      ).map((r) => r.doc);
    const liveWorkers = async () => (await integrationStateCollections(store).hosts.find()).map((h) => h.doc);

    beforeAll(async () => {
      fleet = await startFleet({
        apis: 1,
        workers: 2,
        schedulers: 0,
        config: {
          network: { allow_private_targets: true },
          integrations: {
            report_interval_secs: 1,
            report_stale_secs: STALE_SECS,
            restart_backoff_ms: 200,
            connect_wait_secs: 20,
          },
        },
      });
      api = fleet.urls[0]!;
      token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
      store = await fleet.openStore();
      const dir = await writeIntegrationPackage(join(fleet.dir, 'packages'), {
        name: 'claims-server',
        payload: { file: 'mcp.json', data: stdioServerPayload({ COUNT_FILE: join(fleet.dir, 'count.log') }) },
      });
      expect(
        (await call(api, 'POST', '/integrations/install', { token, body: { name: dir, key: 'fleet-key' } }))
          .status,
      ).toBe(201);
    }, 180_000);

    afterAll(async () => {
      if (extra !== null) {
        await (
          extra.services.find((s) => s.name === 'integration-host') as IntegrationHost | undefined
        )?.stop();
        await extra.close();
      }
      await store?.close();
      await fleet?.close();
    });

    it('runs no server before connect: both workers are alive, the status is Installed', async () => {
      await waitUntil(async () => (await liveWorkers()).length === 2, {
        timeoutMs: 10_000,
        message: 'both workers to register',
      });
      expect((await liveWorkers()).map((h) => h.process)).toEqual(['agent-worker', 'agent-worker']);
      expect(await status()).toBe('Installed');
      expect(await rows()).toEqual([]);
    });

    it('connect through the api starts the server on both workers; each reports Running with its live tools', async () => {
      const res = await call(api, 'POST', '/integrations/claims-server/connect', { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'connected', id: 'claims-server' });
      expect(await status()).toBe('Running');
      const reported = await rows();
      expect(reported).toHaveLength(2);
      expect(new Set(reported.map((r) => r.node_id)).size).toBe(2);
      for (const row of reported) {
        expect(row.status).toBe('Running');
        expect(row.tools.map((t) => t.name)).toEqual([
          'echo',
          'count',
          'hang',
          'exit',
          'fail',
          'env',
          'whoami',
        ]);
        expect(row.tools.find((t) => t.name === 'count')?.read_only).toBe(false);
      }
      const tools = (await call(api, 'GET', '/integrations/claims-server/tools', { token })).body.tools;
      expect(tools.map((t: { name: string }) => t.name)).toContain('echo');
    });

    it('a worker that joins later connects it at boot, and IntegrationTools.call works there', async () => {
      const loaded = await loadConfig({ argv: ['--config', fleet.configPath], env: {}, cwd: fleet.dir });
      extra = await composeAgentWorker(
        loaded,
        { env: { PATH: process.env.PATH ?? '' }, cwd: fleet.dir, name: 'agent-worker' },
        { logDestination: 'silent' },
      );
      const host = extra.services.find((s) => s.name === 'integration-host') as IntegrationHost;
      await host.start();
      await waitUntil(async () => (await host.tools('claims-server').catch(() => null)) !== null, {
        timeoutMs: 20_000,
        message: 'the third worker to connect',
      });
      expect(await host.call('claims-server', 'env', { name: 'INTEGRATION_KEY' }, {})).toEqual({
        text: 'fleet-key',
        is_error: false,
      });
      const counted = await host.call('claims-server', 'count', {}, { idempotencyKey: 'fleet-run:step-0:0' });
      expect(counted).toMatchObject({
        text: expect.stringMatching(/^count=1 key=fleet-run:step-0:0/),
        is_error: false,
      });
      await waitUntil(async () => (await rows()).length === 3, {
        timeoutMs: 10_000,
        message: 'three node rows',
      });
      expect(await status()).toBe('Running');
      // A graceful stop closes its server and takes its rows with it.
      await host.stop();
      await extra.close();
      extra = null;
      expect(await rows()).toHaveLength(2);
      expect(await readFile(join(fleet.dir, 'count.log'), 'utf8')).toMatch(
        /^count=1 key=fleet-run:step-0:0 pid=\d+\n$/,
      );
    });

    it('reconnect restarts the server on every worker (a new generation)', async () => {
      const before = await rows();
      expect((await call(api, 'POST', '/integrations/claims-server/reconnect', { token })).status).toBe(200);
      const after = await rows();
      expect(after).toHaveLength(2);
      for (const row of after) {
        expect(row.status).toBe('Running');
        expect(row.generation).toBe(before[0]!.generation + 1);
      }
    });

    it('a worker killed with SIGKILL drops out: the status then reflects only the live one', async () => {
      const [victim, survivor] = fleet.workers;
      // One server per worker (the one replaced by the reconnect may still be ending).
      let servers: number[] = [];
      await waitUntil(async () => (servers = await serversOf(victim!.child.pid!)).length === 1, {
        timeoutMs: 10_000,
        message: 'one server under the worker',
      });
      await victim!.kill();
      await waitUntil(async () => (await liveWorkers()).length === 1 && (await rows()).length === 1, {
        timeoutMs: (STALE_SECS + 5) * 1000,
        intervalMs: 100,
        message: "the killed worker's rows to expire",
      });
      expect(await status()).toBe('Running');
      expect(survivor!.child.exitCode).toBeNull();
      // Its stdio server saw its stdin close and ended: no orphan outlives the killed worker.
      await waitUntil(() => servers.every((pid) => !alive(pid)), {
        timeoutMs: 5_000,
        message: "the killed worker's server to end",
      });
    });

    it('disconnect stops it on the live worker; connect brings it back there', async () => {
      expect((await call(api, 'POST', '/integrations/claims-server/disconnect', { token })).body).toEqual({
        status: 'disconnected',
        id: 'claims-server',
      });
      expect(await status()).toBe('Disconnected');
      await waitUntil(async () => (await rows()).length === 0, {
        timeoutMs: 10_000,
        message: 'the worker to close it',
      });
      expect((await call(api, 'POST', '/integrations/claims-server/connect', { token })).status).toBe(200);
      expect(await status()).toBe('Running');
      expect(await rows()).toHaveLength(1);
    });

    it('says so when no agent worker is alive', async () => {
      await fleet.workers[1]!.kill();
      await waitUntil(async () => (await liveWorkers()).length === 0, {
        timeoutMs: (STALE_SECS + 5) * 1000,
        intervalMs: 100,
        message: 'no live worker',
      });
      expect(await status()).toEqual({
        Error:
          'no agent worker is running to connect it (none reported recently); it connects when one starts',
      });
    });
  },
);
