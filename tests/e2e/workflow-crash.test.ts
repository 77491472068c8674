import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { createPackageShelf, freePort, requireBinary, startFakeOpenAiServer, waitUntil, type FakeOpenAiServer, type PackageShelf } from '@agent-platform/testkit';
import { stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoReply, startFleet, writeLicence, type Fleet } from '../support/fleet.ts';
import { call, startPlatform, type PlatformProcess } from '../support/platform-process.ts';
import { callsPerStep, checkpointedSteps, expectCrashSafe, FIVE_STEP_WORKFLOW, startRuns, STEPS, type KillSnapshot } from '../support/workflow-load.ts';

// Issue 9 "Crash safety": 20 runs of a 5-step workflow against a model stand-in that counts the
// calls of each step of each run; kill -9 mid-run of the whole all-in-one process (twice), or of
// a worker and an api node of a fleet. Every run ends Completed with the control run's output,
// and no step checkpointed before a kill is called again. The kill comes after a random number of
// model calls, so it lands at a different point of every run.
const RUNS = 20;
const TOTAL_CALLS = RUNS * STEPS;
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

/** A random point of the workload: after `from`..`to` of the model calls it makes. */
const somewhere = (from: number, to: number): number => from + Math.floor(Math.random() * (to - from));

let shelf: PackageShelf;
beforeAll(async () => {
  shelf = await createPackageShelf();
  await shelf.agent('crash-agent');
  await shelf.workflow('crash-flow', FIVE_STEP_WORKFLOW);
});
afterAll(async () => shelf?.close());

async function allRuns(base: string, token?: string): Promise<Array<{ input: string; state: string; output: string | null }>> {
  return (await call(base, 'GET', '/runs?limit=1000', token === undefined ? {} : { token })).body.runs;
}

async function waitAllCompleted(base: string, token?: string): Promise<Array<{ input: string; state: string; output: string | null }>> {
  let runs: Array<{ input: string; state: string; output: string | null }> = [];
  await waitUntil(
    async () => {
      runs = await allRuns(base, token).catch(() => []);
      return runs.length === RUNS && runs.every((r) => ['Completed', 'Failed', 'Escalated'].includes(r.state));
    },
    { timeoutMs: 60_000, intervalMs: 100, message: 'every run to end' },
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}: ${JSON.stringify(runs.map((r) => [r.input, r.state]))}`);
  });
  return runs;
}

describe('kill -9 of the all-in-one platform mid-run', () => {
  let dir: string;
  let model: FakeOpenAiServer;
  let platform: PlatformProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ap-wf-crash-'));
    model = await startFakeOpenAiServer({ fallback: (request) => ({ ...echoReply(request), delay_ms: 60 }) });
  });
  afterAll(async () => {
    platform?.kill();
    await model?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('every run resumes from its last checkpoint after each restart and ends with the control output', async () => {
    const configPath = join(dir, 'agent-platform.toml');
    const config = {
      server: { listen: `127.0.0.1:${await freePort()}` },
      storage: { data_dir: join(dir, 'data') },
      licence: await writeLicence(dir, {}),
      providers: [{ id: 'fake', kind: 'openai', base_url: model.url, models: ['m'] }],
      models: { default: 'fake/m' },
      logging: { level: 'warn' },
    };
    await writeFile(configPath, stringify(config));
    platform = startPlatform(dir, ['--config', configPath]);
    const base = await platform.listening();
    const install = await call(base, 'POST', '/catalog/install', { body: { path: join(shelf.dir, 'crash-flow'), activate: true } });
    expect(install.status, JSON.stringify(install.body)).toBe(201);
    await startRuns([base], install.body.installed.at(-1).id, RUNS);

    const kills: KillSnapshot[] = [];
    for (const [from, to] of [
      [10, 40],
      [45, 80],
    ] as const) {
      const at = somewhere(from, to);
      await waitUntil(() => model.requests.length >= at, { timeoutMs: 60_000, message: `${at} model calls` });
      platform.kill();
      await platform.exited;
      const store = await openEmbeddedStore({ path: join(dir, 'data', 'platform.db') });
      kills.push({ checkpointed: await checkpointedSteps(store), callsAtKill: callsPerStep(model.requests) });
      await store.close();
      platform = startPlatform(dir, ['--config', configPath]);
      await platform.listening();
    }

    const runs = await waitAllCompleted(base);
    expectCrashSafe(runs, callsPerStep(model.requests), kills);
    expect(model.requests.length).toBeGreaterThanOrEqual(TOTAL_CALLS);
  }, 180_000);
});

describe.skipIf(natsBinary === null || redisBinary === null)('kill -9 of a worker and an api node of a fleet mid-run', () => {
  let fleet: Fleet;
  let token: string;

  beforeAll(async () => {
    fleet = await startFleet({ apis: 2, workers: 2, schedulers: 0, reply: (request) => ({ ...echoReply(request), delay_ms: 60 }) });
    token = (await call(fleet.urls[0]!, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
  }, 180_000);
  afterAll(async () => fleet?.close());

  it('the surviving worker resumes every run from its last checkpoint; outputs match the control run', async () => {
    const [a, b] = fleet.urls as [string, string];
    const install = await call(a, 'POST', '/catalog/install', { token, body: { path: join(shelf.dir, 'crash-flow'), activate: true } });
    expect(install.status, JSON.stringify(install.body)).toBe(201);
    await startRuns([a, b], install.body.installed.at(-1).id, RUNS, token);

    const at = somewhere(15, 60);
    await waitUntil(() => fleet.provider.requests.length >= at, { timeoutMs: 60_000, message: `${at} model calls` });
    // Freeze the survivor for the snapshot, so the checkpoints read are exactly those made before the kill.
    const survivor = fleet.workers[1]!.child.pid!;
    process.kill(survivor, 'SIGSTOP');
    try {
      await Promise.all([fleet.workers[0]!.kill(), fleet.apis[1]!.kill()]);
      const store = await fleet.openStore();
      const kill: KillSnapshot = { checkpointed: await checkpointedSteps(store), callsAtKill: callsPerStep(fleet.provider.requests) };
      await store.close();
      process.kill(survivor, 'SIGCONT');
      const runs = await waitAllCompleted(a, token);
      expectCrashSafe(runs, callsPerStep(fleet.provider.requests), [kill]);
    } finally {
      process.kill(survivor, 'SIGCONT');
    }
  }, 180_000);
});
