import type { Store } from '@agent-platform/store';
import { usageEventsLog } from '../invocation/usage-events.ts';
import type { ClassSweep, SweepContext } from './sweep-context.ts';

/**
 * Usage events older than the cutoff leave the `usage_events` log, oldest first, one batch per
 * store write, except those a legal hold covers (kept in place: `dropBefore` skips their seqs).
 *
 * Never an event of the current licence period: GET /usage sums the events of that period, so the
 * cutoff is moved back to the period's start when it would fall inside it. GET /usage/summary and
 * the licence counters are running totals in the store's counters, which retention never touches:
 * they do not change when old events go (docs/retention.md "Usage").
 */
export async function sweepUsage(
  store: Store,
  ctx: SweepContext,
  cutoff: string,
  periodStart: string | null,
  result: ClassSweep,
): Promise<void> {
  const bound = periodStart !== null && periodStart < cutoff ? periodStart : cutoff;
  result.cutoff = bound;
  const log = usageEventsLog(store);
  let next = 1;
  for (;;) {
    const batch = await log.scan(next, ctx.batchSize);
    const firstKept = batch.findIndex((e) => !(e.at < bound));
    const expired = firstKept === -1 ? batch : batch.slice(0, firstKept);
    const first = expired[0];
    const last = expired.at(-1);
    if (first === undefined || last === undefined) return;
    // Holds are read again for each batch: a hold placed during the sweep keeps its events.
    const { keep, removed } = await ctx.deleteBatch(async (holds) => {
      const kept = expired.filter((e) => holds.coversUsage(e)).map((e) => e.seq);
      return { keep: kept, removed: await log.dropBefore(last.seq + 1, { fromSeq: first.seq, keep: kept }) };
    });
    result.held += keep.length;
    result.deleted += removed;
    ctx.progress(
      { class: 'usage', removed, held: keep.length, through_seq: last.seq },
      'retention: usage events removed',
    );
    if (firstKept !== -1 || batch.length < ctx.batchSize) return;
    next = last.seq + 1;
  }
}
