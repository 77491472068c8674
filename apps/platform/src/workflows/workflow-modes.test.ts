import { waitUntil, type PackageShelf } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformTestApi } from '../testing/platform-test-api.ts';
import type { StepModel } from '../testing/step-model.ts';
import { outputsOf, startWorkflowPlatform, type WorkflowHarness, type WorkflowPlatform } from '../testing/workflow-harness.ts';

// Every step mode and error mode of DECISIONS D8 over HTTP, on the all-in-one platform. The
// model stand-in echoes each step's prompt (so an output shows what the step was given) unless
// the prompt asks it to fail, be slow or wait (testing/step-model.ts).
let api: PlatformTestApi;
let model: StepModel;
let shelf: PackageShelf;
let token: string;
let wf: WorkflowHarness;

const AGENTS = ['intake-agent', 'review-agent'];
const by = (agent: string) => ({ ByName: agent });

let platform: WorkflowPlatform | undefined;

beforeAll(async () => {
  platform = await startWorkflowPlatform({ agents: AGENTS, config: { workflows: { retry_backoff_ms: 50 } } });
  ({ api, model, shelf, token, wf } = platform);
});
afterAll(async () => platform?.close());

const install = (name: string, steps: unknown[], extra: Record<string, unknown> = {}) => wf.install(name, { agents_required: AGENTS, steps, ...extra });

describe('step modes (D8)', () => {
  it('Sequential: {{input}} is the previous output; output_var and variables fill {{name}}', async () => {
    const id = await install(
      'seq-flow',
      [
        { name: 'intake', agent: by('intake-agent'), prompt: 'intake {{input}} for {{policy}}', output_var: 'first' },
        { name: 'review', agent: 'review-agent', prompt_template: 'review [{{input}}] first={{first}}' },
      ],
      { variables: { policy: 'HO-7' } },
    );
    const run = await wf.runToEnd(id, 'hail');
    expect(run.state).toBe('Completed');
    expect(run.output).toBe('review [intake hail for HO-7] first=intake hail for HO-7');
    expect(run.step_results.map((r: { step_name: string; agent_name: string }) => [r.step_name, r.agent_name])).toEqual([
      ['intake', 'intake-agent'],
      ['review', 'review-agent'],
    ]);
    expect(run.step_results[0].agent_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.step_results[0].tokens_used).toBeGreaterThan(0);
    expect(run).toMatchObject({ error: null, input: 'hail', workflow_name: 'seq-flow' });
    expect(run.completed_at).not.toBeNull();
  });

  it('FanOut runs its group in parallel with one {{input}}; Collect joins the outputs in step order', async () => {
    const id = await install('fan-flow', [
      { name: 'a', agent: by('intake-agent'), prompt: 'a {{input}} hold:fan', mode: 'FanOut' },
      { name: 'b', agent: by('review-agent'), prompt: 'b {{input}} hold:fan', mode: 'fan_out' },
      { name: 'c', agent: by('intake-agent'), prompt: 'c {{input}} hold:fan', mode: 'fanout' },
      { name: 'gather', agent: by('review-agent'), mode: 'collect', output_var: 'all' },
      { name: 'final', agent: by('intake-agent'), prompt: 'final: {{all}}' },
    ]);
    const started = await wf.start(id, 'x');
    // All three calls reach the model while none has answered: they run at once.
    await waitUntil(() => model.calls('hold:fan') === 3, { timeoutMs: 10_000, message: 'the three FanOut steps to be in flight together' });
    model.release('fan');
    const run = await wf.waitFor(started.id, (r) => r.state === 'Completed');
    const joined = ['a x hold:fan', 'b x hold:fan', 'c x hold:fan'].join('\n\n---\n\n');
    expect(outputsOf(run)).toEqual([
      ['a', 'a x hold:fan'],
      ['b', 'b x hold:fan'],
      ['c', 'c x hold:fan'],
      ['gather', joined],
      ['final', `final: ${joined}`],
    ]);
    // Collect names its agent but does not call it.
    expect(run.step_results[3]).toMatchObject({ agent_name: 'review-agent', tokens_used: 0, duration_ms: 0 });
    expect(model.calls('final:')).toBe(1);
  });

  it('after a FanOut group with no Collect, {{input}} is the last member output in step order', async () => {
    const id = await install('fan-no-collect', [
      { name: 'a', agent: by('intake-agent'), prompt: 'slow:150 first {{input}}', mode: 'FanOut' },
      { name: 'b', agent: by('review-agent'), prompt: 'second {{input}}', mode: 'FanOut' },
      { name: 'after', agent: by('intake-agent'), prompt: 'after [{{input}}]' },
    ]);
    const run = await wf.runToEnd(id, 'q');
    expect(run.output).toBe('after [second q]');
    expect(outputsOf(run).map(([name]) => name)).toEqual(['a', 'b', 'after']);
  });

  it('Conditional runs only when the previous output contains the condition, case-insensitively; else {{input}} passes through', async () => {
    const id = await install('cond-flow', [
      { name: 'assess', agent: by('intake-agent'), prompt: 'verdict {{input}}' },
      { name: 'on-approved', agent: by('review-agent'), prompt: 'approved path: {{input}}', mode: { conditional: { condition: 'approved' } } },
      { name: 'on-denied', agent: by('review-agent'), prompt: 'denied path: {{input}}', mode: { Conditional: { condition: 'DENIED' } } },
    ]);
    const approved = await wf.runToEnd(id, 'APPROVED claim');
    expect(approved.output).toBe('approved path: verdict APPROVED claim');
    expect(outputsOf(approved).map(([name]) => name)).toEqual(['assess', 'on-approved']);
    const denied = await wf.runToEnd(id, 'denied claim');
    expect(denied.output).toBe('denied path: verdict denied claim');
    expect(outputsOf(denied).map(([name]) => name)).toEqual(['assess', 'on-denied']);
    const neither = await wf.runToEnd(id, 'pending');
    expect(neither).toMatchObject({ state: 'Completed', output: 'verdict pending' });
  });

  it('Loop repeats with its own output until it contains `until` or max_iterations runs were made', async () => {
    const id = await install('loop-flow', [
      { name: 'refine', agent: by('intake-agent'), prompt: '{{input}} +', mode: { Loop: { until: '+ + +', max_iterations: 5 } } },
      { name: 'capped', agent: by('review-agent'), prompt: '{{input}} !', mode: { loop: { until: 'never', max_iterations: 2 } } },
    ]);
    const run = await wf.runToEnd(id, 'draft');
    expect(outputsOf(run)).toEqual([
      ['refine', 'draft +'],
      ['refine', 'draft + +'],
      ['refine', 'draft + + +'],
      ['capped', 'draft + + + !'],
      ['capped', 'draft + + + ! !'],
    ]);
    expect(run.output).toBe('draft + + + ! !');
  });
});

describe('error modes (D8)', () => {
  it('Fail ends the run Failed naming the step; nothing after it runs', async () => {
    const id = await install('fail-flow', [
      { name: 'first', agent: by('intake-agent'), prompt: 'ok {{input}}' },
      { name: 'breaks', agent: by('review-agent'), prompt: 'always-fail {{input}}' },
      { name: 'never', agent: by('intake-agent'), prompt: 'unreached-marker {{input}}' },
    ]);
    const run = await wf.runToEnd(id, 'x');
    expect(run.state).toBe('Failed');
    expect(run.error).toMatch(/step 'breaks' failed: .*scripted failure/);
    expect(run.output).toBeNull();
    expect(outputsOf(run)).toEqual([['first', 'ok x']]);
    expect(model.calls('unreached-marker')).toBe(0);
  });

  it('Skip continues with the next step, its input passing through, with no step result', async () => {
    const id = await install('skip-flow', [
      { name: 'first', agent: by('intake-agent'), prompt: 'one {{input}}' },
      { name: 'optional', agent: by('review-agent'), prompt: 'always-fail {{input}}', error_mode: 'skip' },
      { name: 'last', agent: by('intake-agent'), prompt: 'two {{input}}' },
    ]);
    const run = await wf.runToEnd(id, 'x');
    expect(run).toMatchObject({ state: 'Completed', output: 'two one x' });
    expect(outputsOf(run).map(([name]) => name)).toEqual(['first', 'last']);
  });

  it('Retry runs a failing step again up to max_retries times with backoff, then fails', async () => {
    const id = await install('retry-flow', [
      { name: 'flaky', agent: by('intake-agent'), prompt: 'fail-first:2:flaky-a {{input}}', error_mode: { Retry: { max_retries: 2 } } },
    ]);
    const ok = await wf.runToEnd(id, 'x');
    expect(ok).toMatchObject({ state: 'Completed', output: 'fail-first:2:flaky-a x' });
    expect(model.calls('flaky-a')).toBe(3);

    const tooFlaky = await install('retry-exhausted', [
      { name: 'flaky', agent: by('intake-agent'), prompt: 'fail-first:5:flaky-b {{input}}', error_mode: { retry: { max_retries: 1 } } },
    ]);
    const failed = await wf.runToEnd(tooFlaky, 'x');
    expect(failed.state).toBe('Failed');
    expect(failed.error).toMatch(/step 'flaky' failed after 2 attempts: .*scripted failure 2 of flaky-b/);
    expect(model.calls('flaky-b')).toBe(2);
  });

  it('a step over timeout_secs fails with Timeout; its error mode applies', async () => {
    const id = await install('timeout-flow', [
      { name: 'slow-optional', agent: by('intake-agent'), prompt: 'slow:3000 {{input}}', timeout_secs: 1, error_mode: 'Skip' },
      { name: 'slow-required', agent: by('review-agent'), prompt: 'slow:3000 again {{input}}', timeout_seconds: 1 },
    ]);
    const run = await wf.runToEnd(id, 'x');
    expect(run.state).toBe('Failed');
    expect(run.error).toMatch(/step 'slow-required' failed: invocation of agent .* exceeded 1 s/);
    expect(run.step_results).toEqual([]);
  });

  it('a step aimed at a Suspended or missing agent fails per D9, and its error mode applies', async () => {
    await shelf.agent('sleepy-agent');
    const id = await wf.install('suspended-flow', {
      agents_required: ['sleepy-agent'],
      steps: [
        { name: 'ghost', agent: by('ghost-agent'), prompt: '{{input}}', error_mode: 'Skip' },
        { name: 'sleepy', agent: by('sleepy-agent'), prompt: 'sleepy {{input}}' },
      ],
    });
    const agents = (await api.request('GET', '/agents', { token })).body.agents as Array<{ id: string; name: string }>;
    const sleepy = agents.find((a) => a.name === 'sleepy-agent')!;
    expect((await api.request('POST', `/agents/${sleepy.id}/suspend`, { token })).status).toBe(200);
    const run = await wf.runToEnd(id, 'x');
    expect(run.state).toBe('Failed');
    expect(run.error).toMatch(/step 'sleepy' failed: .*Suspended/);
    expect(model.calls('sleepy x')).toBe(0);
  });

  it('a FanOut member that fails with Fail fails the run; one that Skips leaves Collect the others', async () => {
    const skipping = await install('fan-skip', [
      { name: 'a', agent: by('intake-agent'), prompt: 'a {{input}}', mode: 'FanOut' },
      { name: 'b', agent: by('review-agent'), prompt: 'always-fail b', mode: 'FanOut', error_mode: 'Skip' },
      { name: 'c', agent: by('intake-agent'), prompt: 'c {{input}}', mode: 'FanOut' },
      { name: 'gather', agent: by('review-agent'), mode: 'Collect' },
    ]);
    const run = await wf.runToEnd(skipping, 'x');
    expect(run).toMatchObject({ state: 'Completed', output: 'a x\n\n---\n\nc x' });
    expect(outputsOf(run).map(([name]) => name)).toEqual(['a', 'c', 'gather']);

    const failing = await install('fan-fail', [
      { name: 'a', agent: by('intake-agent'), prompt: 'a {{input}}', mode: 'FanOut' },
      { name: 'b', agent: by('review-agent'), prompt: 'always-fail b', mode: 'FanOut' },
      { name: 'gather', agent: by('review-agent'), mode: 'Collect' },
    ]);
    const failed = await wf.runToEnd(failing, 'x');
    expect(failed.state).toBe('Failed');
    expect(failed.error).toMatch(/step 'b' failed/);
  });
});
