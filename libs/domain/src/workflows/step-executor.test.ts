import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformConfig, WorkflowStep } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { waitUntil } from '@agent-platform/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InvocationOptions } from '../invocation/invocation-types.ts';
import { agentFixture } from '../testing/agent-fixture.ts';
import type { ToolCallEntry } from '../tools/tool-call-journal.ts';
import { planStart } from './planner/run-planner.ts';
import { workflowRuns, WORKFLOW_RUNS_COLLECTION, type WorkflowRunRecord } from './run-record.ts';
import { createStepExecutor } from './step-executor.ts';

// The step lease while a step runs (docs/workflows.md "Crash safety"): a worker that cannot renew
// its lease stops before it lapses, and one whose lease was taken over can write nothing. The
// store is a real embedded one; the fault is a store whose run writes fail while `storeDown`
// (a database this worker cannot reach), and the agent is a model call that answers only when
// told to (what a slow provider does), so the test decides what happens during the step.
const SETTINGS = { step_concurrency: 4, lease_secs: 1, sweep_interval_ms: 1000, redispatch_after_secs: 15, retry_backoff_ms: 100, retry_max_backoff_ms: 1000 } satisfies PlatformConfig['workflows'];
const agent = agentFixture({ name: 'claims-handler' });
const clock = { now: () => new Date() };

let dir: string;
let real: Store;
let storeDown: boolean;
let warnings: string[];

/** The embedded store, whose workflow-run updates reject while `storeDown`. */
function faultyStore(store: Store): Store {
  return {
    ...store,
    counters: store.counters,
    log: (name, options) => store.log(name, options),
    health: () => store.health(),
    close: () => store.close(),
    collection: (name, options) => {
      const collection = store.collection(name, options);
      if (name !== WORKFLOW_RUNS_COLLECTION) return collection;
      return {
        ...collection,
        get: (id) => collection.get(id),
        find: (query) => collection.find(query),
        update: async (id, change) => {
          if (storeDown) throw new Error('connection to the store lost');
          return collection.update(id, change);
        },
      };
    },
  };
}

/** What the agent call saw and lets the test do: answer, or write to the step's journal. */
interface AgentCall {
  options: InvocationOptions;
  answer(text: string): void;
}

function setup(leaseSecs = 1) {
  const calls: AgentCall[] = [];
  /** The keys of the steps published on the bus. */
  const published: string[] = [];
  const executor = createStepExecutor({
    store: faultyStore(real),
    clock,
    agents: { get: async (id) => (id === agent.id ? agent : null), getByName: async (name) => (name === agent.name ? agent : null) },
    invocation: {
      takeRateLimit: async () => undefined,
      execute: (_request, options = {}) =>
        new Promise((resolve, reject) => {
          options.signal?.addEventListener('abort', () => reject(options.signal?.reason as Error), { once: true });
          const answer = (text: string) =>
            resolve({ duplicate: false, result: { content: text, tokens_used: 1, duration_ms: 1, tool_calls: [], usage: { input_tokens: 1, output_tokens: 1 } } as never });
          calls.push({ options, answer });
        }),
    },
    licence: { releaseRun: async () => undefined },
    runBus: { dispatch: async (_runId, entries) => void published.push(...entries.map((e) => e.key)), changed: () => undefined, cancel: () => undefined },
    settings: () => ({ ...SETTINGS, lease_secs: leaseSecs }),
    holder: 'worker-1',
    warn: (_fields, message) => void warnings.push(message),
  });
  return { executor, calls, published };
}

const sequential = (name: string): WorkflowStep => ({ name, agent: { ByName: agent.name }, prompt_template: '{{input}}', mode: 'Sequential', error_mode: 'Fail', timeout_secs: 60 });

async function startRun(steps: WorkflowStep[] = [sequential('open')]): Promise<WorkflowRunRecord> {
  const now = new Date();
  const record = {
    id: `run-${Math.random().toString(36).slice(2)}`, workflow_id: 'wf', workflow_name: 'wf', input: 'in', state: 'Running', step_results: [], output: null, error: null,
    started_at: now.toISOString(), completed_at: null, definition: { version: '1.0.0', steps, variables: {} },
    progress: { cursor: 0, input: 'in', variables: {}, group: null }, pending: {}, check_at: null, transaction: null,
    workflow_type: 'wf', started_by: 'test', finalized: false, updated_at: now.toISOString(),
  } as WorkflowRunRecord;
  planStart(record, { now, retryDelayMs: () => 100, collectAgent: () => ({ agent_id: agent.id, agent_name: agent.name }) });
  record.pending['0.0']!.dispatched_at = now.toISOString();
  record.pending['0.0']!.dispatch = 1;
  await workflowRuns(real).insert(record);
  return record;
}

const stored = async (id: string) => (await workflowRuns(real).get(id))!.doc;
const started = (position: number): ToolCallEntry => ({
  position, idempotency_key: `k${position}`, tool: 'open_claim', provider_id: 'claims-system', native_tool: 'create_claim', args_hash: 'sha256:1',
  state: 'started', idempotent_keys: false, replays: 0, at: new Date().toISOString(), worker: 'worker-1',
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-step-lease-'));
  real = await openEmbeddedStore({ path: join(dir, 'platform.db') });
  storeDown = false;
  warnings = [];
});
afterEach(async () => {
  await real.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a step whose lease cannot be renewed', () => {
  it('stops before its lease lapses when every renewal fails, and writes nothing', async () => {
    const run = await startRun();
    const { executor, calls } = setup();
    const handled = executor.handle({ run_id: run.id, step_key: '0.0', dispatch: 1 });
    await waitUntil(() => calls.length === 1, { timeoutMs: 5_000 });
    const claimed = await stored(run.id);
    storeDown = true;
    const signal = calls[0]!.options.signal!;
    const began = Date.now();
    await waitUntil(() => signal.aborted, { timeoutMs: 3_000 });
    // lease_secs = 1: renewals at about 333 and 666 ms fail; the step stops before the 1 s lease ends.
    expect(Date.now() - began).toBeLessThan(1_500);
    expect(String((signal.reason as Error).message)).toMatch(/lease could not be renewed before it lapsed/);
    await handled;
    storeDown = false;
    expect(warnings).toContain('could not renew a workflow step lease');
    const after = await stored(run.id);
    expect(after.step_results).toEqual([]);
    expect(after.pending['0.0']?.lease).toEqual(claimed.pending['0.0']?.lease);
  });

  it('keeps running through a renewal that fails while the lease still holds, and checkpoints', async () => {
    const run = await startRun();
    // lease_secs = 3: renewals every second; the first fails with 2 s of lease left.
    const { executor, calls } = setup(3);
    const handled = executor.handle({ run_id: run.id, step_key: '0.0', dispatch: 1 });
    await waitUntil(() => calls.length === 1, { timeoutMs: 5_000 });
    const claimedUntil = (await stored(run.id)).pending['0.0']!.lease!.until;
    storeDown = true;
    await waitUntil(() => warnings.length > 0, { timeoutMs: 3_000 });
    storeDown = false;
    await waitUntil(async () => (await stored(run.id)).pending['0.0']!.lease!.until > claimedUntil, { timeoutMs: 3_000 });
    expect(calls[0]!.options.signal!.aborted).toBe(false);
    calls[0]!.answer('CL-1');
    await handled;
    expect((await stored(run.id)).step_results).toEqual([expect.objectContaining({ step_name: 'open', output: 'CL-1' })]);
  });
});

describe('a step whose lease was taken over', () => {
  it('can neither journal a state-changing call nor checkpoint, and is aborted at its next renewal', async () => {
    const run = await startRun();
    const { executor, calls } = setup();
    const handled = executor.handle({ run_id: run.id, step_key: '0.0', dispatch: 1 });
    await waitUntil(() => calls.length === 1, { timeoutMs: 5_000 });
    // Another worker took the step over (its lease lapsed during a pause of this one).
    await workflowRuns(real).update(run.id, (current) => {
      const draft = structuredClone(current!.doc);
      draft.pending['0.0']!.lease = { holder: 'worker-2', token: 'theirs', until: new Date(Date.now() + 60_000).toISOString() };
      return draft;
    });
    const journal = calls[0]!.options.toolJournal!;
    await expect(journal.write(started(0))).rejects.toThrow(/no longer this worker's.*'open_claim' was not called/);
    const signal = calls[0]!.options.signal!;
    await waitUntil(() => signal.aborted, { timeoutMs: 2_000 });
    await expect(handled).resolves.toBeNull();
    const after = await stored(run.id);
    expect(after.step_results).toEqual([]);
    expect(after.pending['0.0']).toMatchObject({ lease: { holder: 'worker-2', token: 'theirs' } });
    expect(after.pending['0.0']?.journal).toBeUndefined();
  });
});

describe('a checkpoint that dispatches one next step', () => {
  /** A two-step Sequential run whose first step ran and answered 'CL-1'. */
  async function firstStepAnswered() {
    const run = await startRun([sequential('open'), sequential('check')]);
    const { executor, calls, published } = setup(3);
    const first = executor.handle({ run_id: run.id, step_key: '0.0', dispatch: 1 });
    await waitUntil(() => calls.length === 1, { timeoutMs: 5_000 });
    calls[0]!.answer('CL-1');
    return { run, executor, calls, published, next: await first };
  }

  it('hands it back to run here, unpublished; its run ends when it has run', async () => {
    const { run, executor, calls, published, next } = await firstStepAnswered();
    expect(next?.message).toEqual({ run_id: run.id, step_key: '1.0', dispatch: 1 });
    expect(published).toEqual([]);
    // Marked dispatched in the checkpoint: a sweeper publishes it if this process dies before it runs.
    expect((await stored(run.id)).pending['1.0']).toMatchObject({ dispatch: 1, lease: null });
    expect((await stored(run.id)).pending['1.0']?.dispatched_at).not.toBeNull();
    const second = executor.handle(next!.message);
    await waitUntil(() => calls.length === 2, { timeoutMs: 5_000 });
    expect(calls[1]!.options.signal?.aborted).toBe(false);
    calls[1]!.answer('checked');
    await expect(second).resolves.toBeNull();
    const after = await stored(run.id);
    expect(after.state).toBe('Completed');
    expect(after.step_results.map((r) => r.output)).toEqual(['CL-1', 'checked']);
  });

  it('is published for any worker when this one hands it off', async () => {
    const { executor, published, next } = await firstStepAnswered();
    await executor.handOff(next!);
    expect(published).toEqual(['1.0']);
  });
});
