import { createHash, randomUUID } from 'node:crypto';
import {
  TERMINAL_RUN_STATES,
  type PlatformConfig,
  type RunState,
  type WorkflowDefinitionView,
  type WorkflowDetailView,
  type WorkflowRunStatus,
} from '@agent-platform/contracts';
import { StoreConflictError, StoreDuplicateError, type Store } from '@agent-platform/store';
import type { AgentStore } from '../agents/agent-store.ts';
import { catalogCollections, type WorkflowRecord } from '../catalog/catalog-records.ts';
import { Errors } from '../errors/errors.ts';
import type { PlatformError } from '../errors/platform-error.ts';
import type { FaultPoints } from '../faults/fault-points.ts';
import type { LicenceGate } from '../licence/licence-gate.ts';
import type { ModelRegistry } from '../models/model-registry.ts';
import type { Clock } from '../time/clock.ts';
import { checkAt, endRun, markDispatched, planStart, type RunPlanContext } from './planner/run-planner.ts';
import type { RunBus, Warn } from './run-bus.ts';
import { CANCELLED_PREFIX, finalizeRun, type RunEndedHook } from './run-finalizer.ts';
import type { EventPublisher } from '../events/event-publisher.ts';
import { transitionRun } from './run-transition.ts';
import { runStatus, workflowRuns, type PendingStep, type RunOrigin, type WorkflowRunRecord } from './run-record.ts';
import { collectAgentOf } from './step-agents.ts';
import { admissionOf } from './workflow-admissions.ts';
import { failRefusedRun, reserveRunTransaction, runHold, type RunReservationDeps } from './run-reservation.ts';

/** Who asks, for the run's `started_by` and a cancel's error. */
export interface RunCaller {
  identity: string;
}

export interface StartRunRequest {
  input: string;
  version?: string | undefined;
  /** The `Idempotency-Key` header: a repeat by the same caller returns the same run. */
  idempotencyKey?: string | undefined;
  /** A channel message that started the run: its output goes back there when it ends. */
  origin?: RunOrigin | undefined;
  /** The claim, policy or case number the run is for (docs/retention.md "Business keys"). */
  businessKey?: string | undefined;
}

/** Definitions and runs as the api serves them (spec §Workflows and runs; docs/workflows.md). */
export interface WorkflowService {
  list(): Promise<WorkflowDefinitionView[]>;
  get(id: string): Promise<WorkflowDetailView>;
  /** Creates the run and dispatches its first steps; `replayed` when an idempotency key matched. */
  start(workflowId: string, request: StartRunRequest, caller: RunCaller): Promise<{ run: WorkflowRunStatus; replayed: boolean }>;
  runs(query: { workflow_id?: string; state?: RunState; limit: number }): Promise<WorkflowRunStatus[]>;
  run(id: string): Promise<WorkflowRunStatus>;
  /** The stored run, or null (event streams read it as it changes). */
  record(id: string): Promise<WorkflowRunRecord | null>;
  /** Ends the run Failed, naming who cancelled it; its in-flight steps are aborted. 409 when terminal. */
  cancel(id: string, caller: RunCaller): Promise<WorkflowRunStatus>;
  /** Running -> Suspended: the step in flight finishes and is checkpointed; nothing new starts. */
  suspend(id: string, caller: RunCaller): Promise<WorkflowRunStatus>;
  /** Suspended -> Running from the next step. */
  resume(id: string, caller: RunCaller): Promise<WorkflowRunStatus>;
}

export interface WorkflowServiceDeps {
  store: Store;
  clock: Clock;
  agents: Pick<AgentStore, 'get' | 'getByName'>;
  licence: Pick<LicenceGate, 'reserveRun' | 'releaseRun'>;
  models: Pick<ModelRegistry, 'resolve'>;
  runBus: RunBus;
  settings: () => PlatformConfig['workflows'];
  warn: Warn;
  /** Where `workflow.run.started` and the terminal events go (docs/events.md). */
  events?: EventPublisher;
  /** Called once when a run this service ends is finalized (run-finalizer.ts `onRunEnded`). */
  onRunEnded?: RunEndedHook | undefined;
  /** Crash points of the fault-injection tests (`workflow.run_inserted`, `workflow.run_reserved`); absent: none. */
  faults?: FaultPoints | undefined;
}

export function createWorkflowService(deps: WorkflowServiceDeps): WorkflowService {
  const workflows = catalogCollections(deps.store).workflows;
  const runs = workflowRuns(deps.store);
  const now = (): Date => deps.clock.now();

  const definitionOf = async (id: string): Promise<WorkflowRecord> => {
    const found = (await workflows.get(id))?.doc ?? null;
    if (found === null) throw Errors.notFound('workflow', id);
    return found;
  };

  const recordOr404 = async (id: string): Promise<WorkflowRunRecord> => {
    const found = (await runs.get(id))?.doc ?? null;
    if (found === null) throw Errors.notFound('run', id);
    return found;
  };

  const planContext = async (run: WorkflowRunRecord): Promise<RunPlanContext> => ({
    now: now(),
    retryDelayMs: () => 0,
    collectAgent: await collectAgentOf(deps.agents, run),
  });

  /** Applies `change` to the stored run (run-transition.ts); 404 when there is no such run. */
  async function transition(id: string, change: (draft: WorkflowRunRecord) => PendingStep[]): Promise<{ run: WorkflowRunRecord; dispatch: PendingStep[] }> {
    const done = await transitionRun(runs, id, { now, redispatchAfterMs: deps.settings().redispatch_after_secs * 1000 }, change);
    if (done === null) throw Errors.notFound('run', id);
    return { run: done.run, dispatch: done.result };
  }

  async function admit(workflow: WorkflowRecord, version: string | undefined): Promise<void> {
    const wanted = version ?? workflow.version;
    const state = await admissionOf(deps.store, workflow.id, wanted);
    const uninstalled = workflow.uninstalled_at !== null;
    if (state === 'draining' || state === 'suspended' || (uninstalled && wanted === workflow.version)) {
      throw Errors.permissionDenied(
        `drain guard: workflow '${workflow.name}' version ${wanted} is ${state ?? 'suspended'} (${uninstalled ? 'its package was uninstalled' : 'an upgrade replaced it'}) and admits no new runs; runs already in flight finish`,
        { reason: 'drain_guard', workflow_id: workflow.id, version: wanted, admission_state: state ?? 'suspended' },
      );
    }
    if (wanted !== workflow.version) throw Errors.notFound('workflow version', `${workflow.name}@${wanted}`);
  }

  async function replay(id: string, input: string, businessKey: string | undefined): Promise<WorkflowRunStatus> {
    const existing = (await runs.find({ where: { idempotency_id: id }, limit: 1 }))[0]?.doc;
    if (existing === undefined) throw Errors.internal('an idempotent run vanished between its insert and its read');
    if (existing.idempotency_hash !== inputHash(input, businessKey)) {
      throw Errors.conflict('this Idempotency-Key was already used to start a run with a different input (or business key); use a new key', { run_id: existing.id });
    }
    return runStatus(existing);
  }

  const reservation: RunReservationDeps = {
    store: deps.store,
    licence: deps.licence,
    now,
    redispatchAfterMs: () => deps.settings().redispatch_after_secs * 1000,
    faults: deps.faults,
  };

  /**
   * A run the licence refused at its start is removed, so that the caller's 403 leaves nothing
   * behind and its idempotency key stays free. Should it have moved on meanwhile (a sweeper got to
   * it), it is failed instead, with the refusal.
   */
  async function forgetRefusedRun(id: string, refusal: PlatformError): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await runs.get(id);
      if (current === null) return;
      if (current.doc.transaction?.state !== 'reserving' || current.doc.state !== 'Running') break;
      try {
        await runs.delete(id, current.version);
        return;
      } catch (error) {
        if (!(error instanceof StoreConflictError)) throw error;
      }
    }
    await failRefusedRun(reservation, deps, id, refusal);
  }

  return {
    async list() {
      const rows = await workflows.find({ orderBy: { field: 'name' } });
      return rows.filter(({ doc }) => doc.uninstalled_at === null).map(({ doc }) => definitionView(doc));
    },

    async get(id) {
      const workflow = await definitionOf(id);
      return { ...definitionView(workflow), admission_state: await admissionOf(deps.store, workflow.id, workflow.version) };
    },

    async start(workflowId, request, caller) {
      const workflow = await definitionOf(workflowId);
      const idempotencyId = request.idempotencyKey === undefined ? undefined : runKeyId(workflowId, caller.identity, request.idempotencyKey);
      if (idempotencyId !== undefined && (await runs.count({ idempotency_id: idempotencyId })) > 0) {
        return { run: await replay(idempotencyId, request.input, request.businessKey), replayed: true };
      }
      await admit(workflow, request.version);
      const startedAt = now().toISOString();
      const runId = randomUUID();
      const run: WorkflowRunRecord = {
        id: runId,
        workflow_id: workflow.id,
        workflow_name: workflow.name,
        input: request.input,
        state: 'Running',
        step_results: [],
        output: null,
        error: null,
        started_at: startedAt,
        completed_at: null,
        definition: { version: workflow.version, steps: workflow.steps, variables: workflow.variables },
        progress: { cursor: 0, input: request.input, variables: { ...workflow.variables }, group: null },
        pending: {},
        check_at: null,
        // Stored before it is reserved (run-reservation.ts): a crash between the two cannot leak it.
        transaction: { state: 'reserving', hold: runHold(runId, now()), provider_id: deps.models.resolve().provider.id },
        workflow_type: workflow.workflow_type,
        started_by: caller.identity,
        finalized: false,
        updated_at: startedAt,
        ...(idempotencyId === undefined ? {} : { idempotency_id: idempotencyId, idempotency_hash: inputHash(request.input, request.businessKey) }),
        ...(request.businessKey === undefined ? {} : { business_key: request.businessKey }),
        ...(request.origin === undefined ? {} : { origin: request.origin }),
      };
      const planned = planStart(run, await planContext(run));
      run.check_at = checkAt(run, deps.settings().redispatch_after_secs * 1000);
      try {
        await runs.insert(run);
      } catch (error) {
        if (error instanceof StoreDuplicateError && idempotencyId !== undefined) return { run: await replay(idempotencyId, request.input, request.businessKey), replayed: true };
        throw error;
      }
      deps.faults?.reach('workflow.run_inserted');
      const reserved = await reserveRunTransaction(reservation, run);
      if (reserved.kind === 'refused') {
        await forgetRefusedRun(run.id, reserved.error);
        throw reserved.error;
      }
      await deps.events?.emit('workflow.run.started', {
        id: `workflow.run.started:${run.id}`,
        agent_id: null,
        data: { run_id: run.id, workflow_id: run.workflow_id, workflow_name: run.workflow_name },
      });
      await deps.runBus.dispatch(run.id, planned.dispatch);
      deps.runBus.changed(run.id);
      // A run whose every step was skipped ends at once (its bookkeeping too).
      await finalizeRun(deps, reserved.run);
      return { run: runStatus(reserved.run), replayed: false };
    },

    async runs(query) {
      const where: { workflow_id?: string; state?: RunState } = {};
      if (query.workflow_id !== undefined) where.workflow_id = query.workflow_id;
      if (query.state !== undefined) where.state = query.state;
      const rows = await runs.find({ where, orderBy: { field: 'started_at', direction: 'desc' }, limit: query.limit });
      return rows.map(({ doc }) => runStatus(doc));
    },

    run: async (id) => runStatus(await recordOr404(id)),
    record: async (id) => (await runs.get(id))?.doc ?? null,

    async cancel(id, caller) {
      const reason = `${CANCELLED_PREFIX}${caller.identity}`;
      const { run } = await transition(id, (draft) => {
        if (TERMINAL_RUN_STATES.has(draft.state)) throw terminalConflict(draft, 'cancel');
        endRun(draft, 'Failed', reason, now());
        return [];
      });
      deps.runBus.cancel(id, reason);
      deps.runBus.changed(id);
      await finalizeRun(deps, run);
      return runStatus(run);
    },

    async suspend(id) {
      const { run } = await transition(id, (draft) => {
        if (draft.state !== 'Running') throw Errors.conflict(`run ${id} is ${draft.state}; only a Running run can be suspended`, { run_id: id, state: draft.state });
        draft.state = 'Suspended';
        // Published steps nobody holds yet are taken back; the one in flight finishes.
        for (const entry of Object.values(draft.pending)) if (entry.lease === null) entry.dispatched_at = null;
        return [];
      });
      deps.runBus.changed(id);
      return runStatus(run);
    },

    async resume(id) {
      const ctx = now();
      const { run, dispatch } = await transition(id, (draft) => {
        if (draft.state !== 'Suspended') throw Errors.conflict(`run ${id} is ${draft.state}; only a Suspended run can be resumed`, { run_id: id, state: draft.state });
        draft.state = 'Running';
        const due = Object.values(draft.pending).filter((e) => e.lease === null && Date.parse(e.due_at) <= ctx.getTime());
        for (const entry of due) markDispatched(entry, ctx);
        return due;
      });
      // Suspended before its start reserved the transaction (its starter died): reserved first.
      const reserved = await reserveRunTransaction(reservation, run);
      if (reserved.kind === 'refused') {
        return runStatus((await failRefusedRun(reservation, deps, id, reserved.error)) ?? run);
      }
      await deps.runBus.dispatch(id, dispatch);
      deps.runBus.changed(id);
      return runStatus(run);
    },
  };
}

function definitionView(workflow: WorkflowRecord): WorkflowDefinitionView {
  return { id: workflow.id, name: workflow.name, description: workflow.description, steps: workflow.steps, created_at: workflow.created_at };
}

function terminalConflict(run: WorkflowRunRecord, verb: string) {
  return Errors.conflict(`run ${run.id} is already ${run.state}; a terminal run cannot be ${verb}led`, { run_id: run.id, state: run.state });
}

/** Keys are scoped by workflow and caller (as invoke keys are by agent and caller). */
function runKeyId(workflowId: string, caller: string, key: string): string {
  return `sha256:${createHash('sha256').update(JSON.stringify([workflowId, caller, key])).digest('hex')}`;
}

/** Of the input alone without a business key, so keys stored before business keys existed still match. */
function inputHash(input: string, businessKey: string | undefined): string {
  const hashed = businessKey === undefined ? input : JSON.stringify([input, businessKey]);
  return `sha256:${createHash('sha256').update(hashed).digest('hex')}`;
}
