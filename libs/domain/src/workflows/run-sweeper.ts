import type { PlatformConfig } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import type { LicenceGate } from '../licence/licence-gate.ts';
import type { Clock } from '../time/clock.ts';
import { createPeriodicPass } from '../time/periodic-pass.ts';
import { escalateIfUnsafe, leaseLive, markDispatched } from './planner/run-planner.ts';
import { auditRecoveredCalls } from './recovered-calls.ts';
import type { ToolCallEntry } from '../tools/tool-call-journal.ts';
import type { ToolAuditSink } from '../tools/tool-audit.ts';
import type { RunBus, Warn } from './run-bus.ts';
import { finalizeRun, type RunEndedHook } from './run-finalizer.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { workflowRuns, type PendingStep, type WorkflowRunRecord } from './run-record.ts';
import { failRefusedRun, reserveRunTransaction, type RunReservationDeps } from './run-reservation.ts';
import { transitionRun } from './run-transition.ts';
import { drainingAdmissions, settleDrain } from './workflow-admissions.ts';

export interface RunSweeperDeps {
  store: Store;
  clock: Clock;
  runBus: RunBus;
  licence: Pick<LicenceGate, 'releaseRun' | 'reserveRun'>;
  settings: () => PlatformConfig['workflows'];
  warn: Warn;
  /** Where the terminal event of a run the sweeper ends goes (docs/events.md). */
  events?: EventPublisher;
  /** See run-finalizer.ts `onRunEnded`. */
  onRunEnded?: RunEndedHook | undefined;
  /**
   * The bus keeps nothing across a restart of this process (the embedded bus of the all-in-one):
   * the first sweep then publishes again every step that was published and not yet taken,
   * without waiting for it to be overdue.
   */
  busForgetsOnRestart?: boolean;
  /** The agents of the runs' steps and where the calls a dead worker left in doubt are audited `unknown`. */
  agents: Pick<AgentStore, 'get' | 'getByName'>;
  audit?: ToolAuditSink;
}

export interface RunSweeper {
  start(): void;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
  /** One pass (tests call it directly); returns how many runs it changed. */
  sweepOnce(): Promise<number>;
  /**
   * Looks at one run at `at` (a retry's backoff ends then): sooner than the next pass would. Best
   * effort, in this process only; the passes remain the guarantee.
   */
  wake(runId: string, at: string): void;
}

/** Runs looked at per page; a pass reads pages until the next run is not due. */
const PAGE = 50;
/** Every this many passes, draining definitions with nothing in flight are settled. */
const DRAIN_EVERY = 10;

/**
 * No run stays Running forever (docs/workflows.md "Crash safety"). Every agent worker sweeps: it
 * reads the Running runs in `check_at` order (an index), and for each one that is due
 * re-dispatches what nobody is doing: a step whose lease lapsed (its worker died; unless it
 * dispatched unconfirmed writes, then the run is Escalated), a step published long ago that no
 * worker took (its message was lost), a retry whose backoff is over. Re-dispatching is one
 * versioned write per run, so of several sweepers at once one does it and the others find nothing
 * due; a duplicate message is harmless anyway (the claim is the lock).
 */
export function createRunSweeper(deps: RunSweeperDeps): RunSweeper {
  const runs = workflowRuns(deps.store);
  const now = (): Date => deps.clock.now();
  let passes = 0;
  // What this process's bus forgot is what was published before it started: the first pass
  // re-publishes that, and nothing newer (a run a live starter is storing right now is its own).
  const startedAt = now().toISOString();
  let forgetful = deps.busForgetsOnRestart === true;
  const wakers = new Map<string, NodeJS.Timeout>();

  const reservation: RunReservationDeps = { store: deps.store, licence: deps.licence, now, redispatchAfterMs: () => deps.settings().redispatch_after_secs * 1000 };

  /**
   * A run its starter left `reserving` (it died between storing the run and reserving its
   * transaction, run-reservation.ts) has its transaction reserved before anything is dispatched;
   * false when the licence refuses it now: the run is ended Failed.
   */
  async function reserved(id: string, known: WorkflowRunRecord | undefined): Promise<boolean> {
    const run = known ?? (await runs.get(id))?.doc;
    if (run === undefined || run.state !== 'Running' || run.transaction?.state !== 'reserving') return true;
    const outcome = await reserveRunTransaction(reservation, run);
    if (outcome.kind === 'held') return true;
    await failRefusedRun(reservation, deps, id, outcome.error);
    return false;
  }

  /** `eager`: a step published before this process started is published again now. */
  async function revive(id: string, eager: boolean, known?: WorkflowRunRecord): Promise<boolean> {
    if (!(await reserved(id, known))) return true;
    const redispatchAfterMs = deps.settings().redispatch_after_secs * 1000;
    const done = await transitionRun(runs, id, { now, redispatchAfterMs }, (draft) => {
      const at = now();
      if (draft.state !== 'Running') return null;
      const dispatch: PendingStep[] = [];
      const lapsed: Array<{ key: string; calls: ToolCallEntry[] }> = [];
      for (const entry of Object.values(draft.pending)) {
        if (leaseLive(entry, at)) continue;
        if (entry.lease !== null) {
          const taken = escalateIfUnsafe(draft, entry, at);
          lapsed.push({ key: entry.key, calls: taken.lapsed });
          if (taken.escalated) return { dispatch: [], escalated: true, lapsed };
        } else if (entry.dispatched_at !== null) {
          const forgotten = eager && entry.dispatched_at < startedAt;
          if (!forgotten && Date.parse(entry.dispatched_at) + redispatchAfterMs > at.getTime()) continue;
        } else if (Date.parse(entry.due_at) > at.getTime()) continue;
        markDispatched(entry, at);
        dispatch.push(entry);
      }
      return dispatch.length === 0 ? null : { dispatch, escalated: false, lapsed };
    });
    if (done === null) return false;
    for (const { key, calls } of done.result.lapsed) await auditRecoveredCalls(deps, done.run, key, calls);
    await deps.runBus.dispatch(id, done.result.dispatch);
    deps.runBus.changed(id);
    if (done.result.escalated) await finalizeRun(deps, done.run);
    return true;
  }

  async function pass(): Promise<number> {
    const eager = forgetful;
    forgetful = false;
    let changed = 0;
    const seen = new Set<string>();
    for (;;) {
      const at = now().toISOString();
      const page = await runs.find({ where: { state: 'Running' }, orderBy: { field: 'check_at', direction: 'asc' }, limit: PAGE });
      const due = page.filter(({ doc }) => !seen.has(doc.id) && ((eager && doc.started_at < startedAt) || (doc.check_at !== null && doc.check_at <= at)));
      for (const { doc } of due) {
        seen.add(doc.id);
        if (await revive(doc.id, eager, doc).catch((err: unknown) => (deps.warn({ err, run_id: doc.id }, 'could not re-dispatch a workflow run'), false))) changed += 1;
      }
      if (due.length === 0 || page.length < PAGE) break;
    }
    if (++passes % DRAIN_EVERY === 0) await settleDrains();
    return changed;
  }

  async function settleDrains(): Promise<void> {
    const at = now().toISOString();
    for (const admission of await drainingAdmissions(deps.store)) {
      await settleDrain(deps.store, admission.workflow_id, admission.version, at);
    }
  }

  const periodic = createPeriodicPass(pass, {
    intervalMs: () => deps.settings().sweep_interval_ms,
    onError: (err) => deps.warn({ err }, 'workflow sweep failed; the next one tries again'),
  });

  return {
    start: periodic.start,
    wake(runId, at) {
      clearTimeout(wakers.get(runId));
      const waker = setTimeout(() => {
        wakers.delete(runId);
        revive(runId, false).catch((err: unknown) => deps.warn({ err, run_id: runId }, 'could not dispatch a workflow step that fell due'));
      }, Math.max(0, Date.parse(at) - now().getTime()));
      waker.unref();
      wakers.set(runId, waker);
    },
    async stop() {
      for (const waker of wakers.values()) clearTimeout(waker);
      wakers.clear();
      await periodic.stop();
    },
    sweepOnce: periodic.runOnce,
  };
}
