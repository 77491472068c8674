import type { JournaledToolCall, RunState, RunToolCall, StepResultView, WorkflowRunStatus, WorkflowStep } from '@agent-platform/contracts';
import type { Collection, CounterOnce, Store } from '@agent-platform/store';
import { publicCall, type ToolCallEntry } from '../tools/tool-call-journal.ts';

/**
 * A workflow run as stored (collection `workflow_runs`, id = the run's UUID): the spec's
 * WorkflowRunStatus plus what makes it durable (docs/workflows.md "How a run executes").
 *
 * The document is the run's single source of truth. Every change is one versioned write of the
 * whole document (`Collection.update`), so a step's checkpoint, the run's new position and the
 * steps dispatched next are committed together or not at all: there is no moment where a finished
 * step is recorded but the run does not know what comes next, or the other way round.
 */
export interface WorkflowRunRecord {
  id: string;
  workflow_id: string;
  workflow_name: string;
  input: string;
  state: RunState;
  step_results: StepResultView[];
  output: string | null;
  error: string | null;
  started_at: string;
  completed_at: string | null;

  /** The definition the run started with: an upgrade of the package never changes a run in flight. */
  definition: RunDefinition;
  /** Where the run is between steps. */
  progress: RunProgress;
  /** Steps dispatched or waiting to be, by step key (`<index>.<iteration>`). */
  pending: Record<string, PendingStep>;
  /**
   * When a sweeper must look at this run if nothing else happens first (a lease lapses, a message
   * is overdue, a retry falls due); null for a run nobody needs to watch. Indexed with `state`.
   */
  check_at: string | null;

  /** The licence transaction the run holds (docs/workflows.md "Licence"), settled once. */
  transaction: RunTransaction | null;
  /** The workflow type the run counts under (licence budgets, value events). */
  workflow_type: string;
  /** Who started it (the caller's identity). */
  started_by: string;
  /** The claim, policy or case number it was started for (docs/retention.md "Business keys"). */
  business_key?: string;
  /** `Idempotency-Key` scope of POST /workflows/{id}/run, unique; absent without a key. */
  idempotency_id?: string;
  /** `sha256` of the input the key was first used with. */
  idempotency_hash?: string;
  /** Set when the run was Escalated: the step and its calls in doubt. */
  escalation?: { step: string; calls: JournaledToolCall[] };
  /**
   * The journals of step executions that are over (checkpointed, or ended with the run), kept for
   * the run's view and the audit of what reached the systems of record; a pending step keeps its
   * own in `pending[key].journal` until then.
   */
  tool_calls?: RunJournalEntry[];
  /** Set once the terminal bookkeeping (licence, value event, admission) was done. */
  finalized: boolean;
  /**
   * Where the run came from when something outside the api started it (a channel message:
   * docs/channels.md "Routing"): whichever process ends the run sends its output back there.
   */
  origin?: RunOrigin;
  updated_at: string;
}

/** The conversation a channel-started run answers (docs/channels.md "default_workflow"). */
export interface RunOrigin {
  channel: { channel_id: string; conversation: string; thread: string | null; in_reply_to: string };
}

export interface RunDefinition {
  version: string;
  steps: WorkflowStep[];
  variables: Record<string, string>;
}

/** The position of a run between steps (the planner's state, step-modes/*). */
export interface RunProgress {
  /** The next step index to plan once nothing is pending. */
  cursor: number;
  /** `{{input}}` of the next step: the workflow input, then each step's output (D8). */
  input: string;
  /** `variables` of the definition plus every `output_var` set so far. */
  variables: Record<string, string>;
  /** A FanOut group in flight, its members' checkpoints kept until the whole group is done. */
  group: FanOutGroup | null;
}

export interface FanOutGroup {
  /** First and last step index of the consecutive FanOut steps. */
  start: number;
  end: number;
  /** By step index: the member's result, or null when it was skipped (error_mode Skip). */
  settled: Record<string, StepResultView | null>;
}

/** A step the run waits for: dispatched on the bus, held by a worker, or waiting for its retry. */
export interface PendingStep {
  key: string;
  index: number;
  /** Loop iteration, 0 for every other mode. */
  iteration: number;
  /** 1 for the first attempt; error_mode Retry adds one per retry. */
  attempt: number;
  /** `{{input}}` of this execution. */
  input: string;
  /** Earliest time it may run (a retry's backoff); the planner sets it to the dispatch time otherwise. */
  due_at: string;
  /** How many times a message was published for it (the message id carries it). */
  dispatch: number;
  /** When the last message was published; null while not published (suspended run, retry not due). */
  dispatched_at: string | null;
  /** The worker executing it, renewed while it runs; null when nobody holds it. */
  lease: StepLease | null;
  /**
   * The tool-call journal of this step (docs/tools.md "The tool-call journal"): its state-changing
   * calls by position, over every execution and attempt of the step, with their answers. A re-run
   * is given the recorded answers; a call whose outcome is unknown is never made again blindly
   * (spec §States "Workflow run": the run is Escalated instead). Absent until the first call.
   */
  journal?: ToolCallEntry[];
  /** Runs stored before the journal: calls journaled and not confirmed (read by `journalOf`). */
  unconfirmed_writes?: JournaledToolCall[];
  /** The last failure of this step, when it is waiting for a retry. */
  last_error: string | null;
}

export interface StepLease {
  /** The process holding it (a UUID per worker process). */
  holder: string;
  /** Unique per claim: only the claim's own writes may checkpoint the step (fencing). */
  token: string;
  until: string;
}

/**
 * The run's licence transaction (run-reservation.ts). `reserving`: the run is stored and its
 * transaction is being reserved under `hold`; nothing of the run is dispatched until it is `held`.
 */
export interface RunTransaction {
  /** The licence counter reserved for the run's workflow type (one per run); absent while `reserving`. */
  counter_key?: string;
  state: 'reserving' | 'held' | 'committed' | 'released';
  /** The idempotent add the transaction is reserved under (runs stored before holds have none). */
  hold?: CounterOnce;
  /** The provider the reservation is checked against (the default model's, when the run started). */
  provider_id?: string;
}

/** A journal entry of a step execution that is over, with the step it belongs to. */
export interface RunJournalEntry extends ToolCallEntry {
  step: string;
  step_key: string;
}

export const WORKFLOW_RUNS_COLLECTION = 'workflow_runs';

export function workflowRuns(store: Store): Collection<WorkflowRunRecord> {
  return store.collection<WorkflowRunRecord>(WORKFLOW_RUNS_COLLECTION, {
    indexes: [
      { field: 'state' },
      { field: 'workflow_id' },
      { field: 'started_at' },
      { field: 'check_at' },
      { field: 'idempotency_id', unique: true },
      // Retention (docs/retention.md): legal holds find runs by key, sweeps read terminal runs oldest first.
      { field: 'business_key' },
      { field: 'completed_at' },
    ],
  });
}

/** The spec's WorkflowRunStatus of a stored run. */
export function runStatus(run: WorkflowRunRecord): WorkflowRunStatus {
  return {
    id: run.id,
    workflow_id: run.workflow_id,
    workflow_name: run.workflow_name,
    input: run.input,
    state: run.state,
    step_results: run.step_results,
    output: run.output,
    error: run.error,
    started_at: run.started_at,
    completed_at: run.completed_at,
    ...toolCallsView(run),
    ...(run.escalation === undefined ? {} : { escalation: run.escalation }),
    ...(run.business_key === undefined ? {} : { business_key: run.business_key }),
  };
}

/**
 * The journal of a pending step. Runs stored before the journal kept `unconfirmed_writes`
 * (calls journaled, not confirmed): those read as `started` entries.
 */
export function journalOf(entry: PendingStep): ToolCallEntry[] {
  if (entry.journal !== undefined) return entry.journal;
  return (entry.unconfirmed_writes ?? []).map((call, position) => ({ ...call, position, state: 'started', idempotent_keys: false, replays: 0 }));
}

/** Every journaled call of the run, over and pending, oldest first; nothing when there is none. */
function toolCallsView(run: WorkflowRunRecord): { tool_calls?: RunToolCall[] } {
  const calls: RunToolCall[] = (run.tool_calls ?? []).map(({ step, step_key, ...entry }) => ({ step, step_key, ...publicCall(entry) }));
  for (const pending of Object.values(run.pending)) {
    const step = run.definition.steps[pending.index]?.name ?? pending.key;
    for (const entry of journalOf(pending)) calls.push({ step, step_key: pending.key, ...publicCall(entry) });
  }
  if (calls.length === 0) return {};
  return { tool_calls: calls.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.position - b.position)) };
}
