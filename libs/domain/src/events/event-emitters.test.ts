import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventKind, PlatformEvent } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../time/clock.ts';
import { finalizeRun } from '../workflows/run-finalizer.ts';
import { workflowRuns, type WorkflowRunRecord } from '../workflows/run-record.ts';
import { createEventPublisher, type EventPublisher } from './event-publisher.ts';

// What the all-in-one tests cannot reach cheaply: the failed and cancelled ends of a run (emitted
// once by whoever finalizes it), and the publisher's promise that a bus error never fails the
// operation that emits.
let dir: string;
let store: Store;
const emitted: Array<{ kind: EventKind; id: string | undefined; data: unknown }> = [];
const events: EventPublisher = {
  emit: async (kind, input) => void emitted.push({ kind, id: input.id, data: input.data }),
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-events-'));
  store = await openEmbeddedStore({ path: join(dir, 'platform.db'), clock: () => new Date() });
  emitted.length = 0;
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function endedRun(id: string, error: string): WorkflowRunRecord {
  const at = new Date().toISOString();
  return {
    id,
    workflow_id: 'wf-1',
    workflow_name: 'claims-flow',
    input: 'x',
    state: 'Failed',
    step_results: [],
    output: null,
    error,
    started_at: at,
    completed_at: at,
    definition: { version: '1.0.0', steps: [], variables: {} },
    progress: { cursor: 0, input: 'x', variables: {}, group: null },
    pending: {},
    check_at: null,
    transaction: null,
    workflow_type: null,
    started_by: 'test',
    finalized: false,
    updated_at: at,
  } as unknown as WorkflowRunRecord;
}

describe('terminal workflow events', () => {
  it('a failed run emits workflow.run.failed, a cancelled one workflow.run.cancelled, each once however often it is finalized', async () => {
    const deps = { store, clock: systemClock, licence: { releaseRun: async () => undefined }, warn: () => undefined, events };
    const failed = endedRun('run-failed', 'step step-0 failed: boom');
    const cancelled = endedRun('run-cancelled', 'cancelled by admin-key');
    await workflowRuns(store).insert(failed);
    await workflowRuns(store).insert(cancelled);
    await Promise.all([finalizeRun(deps, failed), finalizeRun(deps, failed), finalizeRun(deps, cancelled)]);
    await finalizeRun(deps, cancelled);
    expect(emitted.sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: 'workflow.run.cancelled', id: 'workflow.run.cancelled:run-cancelled', data: { run_id: 'run-cancelled', workflow_id: 'wf-1', workflow_name: 'claims-flow', status: 'Cancelled' } },
      {
        kind: 'workflow.run.failed',
        id: 'workflow.run.failed:run-failed',
        data: { run_id: 'run-failed', workflow_id: 'wf-1', workflow_name: 'claims-flow', status: 'Failed', error: 'step step-0 failed: boom' },
      },
    ]);
  });
});

describe('the bus publisher', () => {
  it('publishes the event as the envelope (id = event id) and never rejects on a bus error', async () => {
    const published: Array<{ stream: string; id: string; data: PlatformEvent }> = [];
    const warnings: string[] = [];
    let fail = false;
    const publisher = createEventPublisher({
      bus: {
        publish: async (stream, envelope) => {
          if (fail) throw new Error('bus down');
          published.push({ stream, id: envelope.id, data: envelope.data as PlatformEvent });
          return { duplicate: false };
        },
      },
      clock: systemClock,
      warn: (_context, message) => void warnings.push(message),
    });
    await publisher.emit('agent.suspended', { id: 'fixed-id', agent_id: 'a-1', data: { name: 'n', state: 'Suspended' } });
    expect(published).toEqual([
      { stream: 'platform.events', id: 'fixed-id', data: { id: 'fixed-id', kind: 'agent.suspended', occurred_at: expect.any(String), agent_id: 'a-1', data: { name: 'n', state: 'Suspended' } } },
    ]);
    fail = true;
    await expect(publisher.emit('agent.activated', { agent_id: 'a-1', data: { name: 'n', state: 'Running' } })).resolves.toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('could not publish a platform event')]);
  });
});
