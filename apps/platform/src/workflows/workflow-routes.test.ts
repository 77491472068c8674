import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformTestApi } from '../testing/platform-test-api.ts';
import { startWorkflowPlatform, type WorkflowHarness, type WorkflowPlatform } from '../testing/workflow-harness.ts';

// The definition and run routes of spec §Workflows and runs: canonical definitions, filters,
// the spec's errors for bad input (which change nothing), the legacy step, idempotent starts.
let api: PlatformTestApi;
let token: string;
let wf: WorkflowHarness;
let workflowId: string;
let agentId: string;

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let platform: WorkflowPlatform | undefined;

beforeAll(async () => {
  platform = await startWorkflowPlatform({ agents: ['clerk'], key: { role: 'admin' } });
  ({ api, token, wf } = platform);
  workflowId = await wf.install('intake-flow', {
    agents_required: ['clerk'],
    variables: { region: 'EU' },
    steps: [
      { name: 'read', agent: 'clerk', prompt: 'read {{input}}', timeout_seconds: 12 },
      { name: 'fan', agent: { ByName: 'clerk' }, mode: 'FANOUT', error_mode: 'skip' },
      { name: 'gather', agent: { ByName: 'clerk' }, mode: 'Collect', error_mode: { retry: { max_retries: 2 } } },
      { name: 'gate', agent: { ByName: 'clerk' }, mode: { CONDITIONAL: { condition: 'ok' } } },
      { name: 'loop', agent: { ByName: 'clerk' }, prompt_template: 'again {{input}}', prompt: 'ignored alias', mode: { Loop: { until: 'again', max_iterations: 2 } } },
    ],
  });
  agentId = ((await api.request('GET', '/agents', { token })).body.agents as Array<{ id: string }>)[0]!.id;
});
afterAll(async () => platform?.close());

const runCount = async (): Promise<number> => (await api.request('GET', '/runs?limit=1000', { token })).body.runs.length;

describe('definitions', () => {
  it('lists steps in canonical form: aliases resolved, timeout_secs defaulted to 30, modes and error modes canonical', async () => {
    const list = await api.request('GET', '/workflows', { token });
    expect(list.status).toBe(200);
    const definition = list.body.workflows.find((w: { id: string }) => w.id === workflowId);
    expect(definition).toMatchObject({ name: 'intake-flow', description: 'The intake-flow workflow.' });
    expect(definition.created_at).toMatch(/^\d{4}-/);
    expect(definition.steps).toEqual([
      { name: 'read', agent: { ByName: 'clerk' }, prompt_template: 'read {{input}}', mode: 'Sequential', timeout_secs: 12, error_mode: 'Fail' },
      { name: 'fan', agent: { ByName: 'clerk' }, prompt_template: '{{input}}', mode: 'FanOut', timeout_secs: 30, error_mode: 'Skip' },
      { name: 'gather', agent: { ByName: 'clerk' }, prompt_template: '{{input}}', mode: 'Collect', timeout_secs: 30, error_mode: { Retry: { max_retries: 2 } } },
      { name: 'gate', agent: { ByName: 'clerk' }, prompt_template: '{{input}}', mode: { Conditional: { condition: 'ok' } }, timeout_secs: 30, error_mode: 'Fail' },
      { name: 'loop', agent: { ByName: 'clerk' }, prompt_template: 'again {{input}}', mode: { Loop: { until: 'again', max_iterations: 2 } }, timeout_secs: 30, error_mode: 'Fail' },
    ]);
  });

  it('GET /workflows/{id} adds admission_state; a malformed id is 400 naming the id kind, an unknown one 404', async () => {
    const one = await api.request('GET', `/workflows/${workflowId}`, { token });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: workflowId, name: 'intake-flow', admission_state: 'active' });
    const bad = await api.request('GET', '/workflows/not-a-uuid', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ category: 'ValidationError' });
    expect(bad.body.error.message).toMatch(/invalid workflow id/);
    expect((await api.request('GET', `/workflows/${UNKNOWN}`, { token })).status).toBe(404);
  });
});

describe('runs', () => {
  it('bad input gets the spec errors and creates no run', async () => {
    const before = await runCount();
    const missing = await api.request('POST', `/workflows/${workflowId}/run`, { token, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.category).toBe('ValidationError');
    expect((await api.request('POST', `/workflows/${workflowId}/run`, { token, body: { input: 7 } })).status).toBe(422);
    expect((await api.request('POST', `/workflows/${workflowId}/run`, { token, body: { input: 'x', extra: 1 } })).status).toBe(400);
    expect((await api.request('POST', `/workflows/${UNKNOWN}/run`, { token, body: { input: 'x' } })).status).toBe(404);
    expect((await api.request('POST', '/workflows/nope/run', { token, body: { input: 'x' } })).body.error.message).toMatch(/invalid workflow id/);
    const wrongVersion = await api.request('POST', `/workflows/${workflowId}/run`, { token, body: { input: 'x', version: '9.9.9' } });
    expect(wrongVersion.status).toBe(404);
    expect(await runCount()).toBe(before);
  });

  it('filters runs by state per workflow and across workflows; refuses an unknown state', async () => {
    const done = await wf.runToEnd(workflowId, 'ok then');
    expect(done.state).toBe('Completed');
    const other = await wf.install('breaking-flow', { agents_required: ['clerk'], steps: [{ name: 'x', agent: 'clerk', prompt: 'always-fail' }] });
    const failed = await wf.runToEnd(other, 'x');
    expect(failed.state).toBe('Failed');

    const completed = await api.request('GET', `/workflows/${workflowId}/runs?state=Completed`, { token });
    expect(completed.status).toBe(200);
    expect(completed.body.runs.map((r: { id: string }) => r.id)).toContain(done.id);
    expect(completed.body.runs.every((r: { state: string; workflow_id: string }) => r.state === 'Completed' && r.workflow_id === workflowId)).toBe(true);
    const allFailed = (await api.request('GET', '/runs?state=Failed', { token })).body.runs;
    expect(allFailed.map((r: { id: string }) => r.id)).toEqual([failed.id]);
    const all = (await api.request('GET', '/runs', { token })).body.runs.map((r: { id: string }) => r.id);
    // Newest first.
    expect(all.indexOf(failed.id)).toBeLessThan(all.indexOf(done.id));
    expect((await api.request('GET', `/workflows/${workflowId}/runs`, { token })).body.runs.map((r: { id: string }) => r.id)).not.toContain(failed.id);

    const badState = await api.request('GET', '/runs?state=Done', { token });
    expect(badState.status).toBe(400);
    expect((await api.request('GET', `/workflows/${UNKNOWN}/runs`, { token })).status).toBe(404);
  });

  it('GET /runs/{id}: 400 naming "run" for a malformed id, 404 for an unknown one', async () => {
    const bad = await api.request('GET', '/runs/123', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/invalid run id/);
    expect((await api.request('GET', `/runs/${UNKNOWN}`, { token })).status).toBe(404);
  });

  it('an Idempotency-Key returns the same run for a repeat; reused with another input it is 409', async () => {
    const first = await wf.start(workflowId, 'same input', { 'idempotency-key': 'claim-42' });
    const again = await api.request('POST', `/workflows/${workflowId}/run`, { token, body: { input: 'same input' }, headers: { 'idempotency-key': 'claim-42' } });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await api.request('POST', `/workflows/${workflowId}/run`, { token, body: { input: 'other input' }, headers: { 'idempotency-key': 'claim-42' } });
    expect(other.status).toBe(409);
    expect(other.body.error.category).toBe('Conflict');
    // Another caller's key is its own.
    const service = await api.issueKey('service', 'second-caller');
    const theirs = await api.request('POST', `/workflows/${workflowId}/run`, { token: service, body: { input: 'other input' }, headers: { 'idempotency-key': 'claim-42' } });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(first.id);
  });

  it('a viewer reads runs but cannot start one (flat 403)', async () => {
    const viewer = await api.issueKey('viewer', 'viewer');
    expect((await api.request('GET', '/runs', { token: viewer })).status).toBe(200);
    const refused = await api.request('POST', `/workflows/${workflowId}/run`, { token: viewer, body: { input: 'x' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
  });
});

describe('legacy POST /workflows/step', () => {
  it('calls the agent once and answers {output, pii_tokenized, duration} without a run record', async () => {
    const before = await runCount();
    const res = await api.request('POST', '/workflows/step', { token, body: { target_agent: agentId, input: 'legacy hello' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ output: 'legacy hello', pii_tokenized: false, duration: expect.any(Number) });
    expect(await runCount()).toBe(before);
  });

  it('honours `timeout` in milliseconds, and refuses unknown or malformed agents', async () => {
    const slow = await api.request('POST', '/workflows/step', { token, body: { target_agent: agentId, input: 'slow:3000 please', timeout: 300 } });
    expect(slow.status).toBe(500);
    expect(slow.body.error.category).toBe('Timeout');
    expect((await api.request('POST', '/workflows/step', { token, body: { target_agent: UNKNOWN, input: 'x' } })).status).toBe(404);
    const bad = await api.request('POST', '/workflows/step', { token, body: { target_agent: 'clerk', input: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/invalid agent id/);
    expect((await api.request('POST', '/workflows/step', { token, body: { target_agent: agentId } })).status).toBe(400);
  });
});
