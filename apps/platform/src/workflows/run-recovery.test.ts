import { Streams, type WorkflowStepMessage } from '@agent-platform/contracts';
import { stepMessageId, workflowRuns, type WorkflowRunRecord, type WorkflowService } from '@agent-platform/domain';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';
import { startStepModel, type StepModel } from '../testing/step-model.ts';
import { silentWorkflowService, workflowHarness, type WorkflowHarness } from '../testing/workflow-harness.ts';
import { createPackageShelf, type PackageShelf } from '@agent-platform/testkit';

// What the sweeper recovers (docs/workflows.md "Crash safety"), on the all-in-one platform: a step
// whose message was lost, a step whose worker died holding it, a step that may not run again
// (Escalated), a duplicate message for a checkpointed step, and a restart that lost the embedded
// bus's messages. Lost messages are made by starting runs through a workflow service whose bus
// drops every publish; dead workers by writing a lapsed lease into the run, as a killed worker
// leaves it. (Killing real processes: tests/e2e/workflow-crash.test.ts.)
let model: StepModel;
let shelf: PackageShelf;

/** A workflow service over the platform's store whose step messages are never published. */
const losingService = (api: PlatformTestApi): WorkflowService => silentWorkflowService(api);

async function editRun(api: PlatformTestApi, id: string, change: (run: WorkflowRunRecord) => void): Promise<void> {
  await workflowRuns(api.deps.store).update(id, (current) => {
    const draft = structuredClone(current!.doc);
    change(draft);
    return draft;
  });
}

beforeAll(async () => {
  model = await startStepModel();
  shelf = await createPackageShelf();
  await shelf.agent('worker-agent');
});
afterAll(async () => {
  await model?.close();
  await shelf?.close();
});

const steps = (tag: string) => ({
  agents_required: ['worker-agent'],
  steps: [
    { name: 'one', agent: 'worker-agent', prompt: `one-${tag} {{input}}` },
    { name: 'two', agent: 'worker-agent', prompt: `two-${tag} {{input}}` },
  ],
});

describe('the sweeper', () => {
  let api: PlatformTestApi;
  let wf: WorkflowHarness;
  let workflowId: string;

  beforeAll(async () => {
    api = await startPlatformTestApi({ config: { ...model.config, workflows: { redispatch_after_secs: 1, sweep_interval_ms: 200, lease_secs: 1 } } });
    wf = workflowHarness(api, shelf, () => '');
    workflowId = await wf.install('sweep-flow', steps('sw'));
  });
  afterAll(async () => api?.close());

  it('publishes again a step whose message was lost, and the run completes', async () => {
    const { run } = await losingService(api).start(workflowId, { input: 'lost' }, { identity: 'test' });
    const done = await wf.waitFor(run.id, (r) => r.state === 'Completed');
    expect(done.output).toBe('two-sw one-sw lost');
    expect(model.exactCalls('one-sw lost')).toBe(1);
  });

  it('re-dispatches a step whose worker died holding its lease', async () => {
    const { run } = await losingService(api).start(workflowId, { input: 'orphan' }, { identity: 'test' });
    await editRun(api, run.id, (draft) => {
      const entry = draft.pending['0.0']!;
      entry.lease = { holder: 'a-killed-worker', token: 'gone', until: new Date(Date.now() - 1_000).toISOString() };
      entry.dispatched_at = new Date().toISOString();
      draft.check_at = entry.lease.until;
    });
    const done = await wf.waitFor(run.id, (r) => r.state === 'Completed');
    expect(done.output).toBe('two-sw one-sw orphan');
    expect(model.exactCalls('one-sw orphan')).toBe(1);
  });

  it('escalates instead of re-executing a step that dispatched an unconfirmed write (spec: Escalated)', async () => {
    const { run } = await losingService(api).start(workflowId, { input: 'written' }, { identity: 'test' });
    await editRun(api, run.id, (draft) => {
      const entry = draft.pending['0.0']!;
      entry.lease = { holder: 'a-killed-worker', token: 'gone', until: new Date(Date.now() - 1_000).toISOString() };
      entry.journal = [
        {
          position: 0,
          idempotency_key: `${run.id}:0.0:0`,
          tool: 'open_claim',
          provider_id: 'claims-system',
          native_tool: 'create_claim',
          args_hash: 'sha256:00',
          state: 'started',
          idempotent_keys: false,
          replays: 0,
          at: new Date().toISOString(),
          worker: 'a-killed-worker',
        },
      ];
      draft.check_at = entry.lease.until;
    });
    const done = await wf.waitFor(run.id, (r) => r.state === 'Escalated');
    expect(done.error).toMatch(/step 'one' was interrupted \(worker a-killed-worker stopped\) after dispatching 1 state-changing tool call.*open_claim.*not re-executed/);
    expect((await api.request('GET', `/runs/${run.id}`)).body).toMatchObject({
      state: 'Escalated',
      escalation: { step: 'one', calls: [{ tool: 'open_claim', worker: 'a-killed-worker', idempotency_key: `${run.id}:0.0:0`, state: 'unknown' }] },
      tool_calls: [{ step: 'one', step_key: '0.0', tool: 'open_claim', state: 'unknown' }],
    });
    expect(done.completed_at).not.toBeNull();
    expect(model.exactCalls('one-sw written')).toBe(0);
    // Escalated is terminal, delivered and billable: its transaction is kept.
    await waitUntil(async () => (await workflowRuns(api.deps.store).get(run.id))?.doc.transaction?.state === 'committed', { message: 'the run to be finalized' });
  });

  it('a redelivered or duplicate message for a checkpointed step runs nothing', async () => {
    const done = await wf.runToEnd(workflowId, 'once');
    expect(done.state).toBe('Completed');
    const message: WorkflowStepMessage = { run_id: done.id, step_key: '0.0', dispatch: 7 };
    await api.deps.bus.publish(Streams.workflowSteps, {
      id: stepMessageId(done.id, { key: '0.0', attempt: 1, dispatch: 7 }),
      correlation_id: done.id,
      attempt: 1,
      occurred_at: new Date().toISOString(),
      data: message,
    });
    // Another run is started after the duplicate and finishes: the duplicate was consumed first.
    await wf.runToEnd(workflowId, 'later');
    expect(model.exactCalls('one-sw once')).toBe(1);
    expect((await api.request('GET', `/runs/${done.id}`)).body).toMatchObject({ state: 'Completed', output: 'two-sw one-sw once' });
  });
});

describe('a restart of the all-in-one platform', () => {
  it('publishes at once every step its embedded bus lost, without waiting for it to be overdue', async () => {
    const sweepMs = 1_500;
    const booted = Date.now();
    const api = await startPlatformTestApi({ config: { ...model.config, workflows: { redispatch_after_secs: 3600, sweep_interval_ms: sweepMs } } });
    try {
      const wf = workflowHarness(api, shelf, () => '');
      const id = await wf.install('restart-flow', steps('rs'));
      const { run } = await losingService(api).start(id, { input: 'lost in restart' }, { identity: 'test' });
      // Before the restart, the process's first pass leaves alone what this process published
      // (its bus still has it; here a starter dropped it): only what a restart lost is eager.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, booted + 2 * sweepMs - Date.now())));
      expect(model.exactCalls('one-rs lost in restart')).toBe(0);
      expect((await api.request('GET', `/runs/${run.id}`)).body.step_results).toEqual([]);
      await api.restart();
      const done = await wf.waitFor(run.id, (r) => r.state === 'Completed');
      expect(done.output).toBe('two-rs one-rs lost in restart');
    } finally {
      await api.close();
    }
  });
});
