import type { CounterOnce, Store } from '@agent-platform/store';
import { PlatformError } from '../errors/platform-error.ts';
import type { FaultPoints } from '../faults/fault-points.ts';
import type { LicenceGate } from '../licence/licence-gate.ts';
import { endRun } from './planner/run-planner.ts';
import type { RunBus } from './run-bus.ts';
import { finalizeRun, type RunFinalizerDeps } from './run-finalizer.ts';
import { workflowRuns, type WorkflowRunRecord } from './run-record.ts';
import { transitionRun } from './run-transition.ts';

/**
 * A run's licence transaction is reserved after its document is stored, never before
 * (docs/workflows.md "Licence"): the run is inserted `reserving`, naming its hold; the transaction
 * is then reserved under that hold (an idempotent counter add) and the run moves to `held`.
 * Nothing of the run is dispatched before that.
 *
 * A process that dies in between leaves a Running run that says `reserving` and that nobody
 * works on; whoever moves it on next (the run sweeper of any worker, or a resume) reserves again
 * under the same hold. The add applies at most once per hold, so the run is charged exactly once
 * whether the dead process had reserved or not, and a retry with the run's idempotency key finds
 * the stored run instead of reserving a second transaction. A run that fails while `reserving`
 * withdraws the hold (LicenceGate.releaseRun): its transaction comes back if it was taken and is
 * never taken if it was not.
 */
export interface RunReservationDeps {
  store: Store;
  licence: Pick<LicenceGate, 'reserveRun'>;
  now: () => Date;
  redispatchAfterMs: () => number;
  faults?: FaultPoints | undefined;
}

/** How long a run's hold is remembered: longer than any run stays `reserving` while a worker sweeps. */
const RUN_HOLD_MS = 7 * 24 * 3_600_000;

/** The hold of run `runId`'s transaction, stored in the run when it is inserted. */
export function runHold(runId: string, now: Date): CounterOnce {
  return { id: `workflow-run:${runId}`, until: new Date(now.getTime() + RUN_HOLD_MS).toISOString() };
}

/** What reserving did: the run as stored now, or the licence's refusal (nothing reserved). */
export type RunReservation = { kind: 'held'; run: WorkflowRunRecord } | { kind: 'refused'; error: PlatformError };

/**
 * Reserves the transaction of a run that is `reserving` and moves it to `held`; a run that is not
 * `reserving` is returned as it is. A refusal of the licence (budget, expiry, provider) is
 * returned, not thrown: the caller decides what becomes of the run.
 */
export async function reserveRunTransaction(deps: RunReservationDeps, run: WorkflowRunRecord): Promise<RunReservation> {
  const transaction = run.transaction;
  if (transaction === null || transaction.state !== 'reserving' || transaction.hold === undefined) return { kind: 'held', run };
  let counterKey: string;
  try {
    counterKey = await deps.licence.reserveRun({
      provider_id: transaction.provider_id ?? '',
      workflow_type: run.workflow_type,
      hold: transaction.hold,
    });
  } catch (error) {
    if (error instanceof PlatformError) return { kind: 'refused', error };
    throw error;
  }
  deps.faults?.reach('workflow.run_reserved');
  const moved = await transitionRun(workflowRuns(deps.store), run.id, { now: deps.now, redispatchAfterMs: deps.redispatchAfterMs() }, (draft) => {
    if (draft.transaction?.state !== 'reserving') return null;
    draft.transaction = { ...draft.transaction, state: 'held', counter_key: counterKey };
    return true;
  });
  if (moved !== null) return { kind: 'held', run: moved.run };
  // Someone else moved it on (another sweeper, a cancel): as it is now.
  const current = (await workflowRuns(deps.store).get(run.id))?.doc;
  return { kind: 'held', run: current ?? run };
}

/**
 * Ends a Running (or Suspended) run whose reservation the licence refused: Failed, with the
 * refusal's message, announced and finalized (nothing was charged; a hold is withdrawn). Null
 * when the run had ended otherwise meanwhile.
 */
export async function failRefusedRun(
  deps: RunReservationDeps,
  ending: RunFinalizerDeps & { runBus: Pick<RunBus, 'changed'> },
  runId: string,
  error: PlatformError,
): Promise<WorkflowRunRecord | null> {
  const done = await transitionRun(workflowRuns(deps.store), runId, { now: deps.now, redispatchAfterMs: deps.redispatchAfterMs() }, (draft) => {
    if (draft.state !== 'Running' && draft.state !== 'Suspended') return null;
    endRun(draft, 'Failed', `${error.category}: ${error.message}`, deps.now());
    return true;
  });
  if (done === null) return null;
  ending.runBus.changed(runId);
  await finalizeRun(ending, done.run);
  return done.run;
}
