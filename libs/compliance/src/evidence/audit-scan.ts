import type { IntegrityAnchor } from '@agent-platform/contracts';
import type { AuditDisabledReport, StoredAuditEntry, VerifyReport } from '@agent-platform/domain';
import type { AppendLog } from '@agent-platform/store';
import type { AuditTap, ScannedEntry } from './evidence-kind.ts';

/** Entries read per `scan` call: a trail of any length is read in bounded memory. */
const BATCH = 1000;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The verify result as the report carries it: only what depends on the log state (not how much
 * this walk re-hashed), so two reports of an unchanged trail carry the same anchor.
 */
export function integrityAnchor(report: VerifyReport | AuditDisabledReport): IntegrityAnchor {
  if (report.valid === null) {
    return {
      valid: null,
      entry_count: 0,
      chain_anchor: null,
      tip_hash: null,
      algorithm: null,
      walk: 'full',
      first_invalid_seq: null,
      reason: report.reason,
      checkpoint_status: 'disabled',
      checkpoint: null,
    };
  }
  const cp = report.checkpoint ?? null;
  return {
    valid: report.valid,
    entry_count: report.entry_count,
    chain_anchor: report.chain_anchor,
    tip_hash: report.tip_hash,
    algorithm: report.algorithm,
    walk: 'full',
    first_invalid_seq: report.first_invalid_seq ?? null,
    reason: report.valid
      ? null
      : (report.reason ?? report.first_invalid_reason ?? 'the chain does not verify'),
    checkpoint_status: report.checkpoint_status ?? 'not_configured',
    checkpoint:
      cp === null
        ? null
        : {
            at: cp.at,
            entry_count: cp.entry_count,
            tip_seq: cp.tip_seq,
            tip_hash: cp.tip_hash,
            key_id: cp.key_id,
            sink: cp.sink,
            signature_valid: cp.signature_valid,
          },
  };
}

/** The oldest entry the trail holds, or null for an empty trail. */
export async function oldestEntry(log: AppendLog<StoredAuditEntry>): Promise<ScannedEntry | null> {
  const [first] = await log.scan(1, 1);
  return first ?? null;
}

/**
 * One pass over the trail, oldest first, up to `lastSeq` (the entry count the verify walk saw,
 * so entries appended while the report is built do not make it into one half of it), feeding
 * each tap the entries at or after its `since`. Starts at the first entry the earliest tap
 * wants, found through the timestamp index: a report over the last 90 days of a long trail
 * does not read the years before them.
 */
export async function scanAudit(
  log: AppendLog<StoredAuditEntry>,
  lastSeq: number,
  taps: readonly AuditTap[],
): Promise<void> {
  if (taps.length === 0 || lastSeq < 1) return;
  const earliest = taps.some((t) => t.since === null) ? null : taps.map((t) => t.since as string).sort()[0]!;
  let next = 1;
  if (earliest !== null) {
    const [first] = await log.list({
      since: { field: 'timestamp', value: earliest },
      order: 'asc',
      limit: 1,
    });
    if (first === undefined) return;
    next = first.seq;
  }
  while (next <= lastSeq) {
    const batch = await log.scan(next, BATCH);
    for (const entry of batch) {
      if (entry.seq > lastSeq) return;
      for (const tap of taps) if (tap.since === null || entry.timestamp >= tap.since) tap.see(entry);
      next = entry.seq + 1;
    }
    if (batch.length < BATCH) return;
    await yieldToEventLoop();
  }
}
