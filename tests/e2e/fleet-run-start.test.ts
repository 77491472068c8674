import { fileURLToPath } from 'node:url';
import { createPackageShelf, requireBinary, waitUntil, type PackageShelf } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// A workflow run's start in a fleet (docs/workflows.md "Licence"): an api node SIGKILLed after it
// stored the run and before, or after, it reserved the run's licence transaction. The run is
// finished by a worker's sweeper, charged exactly once, and the client's retry with the same
// Idempotency-Key through another api node gets that run, not a second one.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');
const CLAIMS_INTAKE = fileURLToPath(new URL('../../examples/claims-intake', import.meta.url));
const WORKFLOW_TYPE = 'fleet_run_start';

describe.skipIf(natsBinary === null || redisBinary === null)('a run whose api node dies while starting it, in a fleet', () => {
  let fleet: Fleet;
  let shelf: PackageShelf;
  let api: string;
  let token: string;
  let workflow: string;

  beforeAll(async () => {
    fleet = await startFleet({
      apis: 1,
      workers: 1,
      schedulers: 0,
      licence: { transaction_budgets: { [WORKFLOW_TYPE]: 100 } },
      // The sweeper looks at a run 5 s after its start: the count taken while the armed node is
      // stopped comes first, even on a loaded machine.
      config: { workflows: { redispatch_after_secs: 5, sweep_interval_ms: 200 } },
    });
    api = fleet.urls[0]!;
    token = (await call(api, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body.secret;
    expect((await call(api, 'POST', '/catalog/install', { token, body: { path: CLAIMS_INTAKE, activate: true } })).status).toBe(201);
    shelf = await createPackageShelf();
    const dir = await shelf.workflow('fleet-run-start', { workflow_type: WORKFLOW_TYPE, steps: [{ name: 'echo', agent: 'claims-intake', prompt: 'started: {{input}}' }] });
    const install = await call(api, 'POST', '/catalog/install', { token, body: { path: dir } });
    expect(install.status, JSON.stringify(install.body)).toBe(201);
    workflow = install.body.installed[0].id;
  }, 180_000);

  afterAll(async () => {
    await fleet?.close();
    await shelf?.close();
  });

  const transactions = async (): Promise<number> =>
    ((await call(api, 'GET', '/licence/status', { token })).body.transaction_utilization[WORKFLOW_TYPE]?.used as number | undefined) ?? 0;
  const runsOf = async (input: string): Promise<Array<{ id: string; state: string; output: string | null }>> =>
    (await call(api, 'GET', '/runs?limit=100', { token })).body.runs.filter((r: { input: string }) => r.input === input);

  for (const point of ['workflow.run_inserted', 'workflow.run_reserved'] as const) {
    it(`SIGKILL at ${point}: the run completes, one transaction, and the retry through another node is that run`, async () => {
      const before = await transactions();
      const armed = await fleet.addApi({ AP_FAULT_STOP_AT: point });
      const input = `killed at ${point}`;
      const key = `start-${point}`;
      const start = (url: string) => call(url, 'POST', `/workflows/${workflow}/run`, { token, body: { input }, headers: { 'idempotency-key': key } });
      const lost = start(armed.url).catch((error: unknown) => error);
      await waitUntil(() => armed.process.output().includes(`fault point ${point} reached`), { timeoutMs: 30_000, message: `the armed api node to stop at ${point}` });
      expect(await transactions()).toBe(before + (point === 'workflow.run_reserved' ? 1 : 0));
      await armed.process.kill();
      await lost;

      const retry = await start(api);
      expect(retry.status, JSON.stringify(retry.body)).toBe(201);
      const [run] = await runsOf(input);
      expect(retry.body.id).toBe(run!.id);
      await waitUntil(async () => (await runsOf(input))[0]?.state === 'Completed', { timeoutMs: 30_000, message: 'the run to complete' });
      expect(await runsOf(input)).toMatchObject([{ id: run!.id, state: 'Completed', output: `started: ${input}` }]);
      expect(await transactions()).toBe(before + 1);
      expect(fleet.provider.requests.filter((r) => JSON.stringify(r.body).includes(`started: ${input}`))).toHaveLength(1);
    }, 120_000);
  }
});
