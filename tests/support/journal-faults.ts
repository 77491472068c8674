import { IDEMPOTENCY_COLLECTION, workflowRuns, type IdempotencyRecord, type ToolCallEntry } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';

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
