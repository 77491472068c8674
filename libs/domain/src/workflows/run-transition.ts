import type { Collection } from '@agent-platform/store';
import { checkAt } from './planner/run-planner.ts';
import type { WorkflowRunRecord } from './run-record.ts';

/**
 * One versioned write of a run (run-record.ts): `change` edits a private copy of the stored
 * document and returns what the caller needs to act on afterwards (entries to publish, ...), or
 * null to write nothing. Concurrent writers of one run (FanOut members finishing together, a
 * cancel, a sweeper) are serialized by the store's `update`, which may call `change` again on the
 * newer document, so `change` must be a pure function of its draft. `updated_at` and `check_at`
 * are kept true here, once for every writer.
 */
export async function transitionRun<T>(
  runs: Collection<WorkflowRunRecord>,
  id: string,
  options: { now: () => Date; redispatchAfterMs: number },
  change: (draft: WorkflowRunRecord) => T | null,
): Promise<{ run: WorkflowRunRecord; result: T } | null> {
  let result: T | null = null;
  const stored = await runs.update(id, (current) => {
    result = null;
    if (current === null) return null;
    const draft = structuredClone(current.doc);
    const outcome = change(draft);
    if (outcome === null) return null;
    result = outcome;
    draft.updated_at = options.now().toISOString();
    draft.check_at = checkAt(draft, options.redispatchAfterMs);
    return draft;
  });
  if (stored === null || result === null) return null;
  return { run: stored.doc, result };
}
