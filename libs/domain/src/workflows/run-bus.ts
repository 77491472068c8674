import { Streams, Subjects, type WorkflowCancelMessage, type WorkflowRunChanged, type WorkflowStepMessage } from '@agent-platform/contracts';
import type { Bus } from '@agent-platform/bus';
import type { Clock } from '../time/clock.ts';
import type { PendingStep } from './run-record.ts';

/**
 * What runs say on the bus. Publishing is best effort on purpose: every entry published here was
 * first marked dispatched in the run document, so a publish that fails (or a process that dies
 * before it) leaves an overdue entry that a sweeper publishes again (run-sweeper.ts).
 */
export interface RunBus {
  /** One `workflow.steps` message per entry; resolves when each was accepted or its failure logged. */
  dispatch(runId: string, entries: readonly PendingStep[]): Promise<void>;
  /** `workflows.runs.<id>`: the run changed (event streams re-read it). */
  changed(runId: string): void;
  /** `workflows.cancel`: abort the run's steps wherever they run. */
  cancel(runId: string, reason: string): void;
}

export type Warn = (context: Record<string, unknown>, message: string) => void;

/** The message id of one dispatch of one entry: a re-dispatch is a new message, a redelivery the same. */
export const stepMessageId = (runId: string, entry: Pick<PendingStep, 'key' | 'attempt' | 'dispatch'>): string =>
  `${runId}:${entry.key}:${entry.attempt}:${entry.dispatch}`;

export function createRunBus(bus: Bus, clock: Clock, warn: Warn): RunBus {
  const notify = (subject: string, payload: unknown, what: string): void => {
    bus.notify(subject, payload).catch((err: unknown) => warn({ err, subject }, `could not send ${what}`));
  };
  return {
    async dispatch(runId, entries) {
      await Promise.all(
        entries.map(async (entry) => {
          const data: WorkflowStepMessage = { run_id: runId, step_key: entry.key, dispatch: entry.dispatch };
          try {
            await bus.publish(Streams.workflowSteps, {
              id: stepMessageId(runId, entry),
              correlation_id: runId,
              attempt: 1,
              occurred_at: clock.now().toISOString(),
              data,
            });
          } catch (err) {
            warn({ err, run_id: runId, step_key: entry.key }, 'could not publish a workflow step; the sweeper publishes it again');
          }
        }),
      );
    },
    changed: (runId) => notify(Subjects.workflowRunChanged(runId), { run_id: runId } satisfies WorkflowRunChanged, 'a run change notification'),
    cancel: (runId, reason) => notify(Subjects.workflowCancel, { run_id: runId, reason } satisfies WorkflowCancelMessage, 'a run cancel'),
  };
}
