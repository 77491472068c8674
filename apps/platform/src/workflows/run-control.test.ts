import { workflowRuns } from '@agent-platform/domain';
import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventStream, type PlatformTestApi } from '../testing/platform-test-api.ts';
import type { StepModel } from '../testing/step-model.ts';
import { outputsOf, startWorkflowPlatform, type WorkflowHarness, type WorkflowPlatform } from '../testing/workflow-harness.ts';

// Cancel, suspend and resume of a run while a step is in flight, and the run's event stream
// (docs/workflows.md "Controlling a run", "Run events"). The model stand-in holds a step's answer
// until the test releases it, so "in flight" is a fact, not a timing guess.
let api: PlatformTestApi;
let model: StepModel;
let token: string;
let wf: WorkflowHarness;

let platform: WorkflowPlatform | undefined;

beforeAll(async () => {
  platform = await startWorkflowPlatform({ agents: ['adjuster'], key: { role: 'operator', name: 'ops-oliver' } });
  ({ api, model, token, wf } = platform);
});
afterAll(async () => platform?.close());

const twoSteps = (name: string, tag: string) =>
  wf.install(name, {
    agents_required: ['adjuster'],
    steps: [
      { name: 'first', agent: 'adjuster', prompt: `first {{input}} hold:${tag}` },
      { name: 'second', agent: 'adjuster', prompt: `second-${tag} {{input}}` },
    ],
  });

describe('cancel', () => {
  it('aborts the step in flight (the model request is cancelled), starts nothing more, and ends the run Failed naming who cancelled', async () => {
    const id = await twoSteps('cancel-flow', 'c1');
    const run = await wf.start(id, 'x');
    await waitUntil(() => model.calls('hold:c1') === 1, { timeoutMs: 10_000, message: 'the first step to reach the model' });
    const cancelled = await api.request('POST', `/runs/${run.id}/cancel`, { token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: run.id, state: 'Failed', error: 'cancelled by ops-oliver', output: null });
    expect(cancelled.body.completed_at).not.toBeNull();
    // Within a second the worker has dropped the model call.
    await waitUntil(() => model.server.requests.some((r) => JSON.stringify(r.body).includes('hold:c1') && r.cancelled), {
      timeoutMs: 1_000,
      message: 'the model request to be cancelled',
    });
    model.release('c1');
    const after = await wf.waitFor(run.id, (r) => r.state === 'Failed');
    expect(after.step_results).toEqual([]);
    expect(model.calls('second-c1')).toBe(0);

    const again = await api.request('POST', `/runs/${run.id}/cancel`, { token });
    expect(again.status).toBe(409);
    expect(again.body.error.category).toBe('Conflict');
  });

  it('answers 404 for an unknown run and 400 naming "run" for a malformed id', async () => {
    expect((await api.request('POST', '/runs/00000000-0000-4000-8000-000000000000/cancel', { token })).status).toBe(404);
    const bad = await api.request('POST', '/runs/x/cancel', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/invalid run id/);
  });
});

describe('suspend and resume', () => {
  it('Running -> Suspended lets the step in flight finish and be checkpointed, starts nothing; resume runs the next step', async () => {
    const id = await twoSteps('suspend-flow', 's1');
    const run = await wf.start(id, 'x');
    await waitUntil(() => model.calls('hold:s1') === 1, { timeoutMs: 10_000, message: 'the first step to reach the model' });
    const suspended = await api.request('POST', `/runs/${run.id}/suspend`, { token });
    expect(suspended.status).toBe(200);
    expect(suspended.body.state).toBe('Suspended');
    expect((await api.request('POST', `/runs/${run.id}/suspend`, { token })).status).toBe(409);

    model.release('s1');
    const checkpointed = await wf.waitFor(run.id, (r) => r.step_results.length === 1, 'the first step to be checkpointed');
    expect(checkpointed.state).toBe('Suspended');
    expect(outputsOf(checkpointed)).toEqual([['first', 'first x hold:s1']]);
    // The next step is planned but held back: not published, so no worker or sweeper starts it.
    const stored = (await workflowRuns(api.deps.store).get(run.id))!.doc;
    expect(Object.values(stored.pending).map((e) => [e.key, e.dispatched_at])).toEqual([['1.0', null]]);
    expect(stored.check_at).toBeNull();
    expect(model.calls('second-s1')).toBe(0);
    expect((await api.request('GET', `/runs?state=Suspended`, { token })).body.runs.map((r: { id: string }) => r.id)).toContain(run.id);

    const resumed = await api.request('POST', `/runs/${run.id}/resume`, { token });
    expect(resumed.status).toBe(200);
    expect(resumed.body.state).toBe('Running');
    const done = await wf.waitFor(run.id, (r) => r.state === 'Completed');
    expect(done.output).toBe('second-s1 first x hold:s1');
    expect(model.calls('second-s1')).toBe(1);
    expect((await api.request('POST', `/runs/${run.id}/resume`, { token })).status).toBe(409);
  });
});

describe('GET /runs/{id}/events', () => {
  it('streams the run as it is, each step result, each transition, and the end', async () => {
    const id = await twoSteps('events-flow', 'e1');
    const run = await wf.start(id, 'x');
    const stream = fetch(`${api.url}/runs/${run.id}/events`, { headers: { authorization: `Bearer ${token}` } });
    await waitUntil(() => model.calls('hold:e1') === 1, { timeoutMs: 10_000, message: 'the first step to reach the model' });
    // The stream's headers leave with its first event (the run as it is): the step is released
    // only after that, so both step results arrive as events.
    const res = await stream;
    model.release('e1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = parseEventStream(await res.text());
    expect(events.map((e) => e.event)).toEqual(['run', 'step', 'step', 'state', 'end']);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ id: run.id, state: 'Running' });
    expect(JSON.parse(events[1]!.data)).toMatchObject({ index: 0, step_name: 'first', output: 'first x hold:e1' });
    expect(JSON.parse(events[3]!.data)).toEqual({ state: 'Completed', error: null });
    expect(JSON.parse(events[4]!.data)).toMatchObject({ state: 'Completed', output: 'second-e1 first x hold:e1' });
  });

  it('ends at once for a terminal run, and is 404 for an unknown one', async () => {
    const id = await twoSteps('events-done', 'e2');
    model.release('e2');
    const done = await wf.runToEnd(id, 'y');
    const res = await api.request('GET', `/runs/${done.id}/events`, { token });
    expect(res.status).toBe(200);
    expect(parseEventStream(res.body).map((e) => e.event)).toEqual(['run', 'end']);
    expect((await api.request('GET', '/runs/00000000-0000-4000-8000-000000000000/events', { token })).status).toBe(404);
  });
});
