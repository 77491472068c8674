import type { JournaledToolCall } from '@agent-platform/contracts';

/**
 * The tool-call journal (docs/tools.md "The tool-call journal"): every state-changing tool call of
 * one logical execution (a workflow step, an invocation under an idempotency key) is written down
 * durably **before** the request leaves and again **as soon as** its answer arrives, so that a
 * re-run of that execution (after a crash, a lease takeover, a Retry, a client's retry) is given
 * the recorded answer instead of calling the system of record a second time.
 *
 * Adapters: the run document for a step (workflows/step-journal.ts), the idempotency record for an
 * invocation with a key (invocation/claim-journal.ts), memory for an invocation without one (there
 * is nothing to re-run: the journal only numbers its calls).
 */
export interface ToolCallJournal {
  /** The entries earlier executions left, by position (read when this execution was admitted). */
  readonly prior: readonly ToolCallEntry[];
  /** The idempotency key of position `n`: the same for every execution of the scope. */
  keyOf(position: number): string;
  /**
   * Stores the entry at its position (replacing what was there), durably, before resolving.
   * Rejects when the scope is no longer this execution's (the run was cancelled, ended or taken
   * over; the idempotency claim was lost): the caller must then not make, or report, the call.
   */
  write(entry: ToolCallEntry): Promise<void>;
  /** What the journal belongs to, for audit metadata (`{run_id, step_key}`, `{idempotency_record}`). */
  readonly scope: Record<string, string>;
  /**
   * Entries this execution found `started` when it took the scope over from one that was cut off,
   * now `unknown` in `prior`: audited as `unknown` when the execution opens its call sequence.
   */
  readonly lapsed?: readonly ToolCallEntry[];
}

/** A journal entry: the public fields (the run view, the escalation) plus the answer to replay. */
export interface ToolCallEntry extends JournaledToolCall {
  /** Once answered: the text the tool returned, or the error text the server reported. */
  result?: string;
}

/**
 * The journal as a new execution must see it once the one that wrote it is gone (a lease or a
 * claim taken over): a `started` call never got its answer recorded, so it may or may not have
 * taken effect; it is `unknown` now. `lapsed` lists those calls (to be audited `unknown`).
 */
export function takeOver(entries: readonly ToolCallEntry[]): { journal: ToolCallEntry[]; lapsed: ToolCallEntry[] } {
  const journal = entries.map((e) => (e.state === 'started' ? { ...e, state: 'unknown' as const } : e));
  return { journal, lapsed: journal.filter((e, i) => entries[i]!.state === 'started') };
}

/**
 * The calls a re-run cannot get past on its own: those in doubt whose integration does not honour
 * idempotency keys. (One to an integration that does is simply made again with its key.)
 */
export function blockingUnknowns(entries: readonly ToolCallEntry[]): ToolCallEntry[] {
  return unknownEntries(entries).filter((e) => !e.idempotent_keys);
}

/** Every entry still `unknown` (or `started`, seen from outside its execution). */
export function unknownEntries(entries: readonly ToolCallEntry[]): ToolCallEntry[] {
  return entries.filter((e) => e.state === 'unknown' || e.state === 'started');
}

/** The public view of an entry: the recorded answer stays in the store (it may hold personal data). */
export function publicCall(entry: ToolCallEntry): JournaledToolCall {
  const { result: _result, ...call } = entry;
  return call;
}

/** One line per call for an error message: tool, key and state. */
export function describeCalls(entries: readonly ToolCallEntry[]): string {
  return entries.map((e) => `${e.tool} (key ${e.idempotency_key}, ${e.state})`).join('; ');
}

/**
 * The journal of an invocation without an idempotency key: nothing can re-run it, so there is
 * nothing to keep; it only numbers the calls, whose keys are `<invocation id>:<n>`.
 */
export function transientJournal(prefix: string): ToolCallJournal {
  return { prior: [], keyOf: (n) => `${prefix}:${n}`, write: async () => undefined, scope: { invocation_id: prefix } };
}
