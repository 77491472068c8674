import { Type, type Static } from 'typebox';
import { compiledCheck } from './compiled-check.ts';

/**
 * Bus payloads of workflow runs (docs/workflows.md "How a run executes"). A step is a message on
 * the durable stream `workflow.steps`; its envelope id is `<run>:<step key>:<attempt>:<dispatch>`,
 * so a re-dispatch is a new message while a redelivery of the same one is the same id. The run
 * document in the store is the truth: a consumer re-reads it and acts only on what it still asks for.
 */

/** `workflow.steps` message: run the pending step `step_key` of run `run_id`. */
export const WorkflowStepMessage = Type.Object({
  run_id: Type.String({ minLength: 1 }),
  /** `<step index>.<loop iteration>`: one pending entry of the run. */
  step_key: Type.String({ minLength: 1 }),
  /** The entry's dispatch counter when this message was published (a re-dispatch increments it). */
  dispatch: Type.Integer({ minimum: 1 }),
});
export type WorkflowStepMessage = Static<typeof WorkflowStepMessage>;

/** Consumers check what they take off the bus: another process (or version) may have sent it. */
export const isWorkflowStepMessage = compiledCheck(WorkflowStepMessage);

/**
 * Notification on `workflows.runs.<run id>`: the run document changed (a step finished, the state
 * moved). Carries no state: listeners re-read the run, so a lost or reordered notification costs a
 * delay, never a wrong view.
 */
export const WorkflowRunChanged = Type.Object({ run_id: Type.String({ minLength: 1 }) });
export type WorkflowRunChanged = Static<typeof WorkflowRunChanged>;

/** `workflows.cancel` notification: abort the run's in-flight steps on whichever worker holds them. */
export const WorkflowCancelMessage = Type.Object({
  run_id: Type.String({ minLength: 1 }),
  reason: Type.String(),
});
export type WorkflowCancelMessage = Static<typeof WorkflowCancelMessage>;
