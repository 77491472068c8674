import { IDEMPOTENCY_COLLECTION, workflowRuns, type IdempotencyRecord, type ToolCallEntry } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { expect } from 'vitest';
import type { ClaimsCall, Json } from './journal-kit.ts';
import { call } from './platform-process.ts';

/**
 * The points of a state-changing call's life where a kill -9 changes the outcome
 * (docs/tools.md "The tool-call journal", "Fault points"), what the journal and the system of
 * record hold at that moment, and what a re-run must do about it. `in_flight` is reached from
 * outside: the claims system holds create_claim's answer and the process is killed meanwhile; the
 * others stop the process at the named fault point (`AP_FAULT_STOP_AT`), where the test kills it.
 * Never two writes under two keys: at most one call ever reaches the claims system, and where the
 * platform cannot know whether it did, a person is told which key to look up.
 */
export interface FaultCase {
  point: 'tool.before_journal' | 'tool.journaled' | 'in_flight' | 'tool.answered' | 'tool.recorded';
  /** The call's journal entry when the process dies. */
  journalAtKill: 'none' | 'started' | 'answered';
  /** create_claim requests the claims system has received when the process dies. */
  callsAtKill: 0 | 1;
  /** How the workflow run ends after the restart. */
  step: 'Completed' | 'Escalated';
  /** What the client's retry of the invocation (same idempotency key) is answered. */
  invocation: 200 | 409;
  /** create_claim requests the claims system has received in the end. */
  callsInTheEnd: 0 | 1;
  why: string;
}

export const FAULT_CASES: readonly FaultCase[] = [
  {
    point: 'tool.before_journal',
    journalAtKill: 'none',
    callsAtKill: 0,
    step: 'Completed',
    invocation: 200,
    callsInTheEnd: 1,
    why: 'nothing was journaled or sent: the re-run makes the call, once, under the key of its position',
  },
  {
    point: 'tool.journaled',
    journalAtKill: 'started',
    callsAtKill: 0,
    step: 'Escalated',
    invocation: 409,
    callsInTheEnd: 0,
    why: 'journaled and never answered: nothing can tell whether the request left, so the call is unknown and never made again; a person looks its key up (and finds nothing)',
  },
  {
    point: 'in_flight',
    journalAtKill: 'started',
    callsAtKill: 1,
    step: 'Escalated',
    invocation: 409,
    callsInTheEnd: 1,
    why: 'the system of record holds the request: unknown, never made again; a person looks its key up',
  },
  {
    point: 'tool.answered',
    journalAtKill: 'started',
    callsAtKill: 1,
    step: 'Escalated',
    invocation: 409,
    callsInTheEnd: 1,
    why: 'answered, but the answer died with the process before the journal had it: unknown, never made again',
  },
  {
    point: 'tool.recorded',
    journalAtKill: 'answered',
    callsAtKill: 1,
    step: 'Completed',
    invocation: 200,
    callsInTheEnd: 1,
    why: 'the answer is journaled: the re-run is given it, and nothing reaches the system of record again',
  },
];

/** The first journal entry of a run's first step, as a killed process left it. */
export async function runJournalAtKill(store: Store, runId: string): Promise<ToolCallEntry | undefined> {
  const run = (await workflowRuns(store).get(runId))?.doc;
  return run?.pending['0.0']?.journal?.[0] ?? run?.tool_calls?.[0];
}

/** The first journal entry of the invocation whose idempotency key is `key`, as a killed process left it. */
export async function invocationJournalAtKill(store: Store, key: string): Promise<ToolCallEntry | undefined> {
  const records = await store.collection<IdempotencyRecord>(IDEMPOTENCY_COLLECTION, { ttlField: 'expires_at' }).find({ where: { key } });
  return records[0]?.doc.tool_calls?.[0];
}

/** The journal state a case expects at the kill. */
export function stateAtKill(entry: ToolCallEntry | undefined): FaultCase['journalAtKill'] {
  if (entry === undefined) return 'none';
  return entry.state === 'answered' ? 'answered' : 'started';
}

/**
 * The results of the tools audit entries naming `key`, oldest first, once there are at least
 * `atLeast` of them (polled for up to 10 s). The trail is written after the state it describes:
 * a run reads Escalated a moment before the sweep or claim that escalated it has appended the
 * call's `unknown` entry (libs/domain/src/workflows/recovered-calls.ts), so a test that reads the
 * trail right after the state would race it.
 */
export async function auditResultsOf(base: string, token: string | undefined, key: string, atLeast = 0): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const audit = await call(base, 'GET', '/security/audit?category=tools&limit=200', token === undefined ? {} : { token });
    const results = (audit.body.entries as Json[])
      .filter((e) => e.metadata?.idempotency_key === key)
      .map((e) => e.result as string)
      .reverse();
    if (results.length >= atLeast || Date.now() > deadline) return results;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How many tools audit entries a recovered run's call ends with (expectRunRecovered). */
export function auditedCount(fault: FaultCase): number {
  if (fault.step === 'Escalated') return 2;
  return fault.point === 'tool.recorded' ? 3 : 2;
}

/**
 * What a case promises of the run once recovered: its end state, the create_claim requests the
 * claims system got (`calls`: those under this run's keys), the journal and the audit trail.
 */
export function expectRunRecovered(fault: FaultCase, run: Json, calls: readonly ClaimsCall[], audited: readonly string[]): void {
  const key = `${run.id}:0.0:0`;
  expect(run.state, `${fault.why}: ${JSON.stringify(run)}`).toBe(fault.step);
  // Never two writes under two keys: at most one request, always under the key of position 0.
  expect(calls, fault.why).toHaveLength(fault.callsInTheEnd);
  expect(calls.every((c) => c.idempotency_key === key)).toBe(true);
  if (fault.step === 'Escalated') {
    expect(run.escalation.calls).toEqual([expect.objectContaining({ idempotency_key: key, tool: 'open_claim', state: 'unknown' })]);
    expect(run.error).toContain(key);
    expect(audited).toEqual(['started', 'unknown']);
    return;
  }
  const replayed = fault.point === 'tool.recorded';
  expect(run.tool_calls).toEqual([expect.objectContaining({ idempotency_key: key, state: 'answered', replays: replayed ? 1 : 0 })]);
  expect(run.output).toMatch(/"claim_no":"CL-\d+"/);
  expect(audited).toEqual(replayed ? ['started', 'success', 'replayed'] : ['started', 'success']);
}

/** What a case promises of a client's retry of the invocation (same key) once the platform is back. */
export function expectRetryAnswered(fault: FaultCase, retry: { status: number; body: Json }, calls: readonly ClaimsCall[]): string | null {
  expect(retry.status, `${fault.why}: ${JSON.stringify(retry.body)}`).toBe(fault.invocation);
  expect(calls, fault.why).toHaveLength(fault.callsInTheEnd);
  expect(new Set(calls.map((c) => c.idempotency_key)).size).toBeLessThanOrEqual(1);
  if (fault.invocation === 200) {
    expect(retry.body.content, JSON.stringify(retry.body)).toMatch(/"claim_no":"CL-\d+"/);
    return null;
  }
  expect(retry.body.error.category).toBe('Conflict');
  const [doubt] = retry.body.error.details.calls as Json[];
  expect(doubt).toMatchObject({ tool: 'open_claim', state: 'unknown' });
  expect(retry.body.error.message).toContain(doubt.idempotency_key);
  return doubt.idempotency_key as string;
}
