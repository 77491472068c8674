import type { WorkflowStep } from '@agent-platform/contracts';
import { describe, expect, it } from 'vitest';
import type { ToolCallEntry } from '../../tools/tool-call-journal.ts';
import type { WorkflowRunRecord } from '../run-record.ts';
import { applyOutcome, escalateIfUnsafe, planStart, type RunPlanContext } from './run-planner.ts';

// What the planner does with a step's tool-call journal (docs/tools.md "The tool-call journal"):
// a failure never passes over a write whose outcome is unknown, a retry keeps the journal, a
// takeover marks what the dead worker left in flight.
const NOW = new Date('2026-11-28T10:00:00.000Z');
const ctx: RunPlanContext = { now: NOW, retryDelayMs: () => 100, collectAgent: () => ({ agent_id: 'a', agent_name: 'a' }) };

function run(errorMode: WorkflowStep['error_mode']): WorkflowRunRecord {
  const steps: WorkflowStep[] = [
    { name: 'open', agent: { ByName: 'claims-handler' }, prompt_template: '{{input}}', mode: 'Sequential', error_mode: errorMode, timeout_secs: 30 },
    { name: 'notify', agent: { ByName: 'claims-handler' }, prompt_template: '{{input}}', mode: 'Sequential', error_mode: 'Fail', timeout_secs: 30 },
  ];
  const record = {
    id: 'run-1', workflow_id: 'wf', workflow_name: 'wf', input: 'in', state: 'Running', step_results: [], output: null, error: null,
    started_at: NOW.toISOString(), completed_at: null, definition: { version: '1.0.0', steps, variables: {} },
    progress: { cursor: 0, input: 'in', variables: {}, group: null }, pending: {}, check_at: null, transaction: null,
    workflow_type: 'wf', started_by: 'test', finalized: false, updated_at: NOW.toISOString(),
  } as WorkflowRunRecord;
  planStart(record, ctx);
  return record;
}

const call = (state: ToolCallEntry['state'], idempotent = false): ToolCallEntry => ({
  position: 0, idempotency_key: 'run-1:0.0:0', tool: 'open_claim', provider_id: 'claims-system', native_tool: 'create_claim', args_hash: 'sha256:1',
  state, idempotent_keys: idempotent, replays: 0, at: NOW.toISOString(), worker: 'w-1', ...(state === 'answered' ? { result: 'CL-1' } : {}),
});

function withJournal(record: WorkflowRunRecord, journal: ToolCallEntry[]): WorkflowRunRecord {
  record.pending['0.0']!.journal = journal;
  return record;
}

describe('the planner and the tool-call journal', () => {
  it('retries a failed step with its journal, so the retry is given the recorded answers', () => {
    const r = withJournal(run({ Retry: { max_retries: 1 } }), [call('answered')]);
    applyOutcome(r, '0.0', { kind: 'failed', error: 'the model failed' }, ctx);
    expect(r.state).toBe('Running');
    expect(r.pending['0.0']).toMatchObject({ attempt: 2, journal: [{ state: 'answered', result: 'CL-1' }] });
  });

  it.each([
    ['Fail', 'unknown'],
    ['Skip', 'unknown'],
    [{ Retry: { max_retries: 1 } }, 'unknown'],
    ['Skip', 'started'],
  ] as const)('escalates a step failing with error mode %j after a write left %s, instead of failing or skipping past it', (mode, state) => {
    const r = withJournal(run(mode), [call(state)]);
    applyOutcome(r, '0.0', { kind: 'failed', error: 'timed out' }, ctx);
    expect(r.state).toBe('Escalated');
    expect(r.error).toMatch(/step 'open' failed \(timed out\) after 1 state-changing tool call.*run-1:0\.0:0/);
    expect(r.escalation).toEqual({ step: 'open', calls: [expect.objectContaining({ idempotency_key: 'run-1:0.0:0' })] });
    expect(r.escalation!.calls[0]).not.toHaveProperty('result');
    expect(r.pending).toEqual({});
    expect(r.tool_calls).toEqual([expect.objectContaining({ step: 'open', step_key: '0.0', state })]);
  });

  it('retries a step whose call in doubt is to an integration honouring keys (the retry makes it again with its key); with no retry left, escalates', () => {
    const retried = withJournal(run({ Retry: { max_retries: 1 } }), [call('unknown', true)]);
    applyOutcome(retried, '0.0', { kind: 'failed', error: 'timed out' }, ctx);
    expect(retried.state).toBe('Running');
    const last = withJournal(run('Fail'), [call('unknown', true)]);
    applyOutcome(last, '0.0', { kind: 'failed', error: 'timed out' }, ctx);
    expect(last.state).toBe('Escalated');
  });

  it('keeps a checkpointed step\'s journal with the run', () => {
    const r = withJournal(run('Fail'), [call('answered')]);
    applyOutcome(r, '0.0', { kind: 'succeeded', result: { step_name: 'open', agent_id: 'a', agent_name: 'a', output: 'CL-1', tokens_used: 1, duration_ms: 1 } }, ctx);
    expect(r.tool_calls).toEqual([expect.objectContaining({ step: 'open', step_key: '0.0', state: 'answered', result: 'CL-1' })]);
    expect(r.pending['1.0']?.journal).toBeUndefined();
  });

  it('at a takeover, marks what the dead worker left started as unknown; escalates only when a re-run cannot get past it', () => {
    const answered = withJournal(run('Fail'), [call('answered')]);
    expect(escalateIfUnsafe(answered, answered.pending['0.0']!, NOW)).toEqual({ escalated: false, lapsed: [] });
    const honoured = withJournal(run('Fail'), [call('started', true)]);
    const taken = escalateIfUnsafe(honoured, honoured.pending['0.0']!, NOW);
    expect(taken).toMatchObject({ escalated: false, lapsed: [{ state: 'unknown' }] });
    expect(honoured.pending['0.0']!.journal).toEqual([expect.objectContaining({ state: 'unknown' })]);
    const blocked = withJournal(run('Fail'), [call('started')]);
    expect(escalateIfUnsafe(blocked, blocked.pending['0.0']!, NOW)).toMatchObject({ escalated: true, lapsed: [{ state: 'unknown' }] });
    expect(blocked.state).toBe('Escalated');
    expect(blocked.error).toMatch(/was interrupted \(worker w-1 stopped\).*open_claim \(key run-1:0\.0:0, unknown\).*not re-executed/);
  });

  it('reads a run stored before the journal: calls journaled and never confirmed are in doubt', () => {
    const legacy = run('Fail');
    legacy.pending['0.0']!.unconfirmed_writes = [
      { idempotency_key: 'run-1:0.0:0', tool: 'open_claim', provider_id: 'claims-system', native_tool: 'create_claim', args_hash: 'sha256:1', at: NOW.toISOString(), worker: 'w-old' } as never,
    ];
    expect(escalateIfUnsafe(legacy, legacy.pending['0.0']!, NOW).escalated).toBe(true);
    expect(legacy.escalation?.calls).toEqual([expect.objectContaining({ idempotency_key: 'run-1:0.0:0', state: 'unknown' })]);
  });
});
