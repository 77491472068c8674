import { Durables, isWorkflowStepMessage, Streams, type WorkflowStepMessage } from '@agent-platform/contracts';
import type { Bus, Subscription } from '@agent-platform/bus';
import { Errors, type StepContinuation, type StepExecutor, type WorkflowRunRecord } from '@agent-platform/domain';
import { inSpan, type Logger } from '@agent-platform/observability';

export interface WorkflowStepConsumerDeps {
  bus: Bus;
  executor: StepExecutor;
  logger: Logger;
  /** Steps this worker runs at once (`[workflows] step_concurrency`). */
  concurrency: number;
  /** How long a message's handling may go on running the steps its checkpoints hand back; default CONTINUE_WITHIN_MS. */
  continueWithinMs?: number;
}

/** Redeliveries of a message whose handling failed on I/O (the store was unreachable). */
const MAX_DELIVER = 10;
const BACKOFF_MS = [500, 1_000, 2_000, 5_000];
/**
 * How long a delivery may go unacknowledged before the bus presumes its worker dead. The lease in
 * the run document, not this, is what recovers a step in seconds (run-sweeper.ts); a redelivery
 * of a step still running finds its lease and does nothing.
 */
const ACK_WAIT_MS = 30_000;
/**
 * A message stays unacknowledged while the steps its checkpoints hand back run (step 5 of "How a
 * run executes"): past this much of its handling, the next one is published instead, so a long
 * run's first message is acknowledged well within ACK_WAIT_MS and never redelivered for that.
 */
const CONTINUE_WITHIN_MS = ACK_WAIT_MS / 6;

/**
 * Consumes `workflow.steps` under the durable `workflow-workers`, shared by every agent worker so
 * the steps of a FanOut group spread over the fleet. The message only names a pending step; the
 * executor decides from the run document whether and how it runs. A failure to reach the store is
 * retryable (redelivery with backoff); a message past its redeliveries is dead-lettered and the
 * sweeper re-dispatches the step it named, so nothing depends on one message surviving.
 */
export async function consumeWorkflowSteps(deps: WorkflowStepConsumerDeps): Promise<Subscription> {
  return deps.bus.consume(
    Streams.workflowSteps,
    {
      durable: Durables.workflowWorkers,
      maxDeliver: MAX_DELIVER,
      backoffMs: BACKOFF_MS,
      ackWaitMs: ACK_WAIT_MS,
      concurrency: deps.concurrency,
      onDeadLetter: (envelope, error) => deps.logger.error({ err: error, message_id: envelope.id }, 'a workflow step message was dead-lettered; the sweeper re-dispatches its step'),
    },
    async (envelope) => {
      if (!isWorkflowStepMessage(envelope.data)) {
        deps.logger.error({ message_id: envelope.id }, 'workflow.steps message without a valid WorkflowStepMessage; dropped');
        return;
      }
      // The run's next step, when the checkpoint left it to this worker, runs here next without a
      // bus hop (docs/workflows.md "How a run executes"), each step in a span of its own.
      const started = performance.now();
      let next: StepContinuation | null = await runStep(deps, envelope.data);
      while (next !== null) {
        const continuation: StepContinuation = next;
        if (performance.now() - started > (deps.continueWithinMs ?? CONTINUE_WITHIN_MS)) {
          await deps.executor.handOff(continuation);
          break;
        }
        try {
          next = await runStep(deps, continuation.message, continuation.run);
        } catch (error) {
          // This message's own step is done: the continuation goes to the fleet (redelivery, backoff).
          deps.logger.warn({ err: error, run_id: continuation.message.run_id }, 'a workflow step could not run here; published for any worker');
          await deps.executor.handOff(continuation);
          next = null;
        }
      }
    },
  );
}

/** One step in its span (docs/observability.md): its invocation, model and tool calls nest under it. */
function runStep(deps: WorkflowStepConsumerDeps, message: WorkflowStepMessage, run?: WorkflowRunRecord): Promise<StepContinuation | null> {
  const { run_id: runId, step_key: stepKey, dispatch } = message;
  return inSpan('workflow.step', { attributes: { 'workflow.run.id': runId, 'workflow.step.key': stepKey, 'workflow.step.dispatch': dispatch } }, async () => {
    try {
      return await deps.executor.handle(message, run);
    } catch (error) {
      throw Errors.unavailable('the workflow run store', error);
    }
  });
}
