import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowRuns } from '@agent-platform/domain';
import type { PlatformTestApi } from '../testing/platform-test-api.ts';
import {
  startWorkflowPlatform,
  type WorkflowHarness,
  type WorkflowPlatform,
} from '../testing/workflow-harness.ts';

// Business keys on runs and the run class of retention, in the all-in-one: a run started with a
// claim number shows it, its audit entry names it, a legal hold on the claim keeps the run
// through sweeps while unheld old runs go, and lifting the hold lets the next sweep remove it.
const CLAIM = 'CLM-2026-000123';

let platform: WorkflowPlatform | undefined;
let api: PlatformTestApi;
let token: string;
let wf: WorkflowHarness;
let workflowId: string;

beforeAll(async () => {
  platform = await startWorkflowPlatform({
    agents: ['clerk'],
    key: { role: 'admin' },
    config: { retention: { runs_days: 30 } },
  });
  ({ api, token, wf } = platform);
  workflowId = await wf.install('claims-flow', {
    agents_required: ['clerk'],
    steps: [{ name: 'read', agent: 'clerk', prompt: 'read {{input}}' }],
  });
});
afterAll(async () => platform?.close());

async function startRun(
  body: Record<string, unknown>,
): Promise<{ status: number; body: { id: string; business_key?: string; error?: { message: string } } }> {
  return api.request('POST', `/workflows/${workflowId}/run`, { token, body });
}

/** The run ended long ago, as far as retention can tell (its completed_at moved back a year). */
async function age(runId: string): Promise<void> {
  await workflowRuns(api.deps.store).update(runId, (cur) =>
    cur === null ? null : { ...cur.doc, completed_at: '2025-01-01T00:00:00.000Z' },
  );
}

describe('business keys on runs', () => {
  it('stores the key, shows it on the run and names it in the audit entry of the start', async () => {
    const started = await startRun({ input: 'water damage, kitchen', business_key: CLAIM });
    expect(started.status).toBe(201);
    expect(started.body.business_key).toBe(CLAIM);
    const run = await wf.waitFor(started.body.id, (r) => r.state === 'Completed');
    expect(run.business_key).toBe(CLAIM);
    const trail = (await api.request('GET', '/security/audit?category=workflows&limit=5', { token })).body
      .entries as Array<{ action: string; metadata: Record<string, unknown> }>;
    expect(trail.find((e) => e.action === 'POST /workflows/:id/run')?.metadata).toMatchObject({
      run_id: started.body.id,
      business_key: CLAIM,
    });
    const plain = await startRun({ input: 'no key' });
    expect(plain.body).not.toHaveProperty('business_key');
  });

  it('an Idempotency-Key repeat must carry the same business key', async () => {
    const send = (business_key: string) =>
      api.request('POST', `/workflows/${workflowId}/run`, {
        token,
        body: { input: 'same', business_key },
        headers: { 'idempotency-key': 'claim-key-1' },
      });
    const first = await send('CLM-A');
    expect(first.status).toBe(201);
    const again = await send('CLM-A');
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await send('CLM-B');
    expect(other.status).toBe(409);
    expect(other.body.error.message).toMatch(/business key/);
  });

  it('refuses a malformed key with 400 and starts nothing', async () => {
    const before = (await api.request('GET', '/runs?limit=1000', { token })).body.runs.length as number;
    for (const business_key of ['', 'CLM\u00001', 'K'.repeat(129), 42]) {
      const res = await startRun({ input: 'x', business_key });
      expect(res.status, JSON.stringify(business_key)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect((await api.request('GET', '/runs?limit=1000', { token })).body.runs.length).toBe(before);
  });
});

describe('run retention with a hold on a business key', () => {
  it('keeps the held run through several sweeps while unheld old runs go; lifting the hold lets the next sweep remove it', async () => {
    const old = (await wf.runToEnd(workflowId, 'intake')) as { id: string };
    const heldByKey = await startRun({ input: 'claim intake', business_key: 'CLM-HELD-1' });
    await wf.waitFor(heldByKey.body.id, (r) => r.state === 'Completed');
    const recent = (await wf.runToEnd(workflowId, 'recent')) as { id: string };
    await age(old.id);
    await age(heldByKey.body.id);
    const auditor = await api.issueKey('auditor', 'counsel');
    const hold = await api.request('POST', '/retention/holds', {
      token: auditor,
      body: { business_key: 'CLM-HELD-1', reason: 'coverage dispute' },
    });
    expect(hold.status).toBe(201);

    for (let i = 0; i < 2; i++) {
      const sweep = await api.request('POST', '/retention/sweep', { token: auditor });
      expect(sweep.status).toBe(200);
      expect(sweep.body.classes.runs.held).toBe(1);
      expect((await api.request('GET', `/runs/${heldByKey.body.id}`, { token })).status).toBe(200);
    }
    expect((await api.request('GET', `/runs/${old.id}`, { token })).status).toBe(404);
    expect((await api.request('GET', `/runs/${recent.id}`, { token })).status).toBe(200);

    expect(
      (await api.request('DELETE', `/retention/holds/${hold.body.id as string}`, { token: auditor })).status,
    ).toBe(200);
    const after = await api.request('POST', '/retention/sweep', { token: auditor });
    expect(after.body.classes.runs).toMatchObject({ deleted: 1, held: 0 });
    expect((await api.request('GET', `/runs/${heldByKey.body.id}`, { token })).status).toBe(404);
    expect((await api.request('GET', `/runs/${recent.id}`, { token })).status).toBe(200);
  });
});
