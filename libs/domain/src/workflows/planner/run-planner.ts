import type { JournaledToolCall, StepResultView, WorkflowStep } from '@agent-platform/contracts';
import { blockingUnknowns, describeCalls, publicCall, takeOver, unknownEntries, type ToolCallEntry } from '../../tools/tool-call-journal.ts';
import { journalOf, type PendingStep, type WorkflowRunRecord } from '../run-record.ts';
import { conditionHolds, fanOutEnd, finishFanOut, finishLoopIteration, finishSimple } from './step-modes.ts';

/**
 * The workflow runner's decisions (DECISIONS D8, spec §States "Workflow run"), as pure functions
 * over a draft of the run document: given what just happened, which steps are pending next and
 * whether the run is over. No I/O: the step executor and the run service apply them inside one
 * versioned write of the run, so a decision and the checkpoint it rests on are stored together.
 */

export interface RunPlanContext {
  now: Date;
  /** error_mode Retry: the wait before retry `n` (1 for the first retry). */
  retryDelayMs: (n: number) => number;
  /** The agent a Collect step names, for its step result (it is not called). */
  collectAgent: (step: WorkflowStep) => { agent_id: string; agent_name: string };
}

/** What happened to one execution of a pending step. */
export type StepOutcome =
  | { kind: 'succeeded'; result: StepResultView }
  | { kind: 'failed'; error: string }
  /** The step met tool calls it cannot get past (docs/tools.md "The tool-call journal"): the run is Escalated. */
  | { kind: 'escalated'; error: string; calls: JournaledToolCall[] }
  /** Refused for now (rate limited): the same attempt runs again at `until`, not counted as a failure. */
  | { kind: 'deferred'; until: string; error: string };

/** The entries a decision created or re-armed that must be published now, and what was skipped. */
export interface Planned {
  dispatch: PendingStep[];
  /** Steps passed over without running (Conditional false, error_mode Skip), with why. */
  skipped: Array<{ step_name: string; reason: string }>;
}

export const stepKey = (index: number, iteration: number): string => `${index}.${iteration}`;

/** A run's first steps: everything from step 0 until something must run (or the run is over). */
export function planStart(run: WorkflowRunRecord, ctx: RunPlanContext): Planned {
  const planned: Planned = { dispatch: [], skipped: [] };
  planFromCursor(run, ctx, planned);
  return planned;
}

/** Applies the outcome of pending step `key` to the run and plans what follows. */
export function applyOutcome(run: WorkflowRunRecord, key: string, outcome: StepOutcome, ctx: RunPlanContext): Planned {
  const planned: Planned = { dispatch: [], skipped: [] };
  const entry = run.pending[key];
  if (entry === undefined) throw new RangeError(`run ${run.id} has no pending step ${key}`);
  const step = run.definition.steps[entry.index]!;
  switch (outcome.kind) {
    case 'succeeded':
      archiveJournal(run, entry);
      delete run.pending[key];
      succeed(run, step, entry, outcome.result, ctx, planned);
      break;
    case 'deferred':
      delete run.pending[key];
      rearm(run, { ...entry, lease: null, last_error: outcome.error }, outcome.until, ctx, planned);
      break;
    case 'failed':
      delete run.pending[key];
      fail(run, step, entry, outcome.error, ctx, planned);
      break;
    case 'escalated':
      escalate(run, step.name, `step '${step.name}': ${outcome.error}`, outcome.calls, ctx.now);
      break;
  }
  return planned;
}

/**
 * Ends the run Failed or Escalated (cancel, a step that may not run again); nothing stays pending.
 * The journals of the steps still pending are kept with the run (`tool_calls`).
 */
export function endRun(run: WorkflowRunRecord, state: 'Failed' | 'Escalated', error: string, now: Date): void {
  for (const entry of Object.values(run.pending)) archiveJournal(run, entry);
  run.state = state;
  run.error = error;
  run.completed_at = now.toISOString();
  run.pending = {};
  run.check_at = null;
}

/** Ends the run Escalated (spec §States "Workflow run"), naming the calls a person must look up. */
function escalate(run: WorkflowRunRecord, step: string, error: string, calls: JournaledToolCall[], now: Date): void {
  endRun(run, 'Escalated', error, now);
  run.escalation = { step, calls };
}

/** Moves a finished execution's journal to the run's `tool_calls`. */
function archiveJournal(run: WorkflowRunRecord, entry: PendingStep): void {
  const journal = journalOf(entry);
  if (journal.length === 0) return;
  const step = run.definition.steps[entry.index]?.name ?? entry.key;
  (run.tool_calls ??= []).push(...journal.map((e) => ({ ...e, step, step_key: entry.key })));
}

function succeed(run: WorkflowRunRecord, step: WorkflowStep, entry: PendingStep, result: StepResultView, ctx: RunPlanContext, planned: Planned): void {
  const { progress } = run;
  if (step.mode === 'FanOut') return settleMember(run, entry.index, result, ctx, planned);
  if (typeof step.mode === 'object' && 'Loop' in step.mode) {
    const nextInput = finishLoopIteration(progress, run.step_results, step, entry, result);
    if (nextInput !== null) {
      add(run, newEntry(entry.index, entry.iteration + 1, nextInput, ctx.now), ctx, planned);
      return;
    }
  } else {
    finishSimple(progress, run.step_results, step, entry.index, result);
  }
  planFromCursor(run, ctx, planned);
}

/**
 * A failed execution: retried (its journal kept, so the retry is given the recorded answers), or
 * skipped, or the run Failed. A call whose outcome is unknown is never passed over as if it had
 * not happened: unless a retry can make it again with its key (its integration honours keys), the
 * run is Escalated instead (docs/tools.md "The tool-call journal").
 */
function fail(run: WorkflowRunRecord, step: WorkflowStep, entry: PendingStep, error: string, ctx: RunPlanContext, planned: Planned): void {
  const mode = step.error_mode;
  const maxRetries = typeof mode === 'object' ? mode.Retry.max_retries : 0;
  const journal = journalOf(entry);
  const retryable = entry.attempt <= maxRetries;
  const inDoubt = retryable ? blockingUnknowns(journal) : unknownEntries(journal);
  if (inDoubt.length > 0) {
    archiveJournal(run, entry);
    const why = `step '${step.name}' failed (${error}) after ${inDoubt.length} state-changing tool call(s) whose outcome is unknown: ${describeCalls(inDoubt)}; it is not re-executed`;
    escalate(run, step.name, why, inDoubt.map(publicCall), ctx.now);
    return;
  }
  if (retryable) {
    const due = new Date(ctx.now.getTime() + ctx.retryDelayMs(entry.attempt));
    rearm(run, { ...entry, attempt: entry.attempt + 1, lease: null, last_error: error }, due.toISOString(), ctx, planned);
    return;
  }
  archiveJournal(run, entry);
  if (mode === 'Skip') {
    planned.skipped.push({ step_name: step.name, reason: error });
    if (step.mode === 'FanOut') return settleMember(run, entry.index, null, ctx, planned);
    // The step's input passes on unchanged, as for a Conditional that did not hold.
    run.progress.cursor = entry.index + 1;
    run.progress.input = entry.input;
    planFromCursor(run, ctx, planned);
    return;
  }
  const tries = entry.attempt > 1 ? ` after ${entry.attempt} attempts` : '';
  endRun(run, 'Failed', `step '${step.name}' failed${tries}: ${error}`, ctx.now);
}

function settleMember(run: WorkflowRunRecord, index: number, result: StepResultView | null, ctx: RunPlanContext, planned: Planned): void {
  const group = run.progress.group;
  if (group === null) throw new RangeError(`run ${run.id}: FanOut step ${index} settled outside a group`);
  group.settled[String(index)] = result;
  for (let i = group.start; i <= group.end; i++) if (!(String(i) in group.settled)) return;
  finishFanOut(run.progress, run.step_results, run.definition.steps, group.settled, group, ctx.collectAgent);
  planFromCursor(run, ctx, planned);
}

/**
 * Plans from `progress.cursor` until a step must run: Conditional steps that do not hold are
 * skipped on the spot (no step result, `{{input}}` unchanged), and past the last step the run is
 * Completed with the last output (D8: `{{input}}` at that point is exactly that).
 */
function planFromCursor(run: WorkflowRunRecord, ctx: RunPlanContext, planned: Planned): void {
  const { progress } = run;
  const steps = run.definition.steps;
  for (;;) {
    const step = steps[progress.cursor];
    if (step === undefined) return complete(run, ctx.now);
    const index = progress.cursor;
    if (step.mode === 'FanOut') {
      const end = fanOutEnd(steps, index);
      progress.group = { start: index, end, settled: {} };
      for (let i = index; i <= end; i++) add(run, newEntry(i, 0, progress.input, ctx.now), ctx, planned);
      return;
    }
    if (step.mode === 'Collect') {
      // Validation puts a Collect right after a FanOut group, which consumes it; one reached on
      // its own (a definition stored before that rule) has nothing to collect: it passes through.
      progress.cursor += 1;
      continue;
    }
    if (!conditionHolds(step, progress.input)) {
      planned.skipped.push({ step_name: step.name, reason: 'its condition did not hold' });
      progress.cursor += 1;
      continue;
    }
    add(run, newEntry(index, 0, progress.input, ctx.now), ctx, planned);
    return;
  }
}

function complete(run: WorkflowRunRecord, now: Date): void {
  run.state = 'Completed';
  run.output = run.progress.input;
  run.completed_at = now.toISOString();
  run.pending = {};
  run.check_at = null;
}

function newEntry(index: number, iteration: number, input: string, now: Date): PendingStep {
  return {
    key: stepKey(index, iteration),
    index,
    iteration,
    attempt: 1,
    input,
    due_at: now.toISOString(),
    dispatch: 0,
    dispatched_at: null,
    lease: null,
    last_error: null,
  };
}

/** Puts an entry back to run at `due` (a retry, a deferral): published now if due, else by the sweeper. */
function rearm(run: WorkflowRunRecord, entry: PendingStep, due: string, ctx: RunPlanContext, planned: Planned): void {
  add(run, { ...entry, due_at: due, dispatched_at: null }, ctx, planned);
}

/** Records the entry as pending and, when the run is Running and it is due, marks it dispatched now. */
function add(run: WorkflowRunRecord, entry: PendingStep, ctx: RunPlanContext, planned: Planned): void {
  run.pending[entry.key] = entry;
  if (run.state !== 'Running' || Date.parse(entry.due_at) > ctx.now.getTime()) return;
  markDispatched(entry, ctx.now);
  planned.dispatch.push(entry);
}

/** The entry is about to be published (again): a new dispatch number, so a new message id. */
export function markDispatched(entry: PendingStep, now: Date): void {
  entry.dispatch += 1;
  entry.dispatched_at = now.toISOString();
  entry.lease = null;
}

/**
 * When a sweeper must look at the run if nothing happens first (run-record.ts `check_at`): a
 * held step when its lease lapses, a published one when it is overdue, a waiting one when it
 * falls due. Null for a run that is not Running.
 */
export function checkAt(run: WorkflowRunRecord, redispatchAfterMs: number): string | null {
  if (run.state !== 'Running') return null;
  let earliest = Number.POSITIVE_INFINITY;
  for (const entry of Object.values(run.pending)) {
    let at: number;
    if (entry.lease !== null) at = Date.parse(entry.lease.until);
    else if (entry.dispatched_at !== null) at = Date.parse(entry.dispatched_at) + redispatchAfterMs;
    else at = Date.parse(entry.due_at);
    earliest = Math.min(earliest, at);
  }
  // A Running run with nothing pending is a run someone must move on: look at it now.
  return Number.isFinite(earliest) ? new Date(earliest).toISOString() : run.updated_at;
}

/**
 * A held step whose lease lapsed: its worker is presumed dead, and the calls it journaled without
 * an answer are now `unknown` (returned, to be audited). Spec §States "Workflow run": a step that
 * dispatched a state-changing write to a system of record without confirmation is not executed
 * again; the run is Escalated (handed to a human) instead, unless every such call is to an
 * integration that honours idempotency keys (the re-run makes it again with its key). Answered
 * calls are no obstacle: the re-run is given their recorded answers.
 */
export function escalateIfUnsafe(run: WorkflowRunRecord, entry: PendingStep, now: Date): { escalated: boolean; lapsed: ToolCallEntry[] } {
  const before = journalOf(entry);
  if (before.length === 0) return { escalated: false, lapsed: [] };
  const { journal, lapsed } = takeOver(before);
  entry.journal = journal;
  delete entry.unconfirmed_writes;
  const blocking = blockingUnknowns(entry.journal);
  if (blocking.length === 0) return { escalated: false, lapsed };
  const step = run.definition.steps[entry.index]?.name ?? entry.key;
  const worker = blocking[0]!.worker;
  escalate(
    run,
    step,
    `step '${step}' was interrupted (worker ${worker} stopped) after dispatching ${blocking.length} state-changing tool call(s) whose outcome is unknown: ${describeCalls(blocking)}; it is not re-executed`,
    blocking.map(publicCall),
    now,
  );
  return { escalated: true, lapsed };
}

/** Whether a lease is still held at `now`. */
export function leaseLive(entry: PendingStep, now: Date): boolean {
  return entry.lease !== null && Date.parse(entry.lease.until) > now.getTime();
}
