import { TERMINAL_RUN_STATES } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { recordUsageEvent } from '../invocation/usage-events.ts';
import { valueClassOf } from '../invocation/value-class.ts';
import type { LicenceGate } from '../licence/licence-gate.ts';
import type { Clock } from '../time/clock.ts';
import type { Warn } from './run-bus.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { workflowRuns, type WorkflowRunRecord } from './run-record.ts';
import { settleDrain } from './workflow-admissions.ts';

export interface RunFinalizerDeps {
  store: Store;
  clock: Clock;
  licence: Pick<LicenceGate, 'releaseRun'>;
  warn: Warn;
  /** Where the run's terminal event goes (docs/events.md); absent: nowhere. */
  events?: EventPublisher;
  /**
   * Runs once per ended run, after its bookkeeping, in whichever process finalized it: a run
   * started by a channel message sends its output back (docs/channels.md). Errors are warned.
   */
  onRunEnded?: RunEndedHook | undefined;
}

export type RunEndedHook = (run: WorkflowRunRecord) => Promise<void>;

/**
 * The bookkeeping of a run that reached a terminal state, done once by whichever process ended
 * it (docs/workflows.md "Licence"): a Failed run gives its licence transaction back (D3: a
 * failed call is not counted); a Completed or Escalated one keeps it and records one value event;
 * a draining definition with nothing left in flight becomes suspended.
 *
 * At most once: the run is marked `finalized` (with the transaction's fate) BEFORE the counters
 * and the log are written, so a crash in between leaves a transaction counted and a value event
 * missing, never a transaction given back twice.
 */
export async function finalizeRun(deps: RunFinalizerDeps, ended: WorkflowRunRecord): Promise<void> {
  if (!TERMINAL_RUN_STATES.has(ended.state) || ended.finalized) return;
  const failed = ended.state === 'Failed';
  let won = false;
  // The transaction as it was before this finalization marked it (what is to be given back).
  let held = null as WorkflowRunRecord['transaction'];
  const stored = await workflowRuns(deps.store).update(ended.id, (current) => {
    won = false;
    if (current === null || current.doc.finalized || !TERMINAL_RUN_STATES.has(current.doc.state)) return null;
    won = true;
    held = current.doc.transaction;
    const transaction = current.doc.transaction === null ? null : { ...current.doc.transaction, state: failed ? ('released' as const) : ('committed' as const) };
    return { ...current.doc, finalized: true, transaction };
  });
  if (!won || stored === null) return;
  const run = stored.doc;
  const at = deps.clock.now().toISOString();
  // Emitted by the one process that finalized the run: once per run.
  await emitTerminal(deps.events, run);
  try {
    // A run failed while `reserving` withdraws its hold: its transaction may or may not be taken.
    if (failed && held !== null) await deps.licence.releaseRun(held);
    if (!failed) {
      await recordUsageEvent(deps.store, {
        at,
        agent_id: '',
        provider_id: '',
        model: '',
        input_tokens: 0,
        output_tokens: 0,
        model_calls: 0,
        cost_usd: 0,
        workflow_type: run.workflow_type,
        value_class: valueClassOf(run.workflow_type),
        source: 'Workflow',
        run_id: run.id,
      });
    }
    await settleDrain(deps.store, run.workflow_id, run.definition.version, at);
  } catch (err) {
    deps.warn({ err, run_id: run.id }, 'could not finish the bookkeeping of an ended workflow run');
  }
  if (deps.onRunEnded === undefined) return;
  try {
    await deps.onRunEnded(run);
  } catch (err) {
    deps.warn({ err, run_id: run.id }, 'the ended-run hook failed');
  }
}

/** `workflow.run.completed` (Completed, Escalated), `.failed`, or `.cancelled` (a Failed run a caller cancelled). */
async function emitTerminal(events: EventPublisher | undefined, run: WorkflowRunRecord): Promise<void> {
  if (events === undefined) return;
  const fields = { run_id: run.id, workflow_id: run.workflow_id, workflow_name: run.workflow_name };
  if (run.state === 'Completed' || run.state === 'Escalated') {
    await events.emit('workflow.run.completed', { id: `workflow.run.completed:${run.id}`, agent_id: null, data: { ...fields, status: run.state } });
  } else if (run.state === 'Failed' && run.error?.startsWith(CANCELLED_PREFIX) === true) {
    await events.emit('workflow.run.cancelled', { id: `workflow.run.cancelled:${run.id}`, agent_id: null, data: { ...fields, status: 'Cancelled' } });
  } else if (run.state === 'Failed') {
    await events.emit('workflow.run.failed', { id: `workflow.run.failed:${run.id}`, agent_id: null, data: { ...fields, status: 'Failed', error: run.error } });
  }
}

/** The error a cancelled run ends with (WorkflowService.cancel): `cancelled by <identity>`. */
export const CANCELLED_PREFIX = 'cancelled by ';
