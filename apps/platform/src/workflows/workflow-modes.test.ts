import { waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';
import { createPackageShelf, type PackageShelf } from '../testing/workflow-packages.ts';

// Every step mode of DECISIONS D8 over HTTP, on the all-in-one platform with the built-in `local`
// model, which answers the message it was given: each step's output is its rendered prompt.
let api: PlatformTestApi;
let shelf: PackageShelf;
let token: string;

beforeAll(async () => {
  api = await startPlatformTestApi();
  shelf = await createPackageShelf();
  token = await api.issueKey('admin');
  for (const name of ['intake-agent', 'review-agent']) await shelf.agent(name);
});
afterAll(async () => {
  await api?.close();
  await shelf?.close();
});

async function install(name: string, workflow: Record<string, unknown>): Promise<string> {
  const dir = await shelf.workflow(name, { agents_required: ['intake-agent', 'review-agent'], ...workflow });
  const res = await api.request('POST', '/catalog/install', { token, body: { path: dir, activate: true } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.installed.at(-1).id;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- run bodies are read as JSON
async function runToEnd(workflowId: string, input: string): Promise<any> {
  const started = await api.request('POST', `/workflows/${workflowId}/run`, { token, body: { input } });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  expect(started.body.state).toBe('Running');
  let run = started.body;
  await waitUntil(
    async () => {
      run = (await api.request('GET', `/runs/${started.body.id}`, { token })).body;
      return ['Completed', 'Failed', 'Escalated'].includes(run.state);
    },
    { timeoutMs: 15_000, message: `run ${started.body.id} to end` },
  );
  return run;
}

describe('workflow step modes (D8)', () => {
  it('Sequential: {{input}} is the previous output, output_var and variables fill {{name}}', async () => {
    const id = await install('seq-flow', {
      variables: { policy: 'HO-7' },
      steps: [
        { name: 'intake', agent: { ByName: 'intake-agent' }, prompt: 'intake {{input}} for {{policy}}', output_var: 'first' },
        { name: 'review', agent: 'review-agent', prompt_template: 'review [{{input}}] first={{first}}' },
      ],
    });
    const run = await runToEnd(id, 'hail');
    expect(run.state).toBe('Completed');
    expect(run.output).toBe('review [intake hail for HO-7] first=intake hail for HO-7');
    expect(run.step_results.map((r: { step_name: string; agent_name: string }) => [r.step_name, r.agent_name])).toEqual([
      ['intake', 'intake-agent'],
      ['review', 'review-agent'],
    ]);
    expect(run.completed_at).not.toBeNull();
    expect(run.error).toBeNull();
  });
});
