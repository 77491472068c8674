import type { Store } from '@agent-platform/store';
import type { AuditArchive, ArchiveManifest } from '../audit/audit-archive.ts';
import type { StoredAuditEntry } from '../audit/audit-chain.ts';
import { CHAIN_ANCHOR } from '../audit/audit-hash.ts';
import { exportRange } from '../audit/audit-segment.ts';
import type { ClassSweep, SweepContext } from './sweep-context.ts';

/** Collection `retention_state`: the sweep lock, the last sweep's report, a segment being archived. */
export const RETENTION_STATE_COLLECTION = 'retention_state';
export const PENDING_SEGMENT_ID = 'audit-pending-segment';

/** Counting the expired entries a hold keeps live stops here (the report says "at least"). */
const HELD_COUNT_CAP = 100_000;

export interface PendingSegment {
  id: string;
  from_seq: number;
  to_seq: number;
  started_at: string;
}

export interface AuditSweepDeps {
  store: Store;
  archive: AuditArchive;
  /** Writes a signed checkpoint of the chain as it is now (the sink's `latest.json`). */
  writeCheckpoint: () => Promise<unknown>;
  /** `[retention] audit_segment_entries`. */
  segmentEntries: number;
}

/**
 * Archives expired audit entries to the checkpoint sink, then removes them from the live store
 * (docs/retention.md "The audit archive"). The chain cannot lose entries in its middle, so only a
 * prefix goes: the sweep stops before the first entry that is not expired, that a legal hold
 * covers, or that is the newest. For each segment, in this order:
 *
 * 1. its seq range is recorded in the store (`retention_state`, `audit-pending-segment`), so a
 *    sweep killed from here on archives exactly the same range again (never a second object);
 * 2. the segment and a signed checkpoint at its last entry are written, read back and verified,
 *    then the manifest listing it (`AuditArchive.archive`); any failure stops here;
 * 3. a fresh checkpoint of the whole chain becomes `latest.json`, so the checkpoint verify checks
 *    is of an entry that stays live;
 * 4. only then are the archived entries deleted, a batch per store write.
 *
 * A kill anywhere leaves each entry either live or archived-and-verified: the next sweep reads the
 * manifest, finishes a deletion it finds half done (the live copies of archived entries), resumes
 * the pending range, and goes on.
 */
export async function sweepAudit(
  deps: AuditSweepDeps,
  ctx: SweepContext,
  cutoff: string,
  result: ClassSweep,
): Promise<void> {
  const log = deps.store.log<StoredAuditEntry>('audit', { indexes: ['category', 'identity', 'timestamp'] });
  const state = deps.store.collection<PendingSegment>(RETENTION_STATE_COLLECTION);
  result.archived_segments = 0;
  result.archived_to_seq = null;
  result.held_from_seq = null;

  const archived = await deps.archive.state();
  if (archived.status === 'failed') throw new Error(archived.reason);
  let manifest: ArchiveManifest | null = archived.status === 'ok' ? archived.manifest : null;
  let archivedTo = archived.status === 'ok' ? archived.last.to_seq : 0;
  let lastHash = archived.status === 'ok' ? archived.last.last_hash : CHAIN_ANCHOR;
  result.archived_to_seq = archivedTo === 0 ? null : archivedTo;

  // A sweep killed while deleting left live copies of archived entries: finish that first.
  const heldLive = await dropArchived();
  if (heldLive !== null) return stopAtHold(heldLive);

  for (;;) {
    const pending = (await state.get(PENDING_SEGMENT_ID))?.doc ?? null;
    let range: { from: number; to: number } | null =
      pending !== null && pending.from_seq === archivedTo + 1
        ? { from: pending.from_seq, to: pending.to_seq }
        : null;
    let heldFrom: number | null = null;
    if (range === null) {
      const next = await nextRange(archivedTo + 1);
      heldFrom = next.heldFrom;
      if (next.to === null) {
        result.held_from_seq = heldFrom;
        if (heldFrom !== null) result.held = await countHeld(heldFrom);
        return;
      }
      range = { from: archivedTo + 1, to: next.to };
      await ctx.stillHolder();
      await state.upsert({
        id: PENDING_SEGMENT_ID,
        from_seq: range.from,
        to_seq: range.to,
        started_at: ctx.now.toISOString(),
      });
    } else {
      ctx.log(
        { class: 'audit', from_seq: range.from, to_seq: range.to },
        'retention: resuming the audit segment an earlier sweep started',
      );
    }

    const segment = await exportRange(log, range.from, range.to, lastHash);
    const expected = range.to - range.from + 1;
    if (segment.entries.length !== expected || segment.entries[0]?.prev_hash !== lastHash) {
      throw new Error(
        `the live audit chain does not continue the archive at seq ${range.from} (expected ${expected} entries linked to the archived seq ${archivedTo}); nothing archived or deleted: run GET /security/verify`,
      );
    }
    if (
      pending !== null &&
      segment.entries.some((e) => ctx.holds.coversAudit(e) || !(e.timestamp < cutoff))
    ) {
      // A hold placed (or a period raised) since the killed sweep chose this range: choose again.
      // An object it may have written stays in the sink, outside the manifest.
      ctx.log(
        { class: 'audit', from_seq: range.from, to_seq: range.to },
        'retention: the pending audit segment is now held or not expired; choosing the range again',
      );
      await state.delete(PENDING_SEGMENT_ID);
      continue;
    }
    await ctx.stillHolder();
    manifest = await deps.archive.archive(segment, manifest, ctx.now.toISOString());
    const last = segment.entries.at(-1)!;
    archivedTo = last.seq;
    lastHash = last.hash;
    result.archived_segments += 1;
    result.archived_to_seq = archivedTo;
    ctx.log(
      { class: 'audit', from_seq: range.from, to_seq: range.to, sink: deps.archive.describe },
      'retention: audit segment archived and verified',
    );
    await ctx.stillHolder();
    await deps.writeCheckpoint();
    await state.delete(PENDING_SEGMENT_ID);
    const heldArchived = await dropArchived();
    if (heldArchived !== null) return stopAtHold(heldArchived);
    if (heldFrom !== null) {
      result.held_from_seq = heldFrom;
      result.held = await countHeld(heldFrom);
      return;
    }
  }

  /**
   * Deletes the live entries up to `archivedTo`, a batch per write (counted as they go), after
   * checking the live copy of its last one. Each batch is filtered by the holds `deleteBatch`
   * hands it: a hold placed since the segment was chosen stops the deletion before the first
   * entry it covers, which stays live with every later one (archived too, so verify still holds).
   * Resolves to that entry's seq, or null when everything archived left the live store.
   */
  async function dropArchived(): Promise<number | null> {
    const [first] = await log.scan(1, 1);
    if (first === undefined || first.seq > archivedTo) return null;
    const [atBoundary] = await log.scan(archivedTo, 1);
    if (atBoundary?.seq === archivedTo && atBoundary.hash !== lastHash) {
      throw new Error(
        `live audit entry ${archivedTo} differs from the archived one; nothing deleted: run GET /security/verify`,
      );
    }
    for (let from = first.seq; from <= archivedTo; from += ctx.batchSize) {
      const end = Math.min(from + ctx.batchSize, archivedTo + 1);
      const heldAt = await ctx.deleteBatch(async (holds) => {
        const held = holds.empty
          ? undefined
          : (await log.scan(from, end - from)).find((e) => e.seq < end && holds.coversAudit(e));
        const before = held?.seq ?? end;
        if (before > from) result.deleted += await log.dropBefore(before, { fromSeq: from });
        return held?.seq ?? null;
      });
      ctx.progress(
        { class: 'audit', deleted_through_seq: (heldAt ?? end) - 1 },
        'retention: archived audit entries removed from the live store',
      );
      if (heldAt !== null) return heldAt;
    }
    return null;
  }

  /**
   * The last seq of the next segment from `from`: consecutive expired entries, at most a
   * segment's worth, never the newest entry, stopping before one a hold covers (`heldFrom`).
   */
  async function nextRange(from: number): Promise<{ to: number | null; heldFrom: number | null }> {
    const tip = await log.tip();
    if (tip === null) return { to: null, heldFrom: null };
    let to: number | null = null;
    let expectedSeq = from;
    while (expectedSeq - from < deps.segmentEntries) {
      const batch = await log.scan(
        expectedSeq,
        Math.min(ctx.batchSize, deps.segmentEntries - (expectedSeq - from)),
      );
      for (const entry of batch) {
        // A gap (entries missing from the live chain) is never archived across: verify reports it.
        if (entry.seq !== expectedSeq || entry.seq >= tip.seq || !(String(entry.timestamp) < cutoff))
          return { to, heldFrom: null };
        if (ctx.holds.coversAudit(entry)) return { to, heldFrom: entry.seq };
        to = entry.seq;
        expectedSeq += 1;
      }
      if (batch.length === 0) break;
    }
    return { to, heldFrom: null };
  }

  /** The sweep stops at `seq`: an archived entry still live that a hold (placed after it was archived) covers. */
  async function stopAtHold(seq: number): Promise<void> {
    ctx.log(
      { class: 'audit', held_from_seq: seq },
      'retention: a hold covers an archived audit entry still live; it and every later entry stay live',
    );
    result.held_from_seq = seq;
    result.held = await countHeld(seq);
  }

  /** Expired entries from `from` on (capped): what the hold keeps live. */
  async function countHeld(from: number): Promise<number> {
    let n = 0;
    for (let next = from; n < HELD_COUNT_CAP;) {
      const batch = await log.scan(next, ctx.batchSize);
      const expired = batch.filter((e) => String(e.timestamp) < cutoff);
      n += expired.length;
      if (expired.length < batch.length || batch.length < ctx.batchSize) break;
      next = batch.at(-1)!.seq + 1;
    }
    return n;
  }
}
