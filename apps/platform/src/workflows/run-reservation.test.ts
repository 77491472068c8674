import { workflowRuns, type FaultPoint, type WorkflowService } from '@agent-platform/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { licenceClaims, type PlatformTestApi } from '../testing/platform-test-api.ts';
import { silentWorkflowService, startWorkflowPlatform, type WorkflowHarness, type WorkflowPlatform } from '../testing/workflow-harness.ts';

// A run's licence transaction is reserved after its document is stored (docs/workflows.md
// "Licence"), so a starter that dies anywhere in between leaves a run the sweeper finishes,
// charged exactly once, and a retry with the same Idempotency-Key finds that run. The starter's
// death is made by a workflow service that throws at a fault point and publishes nothing, as an
// api node SIGKILLed there leaves things (the same points stop a real process:
// tests/e2e/fleet-run-start.test.ts).
let platform: WorkflowPlatform | undefined;
let api: PlatformTestApi;
let wf: WorkflowHarness;
let workflowId: string;
const BUDGET = 3;
const REDISPATCH_SECS = 3;

/** A workflow service over the platform's store that dies at `point` (and never publishes a step). */
const dyingAt = (point: FaultPoint): WorkflowService =>
  silentWorkflowService(api, {
    reach: (reached) => {
      if (reached === point) throw new Error(`killed at ${point}`);
    },
  });

const used = async (): Promise<number> => (await api.request('GET', '/licence/status')).body.transaction_utilization.claims_intake?.used ?? 0;

beforeAll(async () => {
  platform = await startWorkflowPlatform({
    agents: ['handler'],
    licence: licenceClaims({ transaction_budgets: { claims_intake: BUDGET } }),
    // The sweeper looks at a run 3 s after its start: the checks right after a starter's death come first.
    config: { workflows: { redispatch_after_secs: REDISPATCH_SECS, sweep_interval_ms: 200, lease_secs: 1 } },
  });
  ({ api, wf } = platform);
  workflowId = await wf.install('claims-reserved', {
    agents_required: ['handler'],
    workflow_type: 'claims_intake',
    steps: [{ name: 'one', agent: 'handler', prompt: 'one {{input}}' }],
  });
});
afterAll(async () => platform?.close());

describe('a run whose starter dies before its transaction is settled', () => {
  for (const point of ['workflow.run_inserted', 'workflow.run_reserved'] as const) {
    it(`dies at ${point}: the sweeper reserves and runs it, charged once; a retry with its key finds it`, async () => {
      const before = await used();
      const key = `key-${point}`;
      await expect(dyingAt(point).start(workflowId, { input: point, idempotencyKey: key }, { identity: 'anonymous' })).rejects.toThrow(`killed at ${point}`);
      const [stored] = (await workflowRuns(api.deps.store).find({ where: { state: 'Running' } })).map((r) => r.doc).filter((r) => r.input === point);
      expect(stored?.transaction).toMatchObject({ state: 'reserving' });
      expect(await used()).toBe(before + (point === 'workflow.run_reserved' ? 1 : 0));

      // The client retries with its key: the stored run, no second transaction.
      const retry = await api.request('POST', `/workflows/${workflowId}/run`, { body: { input: point }, headers: { 'idempotency-key': key } });
      expect(retry.status, JSON.stringify(retry.body)).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body.id).toBe(stored!.id);

      const done = await wf.waitFor(stored!.id, (r) => r.state === 'Completed');
      expect(done.output).toBe(`one ${point}`);
      expect(await used()).toBe(before + 1);
      expect((await workflowRuns(api.deps.store).get(stored!.id))?.doc.transaction).toMatchObject({ state: 'committed', counter_key: expect.any(String) });
    });
  }

  it('cancelled while reserving: the transaction its starter took is given back, and none is taken after', async () => {
    const before = await used();
    await expect(dyingAt('workflow.run_reserved').start(workflowId, { input: 'cancelled' }, { identity: 'anonymous' })).rejects.toThrow();
    const stored = (await workflowRuns(api.deps.store).find({ where: { state: 'Running' } })).map((r) => r.doc).find((r) => r.input === 'cancelled')!;
    expect(await used()).toBe(before + 1);
    expect((await api.request('POST', `/runs/${stored.id}/cancel`)).status).toBe(200);
    expect(await used()).toBe(before);
    // The sweeper passes over it (it is Failed now), and nothing reserves under its hold again.
    await new Promise((resolve) => setTimeout(resolve, REDISPATCH_SECS * 1000 + 500));
    expect(await used()).toBe(before);
    expect((await api.request('GET', `/runs/${stored.id}`)).body.state).toBe('Failed');
  });

  it('the licence refuses it when the sweeper gets to it: the run ends Failed naming the budget, nothing charged', async () => {
    // The budget is spent; the starter dies before it would have been refused.
    for (let i = await used(); i < BUDGET; i++) expect((await wf.runToEnd(workflowId, `fill-${i}`)).state).toBe('Completed');
    await expect(dyingAt('workflow.run_inserted').start(workflowId, { input: 'over budget' }, { identity: 'anonymous' })).rejects.toThrow();
    const stored = (await workflowRuns(api.deps.store).find({ where: { state: 'Running' } })).map((r) => r.doc).find((r) => r.input === 'over budget')!;
    expect(stored.transaction).toMatchObject({ state: 'reserving' });
    const failed = await wf.waitFor(stored.id, (r) => r.state === 'Failed');
    expect(failed.error).toMatch(/^PermissionDenied: .*transaction budget for workflow type 'claims_intake'/);
    expect(await used()).toBe(BUDGET);
    // Refused at its start, a run leaves nothing: 403, no run, the key free.
    const runs = (await api.request('GET', '/runs?limit=1000')).body.runs.length;
    const refused = await api.request('POST', `/workflows/${workflowId}/run`, { body: { input: 'refused' }, headers: { 'idempotency-key': 'refused-key' } });
    expect(refused.status).toBe(403);
    expect((await api.request('GET', '/runs?limit=1000')).body.runs.length).toBe(runs);
  });
});
