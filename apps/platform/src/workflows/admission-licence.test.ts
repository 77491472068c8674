import { admissionOf } from '@agent-platform/domain';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { licenceClaims, type PlatformTestApi } from '../testing/platform-test-api.ts';
import type { StepModel } from '../testing/step-model.ts';
import { startWorkflowPlatform, type WorkflowHarness, type WorkflowPlatform } from '../testing/workflow-harness.ts';

// Admission of definitions across upgrade and uninstall (a run executes the definition it started
// with; a replaced one drains), and runs counted against the licence like invocations
// (docs/workflows.md "Admission", "Licence").
let api: PlatformTestApi;
let model: StepModel;
let token: string;
let wf: WorkflowHarness;

let platform: WorkflowPlatform | undefined;

beforeAll(async () => {
  platform = await startWorkflowPlatform({ agents: ['handler'], licence: licenceClaims({ transaction_budgets: { claims_intake: 2 } }) });
  ({ api, model, token, wf } = platform);
});
afterAll(async () => platform?.close());

/** Two steps marked with `label`; `hold` (e.g. `hold:up`) makes the first one wait for the test. */
const flow = (label: string, extra: Record<string, unknown> = {}, hold = '') => ({
  agents_required: ['handler'],
  steps: [
    { name: 'one', agent: 'handler', prompt: `${label}${hold === '' ? '' : ` ${hold}`} {{input}}` },
    { name: 'two', agent: 'handler', prompt: `${label}-two {{input}}` },
  ],
  ...extra,
});

describe('admission', () => {
  it('an upgrade leaves runs in flight on their definition and drains the old version, which is then suspended', async () => {
    const id = await wf.install('claims-upgrade', flow('v1', {}, 'hold:up'));
    const inFlight = await wf.start(id, 'x');
    await waitUntil(() => model.calls('hold:up') === 1, { timeoutMs: 10_000, message: 'the v1 run to be in flight' });

    expect(await wf.install('claims-upgrade', flow('v2'), { version: '2.0.0' })).toBe(id);
    const detail = (await api.request('GET', `/workflows/${id}`, { token })).body;
    expect(detail.admission_state).toBe('active');
    expect(detail.steps[0].prompt_template).toBe('v2 {{input}}');
    expect(await admissionOf(api.deps.store, id, '1.0.0')).toBe('draining');
    const pinned = await api.request('POST', `/workflows/${id}/run`, { token, body: { input: 'x', version: '1.0.0' } });
    expect(pinned.status).toBe(403);
    expect(pinned.body.error).toMatchObject({ category: 'PermissionDenied', details: { reason: 'drain_guard', admission_state: 'draining' } });
    expect(pinned.body.error.message).toMatch(/drain guard/);

    // New runs take the new definition; the one in flight finishes on the old.
    const fresh = await wf.runToEnd(id, 'y');
    expect(fresh.output).toBe('v2-two v2 y');
    model.release('up');
    const old = await wf.waitFor(inFlight.id, (r) => r.state === 'Completed');
    expect(old.output).toBe('v1-two v1 hold:up x');
    await waitUntil(async () => (await admissionOf(api.deps.store, id, '1.0.0')) === 'suspended', { timeoutMs: 5_000, message: 'v1 to be suspended' });
  });

  it('an uninstall drains: new runs get the 403 drain guard, the one in flight finishes, then the definition is suspended', async () => {
    const id = await wf.install('claims-retired', flow('r', {}, 'hold:un'));
    const inFlight = await wf.start(id, 'x');
    await waitUntil(() => model.calls('hold:un') === 1, { timeoutMs: 10_000, message: 'the run to be in flight' });
    expect((await api.request('DELETE', '/catalog/installed/claims-retired', { token })).status).toBe(204);

    expect((await api.request('GET', '/workflows', { token })).body.workflows.map((w: { id: string }) => w.id)).not.toContain(id);
    expect((await api.request('GET', `/workflows/${id}`, { token })).body.admission_state).toBe('draining');
    const refused = await api.request('POST', `/workflows/${id}/run`, { token, body: { input: 'x' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/drain guard.*uninstalled/);

    model.release('un');
    expect((await wf.waitFor(inFlight.id, (r) => r.state === 'Completed')).output).toBe('r-two r hold:un x');
    await waitUntil(async () => (await api.request('GET', `/workflows/${id}`, { token })).body.admission_state === 'suspended', {
      timeoutMs: 5_000,
      message: 'the uninstalled definition to be suspended',
    });
    // Installed again, it admits runs again under the same id.
    expect(await wf.install('claims-retired', flow('back'))).toBe(id);
    expect((await wf.runToEnd(id, 'z')).output).toBe('back-two back z');
  });
});

describe('licence', () => {
  it('a run takes one transaction of its workflow type; over the budget it is refused with 403 and nothing is created', async () => {
    const id = await wf.install('claims-budgeted', flow('b', { workflow_type: 'claims_intake' }));
    const failing = await wf.install('claims-failing', {
      agents_required: ['handler'],
      workflow_type: 'claims_intake',
      steps: [{ name: 'breaks', agent: 'handler', prompt: 'always-fail' }],
    });
    const used = async (): Promise<number> => (await api.request('GET', '/licence/status', { token })).body.transaction_utilization.claims_intake?.used ?? 0;

    // A failed run gives its transaction back (D3: a failed call is not counted).
    expect((await wf.runToEnd(failing, 'x')).state).toBe('Failed');
    expect(await used()).toBe(0);
    expect((await wf.runToEnd(id, 'a')).state).toBe('Completed');
    expect((await wf.runToEnd(id, 'b')).state).toBe('Completed');
    expect(await used()).toBe(2);

    const runsBefore = (await api.request('GET', '/runs?limit=1000', { token })).body.runs.length;
    const refused = await api.request('POST', `/workflows/${id}/run`, { token, body: { input: 'c' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ category: 'PermissionDenied', details: { reason: 'transaction_budget_exhausted', workflow_type: 'claims_intake' } });
    expect((await api.request('GET', '/runs?limit=1000', { token })).body.runs.length).toBe(runsBefore);
  });

  it('completed runs are value events under their workflow type (the package name by default); their steps are usage', async () => {
    const id = await wf.install('policy-servicing-flow', flow('s'));
    const before = (await api.request('GET', '/usage/value-events', { token })).body;
    const usageBefore = (await api.request('GET', '/usage', { token })).body.total_requests;
    await wf.runToEnd(id, 'endorsement');
    const after = (await api.request('GET', '/usage/value-events', { token })).body;
    expect(after.total).toBe(before.total + 1);
    expect(after.by_solution['policy-servicing-flow']).toBe(1);
    expect(after.by_class.servicing).toBe(before.by_class.servicing + 1);
    expect(after.by_solution.claims_intake).toBe(2);
    // Two steps, one model call each.
    expect((await api.request('GET', '/usage', { token })).body.total_requests).toBe(usageBefore + 2);
  });
});
