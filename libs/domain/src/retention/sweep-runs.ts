import type { RunState } from '@agent-platform/contracts';
import type { Store } from '@agent-platform/store';
import { workflowRuns } from '../workflows/run-record.ts';
import type { ClassSweep, SweepContext } from './sweep-context.ts';

/** Only terminal runs ever expire: never a Running or Suspended one, however old. */
const TERMINAL: readonly RunState[] = ['Completed', 'Failed', 'Escalated'];

/**
 * Terminal workflow runs whose `completed_at` is older than the cutoff are deleted, oldest first
 * (state and completed_at are indexed), once their terminal bookkeeping is done (`finalized`:
 * licence settled, value event recorded), a page at a time. A run a legal hold covers stays: the
 * holds are those `deleteBatch` hands each page (read again when one was placed meanwhile). Each
 * delete carries the version read, so a run that changed meanwhile is left for the next sweep.
 */
export async function sweepRuns(
  store: Store,
  ctx: SweepContext,
  cutoff: string,
  result: ClassSweep,
): Promise<void> {
  const runs = workflowRuns(store);
  for (const state of TERMINAL) {
    let skip = 0;
    for (let done = false; !done;) {
      const page = await runs.find({
        where: { state },
        orderBy: { field: 'completed_at', direction: 'asc' },
        limit: ctx.batchSize,
        offset: skip,
      });
      const expired: typeof page = [];
      for (const run of page) {
        const { completed_at: completedAt, finalized } = run.doc;
        if (completedAt !== null && completedAt >= cutoff) {
          done = true;
          break;
        }
        if (completedAt === null || !finalized) skip += 1;
        else expired.push(run);
      }
      // Holds are read again for each batch: a hold placed during the sweep keeps its runs.
      if (expired.length > 0)
        await ctx.deleteBatch(async (holds) => {
          for (const { doc, version } of expired) {
            if (holds.coversRun(doc)) {
              result.held += 1;
              skip += 1;
            } else if (await runs.delete(doc.id, version).catch(() => false)) result.deleted += 1;
            else skip += 1;
          }
        });
      if (page.length < ctx.batchSize) done = true;
      ctx.progress(
        { class: 'runs', state, deleted: result.deleted, held: result.held },
        'retention: runs removed',
      );
    }
  }
}
