import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { StoreOperationCounter, type StoreOperation } from '@agent-platform/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from '../testing/platform-test-api.ts';
import { startWorkflowPlatform, type WorkflowPlatform } from '../testing/workflow-harness.ts';
import { operationCounts, readsAndWrites, STORE_BUDGET, writeTurnsOf } from './store-operations.ts';

// The store-operation guard (docs/performance.md "Store operations per route"): each hot route
// makes exactly the store operations its budget lists. Deterministic (no timing): it fails when
// a change adds (or removes) a store round trip on a hot path without the budget saying so.

const CLAIMS_INTAKE = fileURLToPath(new URL('../../../../examples/claims-intake', import.meta.url));
const PERFORMANCE_MD = fileURLToPath(new URL('../../../../docs/performance.md', import.meta.url));
/** Work a request leaves behind (its platform events' consumers) ends within this quiet time. */
const QUIET_MS = 1_000;

const counter = new StoreOperationCounter();

/** The operations `work` makes, with those it leaves running, until none came for QUIET_MS. */
async function operationsOf(work: () => Promise<unknown>): Promise<StoreOperation[]> {
  const { tally } = await counter.measure(work);
  let seen = -1;
  while (seen !== tally.operations.length) {
    seen = tally.operations.length;
    await new Promise((r) => setTimeout(r, QUIET_MS));
  }
  return [...tally.operations];
}

function expectWriteTurns(route: string, actual: number): void {
  const budget = STORE_BUDGET.find((b) => b.route === route)?.writeTurns;
  expect(
    actual,
    `${route} submits its writes in ${actual} separate turns (commits waited for one after another), its budget ${budget ?? 'is missing'}.` +
      ' If that is meant, update apps/platform/src/performance/store-operations.ts and the table in docs/performance.md',
  ).toBe(budget);
}

function expectWithinBudget(route: string, actual: Record<string, number>): void {
  const budget = STORE_BUDGET.find((b) => b.route === route)?.operations;
  const allowed = budget ?? {};
  const added = Object.keys(actual).filter((name) => (actual[name] ?? 0) > (allowed[name] ?? 0));
  const removed = Object.keys(allowed).filter((name) => (allowed[name] ?? 0) > (actual[name] ?? 0));
  expect(
    actual,
    `${route} makes ${JSON.stringify(readsAndWrites(actual))} store operations, its budget ` +
      `${budget === undefined ? 'is missing' : JSON.stringify(readsAndWrites(allowed))}` +
      ` (more: ${added.join(', ') || 'none'}; fewer: ${removed.join(', ') || 'none'}). If that is meant, update` +
      ` apps/platform/src/performance/store-operations.ts and the table in docs/performance.md; measured: ${JSON.stringify(actual)}`,
  ).toEqual(allowed);
}

describe('store operations per hot route (all-in-one)', () => {
  let api: PlatformTestApi;
  let token: string;
  let agentId: string;

  beforeAll(async () => {
    api = await startPlatformTestApi({ listen: false, config: { auth: { mode: 'local' } }, decorateStore: (store) => counter.wrap(store) });
    token = await api.issueKey('admin');
    const installed = await api.request('POST', '/catalog/install', { token, body: { path: CLAIMS_INTAKE, activate: true } });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    agentId = installed.body.installed.find((p: { name: string }) => p.name === 'claims-intake').id;
    // Warm-up: the first send creates the session and the counters the later ones update.
    for (let i = 0; i < 3; i++) {
      const res = await api.request('POST', `/agents/${agentId}/send`, { token, body: { message: 'warm-up' } });
      expect(res.status).toBe(200);
    }
  });
  afterAll(async () => api?.close());

  const hot: Array<[string, () => { method: string; path: string; body?: unknown; auth: boolean }]> = [
    ['POST /agents/{id}/send', () => ({ method: 'POST', path: `/agents/${agentId}/send`, body: { message: 'Water damage in the kitchen, policy HO-1234' }, auth: true })],
    [
      'POST /agents/{id}/invoke',
      () => ({ method: 'POST', path: `/agents/${agentId}/invoke`, body: { source: 'Api', message: 'Water damage in the kitchen', correlation_id: 'bench-1' }, auth: true }),
    ],
    ['POST /chat/completions', () => ({ method: 'POST', path: '/chat/completions', body: { model: agentId, messages: [{ role: 'user', content: 'Water damage in the kitchen' }] }, auth: true })],
    ['GET /agents/{id}', () => ({ method: 'GET', path: `/agents/${agentId}`, auth: true })],
    ['GET /health', () => ({ method: 'GET', path: '/health', auth: false })],
  ];

  it.each(hot)('%s', async (route, request) => {
    const { method, path, body, auth } = request();
    let status = 0;
    const operations = await operationsOf(async () => {
      const res = await api.request(method, path, { ...(auth ? { token } : {}), ...(body === undefined ? {} : { body }) });
      status = res.status;
    });
    expect(status).toBe(200);
    expectWithinBudget(route, operationCounts(operations));
    expectWriteTurns(route, writeTurnsOf(operations));
  });

  // A worker killed between the settled key and its usage event lost the event (fleet-faults
  // counted 59 requests for 60 answers): both are submitted in one turn now, so the embedded
  // store commits them in one transaction (docs/invocation.md step 10).
  it("an invoke with a key: the key's result, the session and the usage event are submitted together", async () => {
    const body = { source: 'Api', message: 'Hail on the roof', correlation_id: 'keyed-1', idempotency_key: 'keyed-1' };
    const operations = await operationsOf(async () => {
      expect((await api.request('POST', `/agents/${agentId}/invoke`, { token, body })).status).toBe(200);
    });
    const settled = operations.filter((op) => op.name === 'idempotency.update').at(-1);
    const usage = operations.find((op) => op.name === 'log:usage_events.append');
    const session = operations.find((op) => op.name === 'sessions.update');
    expect(settled, JSON.stringify(operations)).toBeDefined();
    expect(usage?.turn).toBe(settled!.turn);
    expect(session?.turn).toBe(settled!.turn);
  });

  // The request's own audit entry is the worker's to append with the answer (docs/audit.md "Who
  // writes an entry"): no commit of its own, and still exactly one entry per request.
  it.each([
    ['POST /agents/{id}/send', () => ({ path: `/agents/${agentId}/send`, body: { message: 'Hail on the roof' }, action: 'POST /agents/:id/send' })],
    ['POST /chat/completions', () => ({ path: '/chat/completions', body: { model: agentId, messages: [{ role: 'user', content: 'Hail' }] }, action: 'POST /chat/completions' })],
  ])("%s: the request's audit entry is committed with its usage event, once", async (_route, request) => {
    const { path, body, action } = request();
    let requestId = '';
    const operations = await operationsOf(async () => {
      const res = await api.request('POST', path, { token, body });
      expect(res.status).toBe(200);
      requestId = String(res.headers['x-request-id']);
    });
    const usage = operations.find((op) => op.name === 'log:usage_events.append');
    const appends = operations.filter((op) => op.name === 'log:audit.append');
    expect(appends.map((op) => op.turn), JSON.stringify(operations)).toContain(usage!.turn);
    const entries = (await api.deps.audit.query({ limit: 20 })).filter((e) => e.metadata?.request_id === requestId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ category: 'request', role: 'admin', action, target: path, result: '200' });
  });

  it("an invoke repeating its key (a duplicate, nothing to commit) still gets its own entry, from the api", async () => {
    const body = { source: 'Api', message: 'Hail again', correlation_id: 'dup-1', idempotency_key: 'dup-1' };
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await api.request('POST', `/agents/${agentId}/invoke`, { token, body });
      expect(res.status).toBe(200);
      ids.push(String(res.headers['x-request-id']));
    }
    const entries = await api.deps.audit.query({ limit: 20 });
    for (const id of ids) expect(entries.filter((e) => e.metadata?.request_id === id).map((e) => e.result)).toEqual(['200']);
  });
});

describe('store operations per workflow step (all-in-one)', () => {
  let platform: WorkflowPlatform;
  const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `s${i + 1}`, agent: { ByName: 'intake-agent' }, prompt: `step ${i + 1}: {{input}}` }));

  beforeAll(async () => {
    platform = await startWorkflowPlatform({ agents: ['intake-agent'], key: { role: 'admin' }, decorateStore: (store) => counter.wrap(store) });
  });
  afterAll(async () => platform?.close());

  it('a Sequential step', async () => {
    const { wf } = platform;
    const one = await wf.install('one-step', { agents_required: ['intake-agent'], steps: steps(1) });
    const three = await wf.install('three-steps', { agents_required: ['intake-agent'], steps: steps(3) });
    for (const id of [one, three]) await wf.runToEnd(id, 'warm-up');
    const run = (id: string) =>
      operationsOf(async () => {
        const started = await wf.start(id, 'hail on the roof');
        await counter.ignoring(() => wf.waitFor(started.id, (r: { state: string }) => r.state === 'Completed'));
      });
    const [opsOfOne, opsOfThree] = [await run(one), await run(three)];
    const [ofOne, ofThree] = [operationCounts(opsOfOne), operationCounts(opsOfThree)];
    const perStep: Record<string, number> = {};
    for (const name of new Set([...Object.keys(ofOne), ...Object.keys(ofThree)])) {
      const twoSteps = (ofThree[name] ?? 0) - (ofOne[name] ?? 0);
      expect(twoSteps % 2, `${name}: ${ofThree[name] ?? 0} in three steps, ${ofOne[name] ?? 0} in one`).toBe(0);
      if (twoSteps !== 0) perStep[name] = twoSteps / 2;
    }
    expectWithinBudget('workflow step', Object.fromEntries(Object.entries(perStep).sort(([a], [b]) => a.localeCompare(b))));
    // Each step: the claim with the rate-limit window, the checkpoint with the usage event (one
    // commit each on the embedded store: a worker killed around a checkpoint leaves the step both
    // recorded and counted, or neither). docs/workflows.md "How a run executes".
    const writes = opsOfThree.filter((op) => op.kind === 'write');
    const runUpdates = writes.filter((op) => op.name === 'workflow_runs.update');
    const batchOf = (names: string[]) => new Set(writes.filter((op) => names.includes(op.name)).map((op) => op.batch));
    const usageBatches = batchOf(['log:usage_events.append']);
    const windowBatches = batchOf(['counters.add']);
    expect(runUpdates.filter((op) => usageBatches.has(op.batch)).length, JSON.stringify(writes)).toBe(3);
    expect(runUpdates.filter((op) => windowBatches.has(op.batch)).length, JSON.stringify(writes)).toBeGreaterThanOrEqual(3);
    const twoStepsTurns = writeTurnsOf(opsOfThree) - writeTurnsOf(opsOfOne);
    expect(twoStepsTurns % 2, `write turns: ${writeTurnsOf(opsOfThree)} in three steps, ${writeTurnsOf(opsOfOne)} in one`).toBe(0);
    expectWriteTurns('workflow step', twoStepsTurns / 2);
  });
});

describe('docs/performance.md', () => {
  it('shows each budget as the guard holds it', async () => {
    const text = await readFile(PERFORMANCE_MD, 'utf8');
    for (const { route, operations, writeTurns } of STORE_BUDGET) {
      const { reads, writes } = readsAndWrites(operations);
      const row = `| ${route} | ${reads} | ${writes} | ${writeTurns} |`;
      expect(text, `docs/performance.md has no row "${row}"`).toContain(row);
    }
  });
});
