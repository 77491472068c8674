import { Subjects, TERMINAL_RUN_STATES, type WorkflowRunStatus } from '@agent-platform/contracts';
import type { ApiDeps } from '../deps.ts';

/** How often the run is re-read when no change notification came (a lost one only delays). */
const FALLBACK_READ_MS = 1_000;

/**
 * The run once it is terminal, or as it is when `timeoutMs` passes or `signal` aborts. Any api
 * node can wait, whichever agent worker runs the steps: workers notify `workflows.runs.<id>` when
 * they change the run (as for GET /runs/{id}/events), and the run is re-read on each notification
 * and every second anyway, so the answer is always the stored run.
 */
export async function waitForRunEnd(
  deps: Pick<ApiDeps, 'bus' | 'workflows'>,
  runId: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<WorkflowRunStatus> {
  const deadline = Date.now() + timeoutMs;
  let changed: boolean;
  let wake: (() => void) | null = null;
  const poke = (): void => {
    changed = true;
    wake?.();
  };
  // Listening before the first read: no change can slip between the two.
  const subscription = await deps.bus.listen(Subjects.workflowRunChanged(runId), poke);
  signal.addEventListener('abort', poke);
  try {
    for (;;) {
      changed = false;
      const run = await deps.workflows.run(runId);
      const left = deadline - Date.now();
      if (TERMINAL_RUN_STATES.has(run.state) || left <= 0 || signal.aborted) return run;
      if (!changed) await pause(Math.min(left, FALLBACK_READ_MS), (resume) => (wake = resume));
      wake = null;
    }
  } finally {
    signal.removeEventListener('abort', poke);
    await subscription.drain();
  }
}

/** Resolves after `ms`, or earlier when the function handed to `onWake` is called. */
function pause(ms: number, onWake: (resume: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    onWake(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
