/**
 * Named moments in the life of a write where a crash changes the outcome (STYLE §5: a crash
 * guarantee is tested at each of them). Production code calls `reach(point)` at each; the process
 * adapter (engines `faultPointsFromEnv`) does nothing unless the process was started with
 * `AP_FAULT_STOP_AT` naming the point, for the fault-injection tests (docs/tools.md "Fault points").
 */
export const FAULT_POINTS = [
  /** A state-changing tool call is about to be journaled (nothing written, nothing sent). */
  'tool.before_journal',
  /** The call is journaled `started` and its start audited; the request has not left. */
  'tool.journaled',
  /** The system of record answered; the journal does not know yet. */
  'tool.answered',
  /** The answer is journaled; the step or invocation has not been checkpointed. */
  'tool.recorded',
  /** A trigger fire is claimed (`running`) and counted; its agent is not invoked yet. */
  'trigger.before_invoke',
  /** An invocation's licence transaction is reserved (under its hold); its fence does not say so yet. */
  'invocation.transaction_reserved',
  /** A workflow run is stored (`reserving`); its licence transaction is not reserved yet. */
  'workflow.run_inserted',
  /** A run's transaction is reserved under its hold; the run does not say `held` yet. */
  'workflow.run_reserved',
  /** A session append's long turns and its session document are submitted to the store, not committed. */
  'session.submitted',
  /** The append is committed; the contents its window dropped are not deleted yet. */
  'session.appended',
  /** A channel transcript append's long-turn contents and its document are submitted, not committed. */
  'transcript.submitted',
  /** The transcript append is committed; the contents its window dropped are not deleted yet. */
  'transcript.appended',
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

export interface FaultPoints {
  /** Called as the process passes `point`; returns (or never does, in a fault-injection test). */
  reach(point: FaultPoint): void;
}

/** The production adapter: every point passes. */
export const noFaults: FaultPoints = { reach: () => undefined };
