import type { Store } from '@agent-platform/store';
import { transcriptsCollection, type TranscriptRecord } from '../agents/create-session-store.ts';
import { contentRefs, TurnContents } from '../agents/session-contents.ts';
import type { ClassSweep, SweepContext } from './sweep-context.ts';

/**
 * Transcript turns older than the cutoff are removed, per (agent, channel, conversation)
 * transcript; a transcript left with no turn is deleted. Transcripts are read oldest turn first
 * through the `oldest_turn_at` index (records written before it existed sort first and get it
 * set on the way). A transcript a legal hold covers keeps every turn; `deleted` counts turns.
 */
export async function sweepTranscripts(
  store: Store,
  ctx: SweepContext,
  cutoff: string,
  result: ClassSweep,
): Promise<void> {
  const transcripts = transcriptsCollection(store);
  const contents = new TurnContents(store);
  // Held or contended transcripts stay at the front of the order: page past them.
  let skip = 0;
  const seen = new Set<string>();
  for (;;) {
    const page = await transcripts.find({
      orderBy: { field: 'oldest_turn_at', direction: 'asc' },
      limit: ctx.batchSize,
      offset: skip,
    });
    if (page.length === 0) return;
    let reachedRecent = false;
    // Holds are read again for each page: a hold placed during the sweep keeps its transcripts.
    await ctx.deleteBatch(async (holds) => {
      for (const { doc } of page) {
        const oldest = doc.oldest_turn_at ?? doc.turns[0]?.at;
        if (doc.oldest_turn_at !== undefined && oldest !== undefined && oldest >= cutoff) {
          reachedRecent = true;
          return;
        }
        const expired = doc.turns.filter((t) => t.at < cutoff).length;
        if (seen.has(doc.id) || (expired > 0 && holds.coversTranscript({ ...doc, turns: await contents.resolve(doc.turns) }))) {
          if (!seen.has(doc.id)) result.held += expired;
          seen.add(doc.id);
          skip += 1;
          continue;
        }
        seen.add(doc.id);
        const removed = await trim(transcripts, contents, doc.id, cutoff);
        if (removed === null) skip += 1;
        else result.deleted += removed;
      }
    });
    if (reachedRecent) return;
    ctx.progress(
      { class: 'transcripts', deleted: result.deleted, held: result.held },
      'retention: transcript turns removed',
    );
  }
}

type Transcripts = ReturnType<typeof transcriptsCollection>;

/**
 * Drops the expired turns of one transcript (deletes it when none is left) and the contents of the
 * long ones; null when a concurrent write got in the way.
 */
async function trim(transcripts: Transcripts, contents: TurnContents, id: string, cutoff: string): Promise<number | null> {
  let removed = 0;
  let emptied = false;
  let dropped: string[] = [];
  const after = await transcripts.update(id, (current) => {
    if (current === null) return null;
    const kept = current.doc.turns.filter((t) => t.at >= cutoff);
    removed = current.doc.turns.length - kept.length;
    dropped = contentRefs(current.doc.turns.filter((t) => t.at < cutoff));
    emptied = kept.length === 0;
    // An emptied transcript is deleted below, with a version check, rather than stored empty.
    if (emptied) return null;
    const oldest = kept[0]!.at;
    if (removed === 0 && current.doc.oldest_turn_at === oldest) return null;
    const next: TranscriptRecord = { ...current.doc, turns: kept, oldest_turn_at: oldest };
    return next;
  });
  if (after === null) return 0;
  if (!emptied) {
    await contents.forget(dropped);
    return removed;
  }
  // A message appended since the read makes the version differ: leave it for the next sweep.
  const deleted = await transcripts.delete(id, after.version).catch(() => false);
  if (deleted) await contents.forget(dropped);
  return deleted ? removed : null;
}
